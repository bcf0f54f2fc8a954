// WatchPrices in chunks, on real port-0 servers over the real billing data
// and a generated set of offers: the chunks are bounded and reassemble into
// the writer's book, a PriceFollower takes the same book (same version) in
// chunks and follows an update, an old follower still gets the whole book
// (or a clear error once it is too large for one message), a stream cut,
// reordered or corrupted mid-book never replaces the book being served, and
// re-dialling backs off until a book arrives.

#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/grpc/channel.h"
#include "common/grpc/server.h"
#include "common/grpc/watch_chunks.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "services/pricing/price_follower.h"
#include "services/pricing/price_loader.h"
#include "services/pricing/pricing_service_impl.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/watch_messages.h"

namespace gpuadvisor::pricing {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kChunkBytes = 16 << 10;  // small, so a test book needs many chunks

// `n` offers of one instance type in `n` regions, priced `factor` times a base.
catalog::v1::CatalogSnapshot Offers(int n, double factor, const std::string& version) {
  catalog::v1::CatalogSnapshot snapshot;
  snapshot.set_version(version);
  for (int i = 0; i < n; ++i) {
    catalog::v1::Offer* offer = snapshot.add_offers();
    offer->set_id(absl::StrCat("aws/p5.48xlarge/region-", i));
    offer->set_provider("aws");
    offer->set_instance_type("p5.48xlarge");
    offer->set_region(absl::StrCat("region-", i));
    offer->set_gpu_model("H100-SXM");
    offer->set_gpus_per_node(8);
    offer->set_on_demand_usd_per_hour((40.0 + i % 17) * factor);
    offer->set_spot_usd_per_hour((15.0 + i % 13) * factor);
  }
  return snapshot;
}

std::shared_ptr<const PriceBook> Book(int n, double factor, const std::string& catalog_version) {
  absl::StatusOr<std::shared_ptr<const PriceBook>> book =
      LoadPriceBook(absl::StrCat(GPUADVISOR_SOURCE_DIR, "/data/pricing/billing.textproto"),
                    Offers(n, factor, catalog_version));
  EXPECT_OK(book);
  return book.ok() ? *book : nullptr;
}

std::unique_ptr<v1::PricingService::Stub> StubFor(int port) {
  return v1::PricingService::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
}

// A pricing writer serving `book` on 127.0.0.1:0.
struct PricingWriter {
  PricingWriter(std::shared_ptr<const PriceBook> book, ChunkEncoding encoding) {
    store.Set(std::move(book));
    PricingServiceImpl::Options options;
    options.admin_token = "secret";
    options.watch_encoding = encoding;
    service = std::make_unique<PricingServiceImpl>(&store, &metrics, options);
    absl::StatusOr<StartedServer> started = StartServer(ServerOptions(), {service.get()});
    EXPECT_OK(started);
    server = std::move(started->server);
    port = started->port;
  }
  ~PricingWriter() {
    service->Shutdown();
    ShutdownServer(*server, 1);
  }
  const v1::PriceBook& book() const { return store.Current()->data(); }

  Metrics metrics{"pricing"};
  PriceStore store;
  std::unique_ptr<PricingServiceImpl> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

std::vector<v1::WatchPricesResponse> Decode(const std::vector<grpc::ByteBuffer>& buffers) {
  return ::gpuadvisor::testing::DecodeMessages<v1::WatchPricesResponse>(buffers);
}

TEST(PriceChunks, ChunkedWatchReassemblesTheWritersBook) {
  PricingWriter writer(Book(3000, 1.0, "cat-1"), {.chunk_bytes = kChunkBytes});
  const std::string served = writer.book().SerializeAsString();
  ASSERT_GT(served.size(), 5u * kChunkBytes);  // several chunks needed

  auto stub = StubFor(writer.port);
  grpc::ClientContext context;
  v1::WatchPricesRequest request;
  request.set_accept_chunks(true);
  auto reader = stub->WatchPrices(&context, request);
  SnapshotAssembler<v1::PriceBook> assembler;
  int chunks = 0;
  v1::WatchPricesResponse message;
  while (!assembler.complete() && reader->Read(&message)) {
    ASSERT_FALSE(message.has_price_book());
    ASSERT_TRUE(message.has_chunk());
    EXPECT_LE(static_cast<int64_t>(message.chunk().data().size()), kChunkBytes);
    EXPECT_EQ(message.chunk().version(), writer.book().version());
    ++chunks;
    ASSERT_OK(assembler.Add(message.chunk()));
  }
  EXPECT_EQ(chunks, static_cast<int>((served.size() + kChunkBytes - 1) / kChunkBytes));
  std::string bytes;
  absl::StatusOr<v1::PriceBook> book = assembler.Take(&bytes);
  ASSERT_OK(book);
  EXPECT_EQ(bytes, served);
  EXPECT_EQ(book->version(), writer.book().version());
  context.TryCancel();
  reader->Finish();
}

// The follower (gateway, pricing followers) takes the book in chunks, with
// the writer's version, and follows an update.
TEST(PriceChunks, FollowerTakesTheSameBookInChunksAndFollowsAnUpdate) {
  PricingWriter writer(Book(3000, 1.0, "cat-1"), {.chunk_bytes = kChunkBytes});
  PriceStore copy;
  PriceFollower follower(StubFor(writer.port), &copy, {.name = "test follower"});
  follower.Start();
  const std::string first = writer.book().version();
  ASSERT_TRUE(follower.WaitForVersion(first, absl::Now() + absl::Seconds(30)));
  EXPECT_EQ(copy.Current()->data().SerializeAsString(), writer.book().SerializeAsString());
  EXPECT_EQ(copy.Current()->data().catalog_version(), "cat-1");

  // A price update on the writer: a new book version, chunked too.
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer secret");
  v1::UpdatePricesRequest update;
  v1::OfferPrice* price = update.add_prices();
  price->set_offer_id("aws/p5.48xlarge/region-7");
  price->set_provider("aws");
  price->set_gpu_model("H100-SXM");
  price->set_on_demand_usd_per_hour(44.5);
  v1::UpdatePricesResponse updated;
  ASSERT_TRUE(StubFor(writer.port)->UpdatePrices(&context, update, &updated).ok());
  ASSERT_NE(updated.price_book_version(), first);
  ASSERT_TRUE(
      follower.WaitForVersion(updated.price_book_version(), absl::Now() + absl::Seconds(30)));
  EXPECT_EQ(copy.Current()->data().SerializeAsString(), writer.book().SerializeAsString());
  EXPECT_EQ(follower.retry_delay(), absl::Seconds(1));  // never backed off
  follower.Stop();
}

TEST(PriceChunks, AFollowerThatDidNotAskForChunksGetsTheWholeBook) {
  PricingWriter writer(Book(3000, 1.0, "cat-1"), {.chunk_bytes = kChunkBytes});
  auto stub = StubFor(writer.port);
  grpc::ClientContext context;
  auto reader = stub->WatchPrices(&context, v1::WatchPricesRequest());
  v1::WatchPricesResponse first;
  ASSERT_TRUE(reader->Read(&first));
  EXPECT_FALSE(first.has_chunk());
  ASSERT_TRUE(first.has_price_book());
  EXPECT_EQ(first.price_book().SerializeAsString(), writer.book().SerializeAsString());
  context.TryCancel();
  reader->Finish();
}

// A book over the message limit: an old follower is told why and what to do;
// a chunked follower on the same writer gets it.
TEST(PriceChunks, ABookTooLargeForOneMessageIsAClearErrorForAnOldFollower) {
  PricingWriter writer(Book(3000, 1.0, "cat-1"),
                       {.chunk_bytes = kChunkBytes, .max_message_bytes = 4 * kChunkBytes});
  auto stub = StubFor(writer.port);
  grpc::ClientContext context;
  auto reader = stub->WatchPrices(&context, v1::WatchPricesRequest());
  v1::WatchPricesResponse unused;
  EXPECT_FALSE(reader->Read(&unused));
  const grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("WatchPricesRequest.accept_chunks"));
  EXPECT_THAT(status.error_message(), HasSubstr(writer.book().version()));

  PriceStore copy;
  PriceFollower follower(StubFor(writer.port), &copy, {});
  follower.Start();
  ASSERT_TRUE(follower.WaitForVersion(writer.book().version(), absl::Now() + absl::Seconds(30)));
  EXPECT_EQ(copy.Current()->data().SerializeAsString(), writer.book().SerializeAsString());
}

// A writer that sends the first book in chunks, then, on every later call
// (with the old version known), the chunks of a new book cut short,
// reordered or with one byte flipped.
class BreakingWriter final : public v1::PricingService::Service {
 public:
  enum class Fault { kCut, kOutOfOrder, kCorrupt };
  BreakingWriter(const v1::PriceBook& old_book, const v1::PriceBook& new_book, Fault fault)
      : old_chunks_(Decode(EncodePriceBook(old_book, {.chunk_bytes = kChunkBytes})->chunks)),
        new_chunks_(Decode(EncodePriceBook(new_book, {.chunk_bytes = kChunkBytes})->chunks)),
        fault_(fault) {}

  grpc::Status WatchPrices(grpc::ServerContext*, const v1::WatchPricesRequest* request,
                           grpc::ServerWriter<v1::WatchPricesResponse>* writer) override {
    EXPECT_TRUE(request->accept_chunks());
    if (request->known_version().empty()) {
      for (const v1::WatchPricesResponse& chunk : old_chunks_) writer->Write(chunk);
      // Then end the stream, so the follower calls again with the old version.
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting");
    }
    switch (fault_) {
      case Fault::kCut:
        for (size_t i = 0; i < new_chunks_.size() / 2; ++i) writer->Write(new_chunks_[i]);
        break;
      case Fault::kOutOfOrder:
        writer->Write(new_chunks_[0]);
        writer->Write(new_chunks_[2]);  // chunk 1 lost
        writer->Write(new_chunks_[1]);
        for (size_t i = 3; i < new_chunks_.size(); ++i) writer->Write(new_chunks_[i]);
        break;
      case Fault::kCorrupt:
        for (size_t i = 0; i < new_chunks_.size(); ++i) {
          v1::WatchPricesResponse chunk = new_chunks_[i];
          if (i == 2) (*chunk.mutable_chunk()->mutable_data())[100] ^= 0x20;
          writer->Write(chunk);
        }
        break;
    }
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection reset mid-book");
  }

  size_t new_chunk_count() const { return new_chunks_.size(); }

 private:
  const std::vector<v1::WatchPricesResponse> old_chunks_;
  const std::vector<v1::WatchPricesResponse> new_chunks_;
  const Fault fault_;
};

void ExpectABrokenBookKeepsTheOldOne(BreakingWriter::Fault fault, const std::string& reason) {
  const std::shared_ptr<const PriceBook> old_book = Book(3000, 1.0, "cat-1");
  const std::shared_ptr<const PriceBook> new_book = Book(3500, 1.1, "cat-2");
  BreakingWriter breaking(old_book->data(), new_book->data(), fault);
  ASSERT_GT(breaking.new_chunk_count(), 4u);
  absl::StatusOr<StartedServer> server = StartServer(ServerOptions(), {&breaking});
  ASSERT_OK(server);

  absl::Mutex mu;
  std::vector<std::string> rejected;
  PriceFollower::Options options;
  options.retry_interval = absl::Milliseconds(10);
  options.max_retry_interval = absl::Milliseconds(80);
  options.on_rejected = [&](const absl::Status& status) {
    absl::MutexLock lock(&mu);
    rejected.push_back(std::string(status.message()));
  };
  PriceStore copy;
  PriceFollower follower(StubFor(server->port), &copy, options);
  follower.Start();
  ASSERT_TRUE(follower.WaitForVersion(old_book->version(), absl::Now() + absl::Seconds(30)));
  {
    // Several broken attempts at the new book.
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](std::vector<std::string>* r) { return r->size() >= 4; }, &rejected));
  }
  // Every attempt failed: the re-dials backed off to the cap.
  EXPECT_EQ(follower.retry_delay(), options.max_retry_interval);
  follower.Stop();
  {
    absl::MutexLock lock(&mu);
    ASSERT_FALSE(rejected.empty());
    for (const std::string& message : rejected) {
      EXPECT_THAT(message, HasSubstr(reason));
      EXPECT_THAT(message, HasSubstr(absl::StrCat("keeping version ", old_book->version())));
    }
  }
  // Still the old book, whole.
  EXPECT_EQ(copy.Current()->data().SerializeAsString(), old_book->data().SerializeAsString());
  ShutdownServer(*server->server, 1);
}

TEST(PriceChunks, AStreamCutMidBookKeepsTheServingBook) {
  ExpectABrokenBookKeepsTheOldOne(BreakingWriter::Fault::kCut, "watch stream ended after");
}

TEST(PriceChunks, ChunksOutOfOrderKeepTheServingBook) {
  ExpectABrokenBookKeepsTheOldOne(BreakingWriter::Fault::kOutOfOrder, "a chunk lost or repeated");
}

TEST(PriceChunks, ACorruptChunkKeepsTheServingBook) {
  ExpectABrokenBookKeepsTheOldOne(BreakingWriter::Fault::kCorrupt, "checksum mismatch");
}

// A writer that refuses the first `refusals` watches, then sends its book
// whole and heartbeats until the follower leaves.
class SlowToStartWriter final : public v1::PricingService::Service {
 public:
  SlowToStartWriter(const v1::PriceBook& book, int refusals) : book_(book), refusals_(refusals) {}

  grpc::Status WatchPrices(grpc::ServerContext* context, const v1::WatchPricesRequest*,
                           grpc::ServerWriter<v1::WatchPricesResponse>* writer) override {
    if (calls_.fetch_add(1) < refusals_)
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "not yet");
    v1::WatchPricesResponse whole;
    *whole.mutable_price_book() = book_;
    writer->Write(whole);
    while (!context->IsCancelled()) {
      v1::WatchPricesResponse heartbeat;
      heartbeat.set_heartbeat_unix_millis(absl::ToUnixMillis(absl::Now()));
      if (!writer->Write(heartbeat)) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return grpc::Status::OK;
  }

  int calls() const { return calls_.load(); }

 private:
  const v1::PriceBook book_;
  const int refusals_;
  std::atomic<int> calls_{0};
};

TEST(PriceFollowerBackoff, DoublesUpToTheCap) {
  PriceFollower::Options options;  // 1 s doubling to 30 s
  absl::Duration delay = options.retry_interval;
  std::vector<absl::Duration> delays;
  for (int i = 0; i < 8; ++i) {
    delays.push_back(delay);
    delay = PriceFollower::NextRetryDelay(delay, options);
  }
  EXPECT_THAT(delays, ::testing::ElementsAre(absl::Seconds(1), absl::Seconds(2), absl::Seconds(4),
                                             absl::Seconds(8), absl::Seconds(16), absl::Seconds(30),
                                             absl::Seconds(30), absl::Seconds(30)));
}

// Refused re-dials back off (logged under the follower's name), and the
// delay is back to the first interval once the book arrives.
TEST(PriceFollowerBackoff, ReDiallingBacksOffAndResetsOnceABookArrives) {
  const std::shared_ptr<const PriceBook> book = Book(100, 1.0, "cat-1");
  SlowToStartWriter slow(book->data(), /*refusals=*/5);
  absl::StatusOr<StartedServer> server = StartServer(ServerOptions(), {&slow});
  ASSERT_OK(server);
  PriceFollower::Options options;
  options.name = "test-gateway";
  options.retry_interval = absl::Milliseconds(10);
  options.max_retry_interval = absl::Milliseconds(40);
  options.heartbeat_interval = absl::Milliseconds(200);
  PriceStore copy;
  PriceFollower follower(StubFor(server->port), &copy, options);
  ::testing::internal::CaptureStderr();
  follower.Start();
  ASSERT_TRUE(follower.WaitForVersion(book->version(), absl::Now() + absl::Seconds(30)));
  // The backoff is reset once the book is taken, just after it is served.
  for (const absl::Time until = absl::Now() + absl::Seconds(10);
       follower.retry_delay() != options.retry_interval && absl::Now() < until;) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(follower.retry_delay(), options.retry_interval);
  follower.Stop();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_GE(slow.calls(), 6);
  // Each refusal waited longer than the one before, up to the cap.
  EXPECT_THAT(
      log,
      HasSubstr("test-gateway: watch of the pricing writer ended: not yet; reconnecting in 10ms"));
  EXPECT_THAT(log, HasSubstr("reconnecting in 20ms"));
  EXPECT_THAT(log, HasSubstr("reconnecting in 40ms"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("reconnecting in 80ms")));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("pricing follower:")));
  ShutdownServer(*server->server, 1);
}

// A follower started while the writer is not SERVING yet (pricing builds
// its first book; backend channels check health) waits for it instead of
// failing and backing off, and takes the book once the writer is ready.
TEST(PriceFollowerBackoff, AWatchWaitsForTheWriterToBeServing) {
  PricingWriter writer(Book(3000, 1.0, "cat-1"), {.chunk_bytes = kChunkBytes});  // NOT_SERVING
  std::shared_ptr<grpc::Channel> channel = BackendChannel(absl::StrCat("127.0.0.1:", writer.port));
  PriceStore copy;
  PriceFollower::Options options;
  options.name = "test-gateway";
  ::testing::internal::CaptureStderr();
  PriceFollower follower(v1::PricingService::NewStub(channel), &copy, options);
  follower.Start();
  // The channel sees the writer unhealthy: a call that did not wait would fail now.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (channel->GetState(true) != GRPC_CHANNEL_TRANSIENT_FAILURE && absl::Now() < deadline) {
    channel->WaitForStateChange(channel->GetState(false),
                                absl::ToChronoTime(absl::Now() + absl::Milliseconds(100)));
  }
  ASSERT_EQ(channel->GetState(false), GRPC_CHANNEL_TRANSIENT_FAILURE);
  // No book while the writer is not SERVING; that no call failed meanwhile is
  // checked in the log at the end (a call that did not wait would have).
  EXPECT_EQ(copy.Current(), nullptr);
  SetServing(*writer.server, {"gpuadvisor.pricing.v1.PricingService"}, true);
  ASSERT_TRUE(follower.WaitForVersion(writer.book().version(), absl::Now() + absl::Seconds(30)));
  EXPECT_EQ(follower.retry_delay(), options.retry_interval);
  follower.Stop();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, ::testing::Not(HasSubstr("watch of the pricing writer ended")));
}

}  // namespace
}  // namespace gpuadvisor::pricing
