// WatchCatalog in chunks, on real port-0 servers over a generated catalog:
// the chunks are bounded and reassemble into the served snapshot, an old
// follower still gets the whole snapshot (or a clear error once it is too
// large for one message), the replica follows chunked snapshots and keeps
// its cache, and a stream cut or scrambled mid-snapshot never replaces the
// snapshot being served.

#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc/server.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_replica.h"
#include "services/catalog/catalog_service_impl.h"
#include "services/catalog/watch_hub.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/watch_messages.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

constexpr int64_t kChunkBytes = 16 << 10;  // small, so a test catalog needs many chunks

std::string TestPath(const std::string& what) {
  return absl::StrCat(::testing::TempDir(), "/snapshot_chunks_",
                      ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".",
                      getpid(), ".", what);
}

// The embedded offers, each also sold in `copies` more regions of its
// provider (the way bench/make_catalog.py grows a catalog), as an offers file.
std::string WriteGeneratedOffers(int copies, double price_factor = 1.0) {
  v1::OfferList embedded;
  EXPECT_OK(LoadTextProtoFile(absl::StrCat(GPUADVISOR_SOURCE_DIR, "/data/catalog/offers.textproto"),
                              &embedded));
  v1::OfferList generated;
  generated.set_source(embedded.source());
  generated.set_prices_as_of(embedded.prices_as_of());
  for (int copy = 0; copy <= copies; ++copy) {
    for (const v1::Offer& offer : embedded.offers()) {
      v1::Offer* added = generated.add_offers();
      *added = offer;
      if (copy > 0) {
        added->set_id(absl::StrCat(offer.id(), "-r", copy));
        added->set_region(absl::StrCat(offer.region(), "-r", copy));
      }
      added->set_on_demand_usd_per_hour(offer.on_demand_usd_per_hour() * price_factor);
    }
  }
  std::string text;
  EXPECT_TRUE(google::protobuf::TextFormat::PrintToString(generated, &text));
  const std::string path =
      TestPath(absl::StrCat("offers.", copies, ".", price_factor, ".textproto"));
  EXPECT_OK(WriteFileAtomically(path, text));
  return path;
}

// A catalog service over a generated catalog on 127.0.0.1:0.
struct CatalogServer {
  CatalogServer(const std::string& offers_path, SnapshotEncoding encoding) {
    CatalogSources sources;
    sources.gpus_path = absl::StrCat(GPUADVISOR_SOURCE_DIR, "/data/catalog/gpus.textproto");
    sources.offer_paths = {offers_path};
    store = std::make_unique<CatalogStore>(sources);
    CatalogServiceImpl::Options options;
    options.admin_token = "secret";
    options.snapshot_encoding = encoding;
    service = std::make_unique<CatalogServiceImpl>(store.get(), &metrics, options);
    EXPECT_OK(service->Reload());
    absl::StatusOr<StartedServer> started = StartServer(ServerOptions(), {service.get()});
    EXPECT_OK(started);
    server = std::move(started->server);
    address = absl::StrCat("127.0.0.1:", started->port);
  }
  ~CatalogServer() {
    service->Shutdown();
    ShutdownServer(*server, 1);
  }
  std::unique_ptr<v1::CatalogService::Stub> Stub() const {
    return v1::CatalogService::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  const v1::CatalogSnapshot& snapshot() const { return store->Current()->snapshot(); }

  Metrics metrics{"catalog"};
  std::unique_ptr<CatalogStore> store;
  std::unique_ptr<CatalogServiceImpl> service;
  std::unique_ptr<grpc::Server> server;
  std::string address;
};

std::vector<v1::WatchCatalogResponse> Decode(const std::vector<grpc::ByteBuffer>& buffers) {
  return ::gpuadvisor::testing::DecodeMessages<v1::WatchCatalogResponse>(buffers);
}

TEST(SnapshotChunks, ChunkedWatchReassemblesTheServedSnapshot) {
  CatalogServer catalog(WriteGeneratedOffers(4), {.chunk_bytes = kChunkBytes});
  const std::string served = catalog.snapshot().SerializeAsString();
  ASSERT_GT(served.size(), 5u * kChunkBytes);  // several chunks needed

  auto stub = catalog.Stub();
  grpc::ClientContext context;
  v1::WatchCatalogRequest request;
  request.set_accept_chunks(true);
  auto reader = stub->WatchCatalog(&context, request);
  SnapshotAssembler assembler;
  int chunks = 0;
  v1::WatchCatalogResponse message;
  while (!assembler.complete() && reader->Read(&message)) {
    ASSERT_FALSE(message.has_snapshot());
    ASSERT_TRUE(message.has_chunk());
    EXPECT_LE(static_cast<int64_t>(message.chunk().data().size()), kChunkBytes);
    EXPECT_EQ(message.chunk().version(), catalog.snapshot().version());
    ++chunks;
    ASSERT_OK(assembler.Add(message.chunk()));
  }
  EXPECT_EQ(chunks, static_cast<int>((served.size() + kChunkBytes - 1) / kChunkBytes));
  std::string bytes;
  absl::StatusOr<v1::CatalogSnapshot> snapshot = assembler.Take(&bytes);
  ASSERT_OK(snapshot);
  EXPECT_EQ(bytes, served);
  EXPECT_EQ(snapshot->version(), catalog.snapshot().version());
  EXPECT_EQ(snapshot->offers_size(), catalog.snapshot().offers_size());
  EXPECT_FALSE(assembler.in_progress());
  context.TryCancel();
  reader->Finish();
}

TEST(SnapshotChunks, AFollowerThatDidNotAskForChunksGetsTheWholeSnapshot) {
  CatalogServer catalog(WriteGeneratedOffers(4), {.chunk_bytes = kChunkBytes});
  auto stub = catalog.Stub();
  grpc::ClientContext context;
  auto reader = stub->WatchCatalog(&context, v1::WatchCatalogRequest());
  v1::WatchCatalogResponse first;
  ASSERT_TRUE(reader->Read(&first));
  EXPECT_FALSE(first.has_chunk());
  EXPECT_EQ(first.snapshot().SerializeAsString(), catalog.snapshot().SerializeAsString());
  context.TryCancel();
  reader->Finish();
}

// A snapshot over the message limit: an old follower is told why and what to
// do, instead of a transport error about a message it never asked to be
// that large; a chunked follower on the same server gets it.
TEST(SnapshotChunks, ASnapshotTooLargeForOneMessageIsAClearErrorForAnOldFollower) {
  CatalogServer catalog(WriteGeneratedOffers(4),
                        {.chunk_bytes = kChunkBytes, .max_message_bytes = 4 * kChunkBytes});
  auto stub = catalog.Stub();
  grpc::ClientContext context;
  auto reader = stub->WatchCatalog(&context, v1::WatchCatalogRequest());
  v1::WatchCatalogResponse unused;
  EXPECT_FALSE(reader->Read(&unused));
  const grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("accept_chunks"));
  EXPECT_THAT(status.error_message(), HasSubstr(catalog.snapshot().version()));

  CatalogReplica replica(catalog.Stub(), CatalogReplica::Options());
  replica.Start();
  ASSERT_TRUE(replica.WaitUntilLoaded(absl::Seconds(30)));
  EXPECT_EQ(replica.Current()->snapshot().version(), catalog.snapshot().version());
  EXPECT_EQ(replica.Current()->snapshot().offers_size(), catalog.snapshot().offers_size());
}

// The replica (gateway, pricing and catalog followers) takes chunked
// snapshots, follows a reload, and writes a cache it can start from.
TEST(SnapshotChunks, ReplicaFollowsChunkedSnapshotsAndCachesThem) {
  const std::string offers = WriteGeneratedOffers(4);
  CatalogServer catalog(offers, {.chunk_bytes = kChunkBytes});
  const std::string cache = TestPath("cache");
  CatalogReplica::Options options;
  options.cache_path = cache;
  absl::Mutex mu;
  std::vector<std::string> versions;
  options.on_snapshot = [&](const std::shared_ptr<const Catalog>& latest) {
    absl::MutexLock lock(&mu);
    versions.push_back(latest->snapshot().version());
  };
  // `prepare` sees each snapshot before it is swapped in: Current() is still
  // the previous one ("" before any).
  CatalogReplica* self = nullptr;
  std::vector<std::string> prepared;  // "<new version> while serving <old>"
  options.prepare = [&](const std::shared_ptr<const Catalog>& next) {
    std::shared_ptr<const Catalog> serving = self->Current();
    absl::MutexLock lock(&mu);
    prepared.push_back(absl::StrCat(next->snapshot().version(), " while serving ",
                                    serving ? serving->snapshot().version() : ""));
  };
  CatalogReplica replica(catalog.Stub(), options);
  self = &replica;
  replica.Start();
  ASSERT_TRUE(replica.WaitUntilLoaded(absl::Seconds(30)));
  const std::string first = catalog.snapshot().version();
  EXPECT_EQ(replica.Current()->snapshot().SerializeAsString(),
            catalog.snapshot().SerializeAsString());

  // A reload with other prices reaches the replica, chunked.
  ASSERT_OK(WriteFileAtomically(offers, *ReadFile(WriteGeneratedOffers(4, 1.1))));
  ASSERT_OK(catalog.service->Reload());
  const std::string second = catalog.snapshot().version();
  ASSERT_NE(second, first);
  {
    std::pair<std::vector<std::string>*, const std::string*> arg(&versions, &second);
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](std::pair<std::vector<std::string>*, const std::string*>* a) {
          return !a->first->empty() && a->first->back() == *a->second;
        },
        &arg));
  }
  replica.Stop();
  EXPECT_EQ(replica.Current()->snapshot().version(), second);
  EXPECT_THAT(prepared, ::testing::ElementsAre(absl::StrCat(first, " while serving "),
                                               absl::StrCat(second, " while serving ", first)));

  // The cache holds the second snapshot, whole.
  absl::StatusOr<std::string> bytes = ReadFile(cache);
  ASSERT_OK(bytes);
  absl::StatusOr<v1::CatalogSnapshot> cached = CatalogReplica::DecodeCache(*bytes);
  ASSERT_OK(cached);
  EXPECT_EQ(cached->SerializeAsString(), catalog.snapshot().SerializeAsString());
}

// A catalog that sends the first snapshot whole (in chunks), then, on the
// next call, only the first half of the chunks of a new version before the
// stream breaks; or the chunks of the new version out of order.
class BreakingCatalog final : public v1::CatalogService::Service {
 public:
  enum class Fault { kCut, kOutOfOrder };
  BreakingCatalog(const v1::CatalogSnapshot& old_snapshot, const v1::CatalogSnapshot& new_snapshot,
                  Fault fault)
      : old_chunks_(Decode(EncodeSnapshot(old_snapshot, {.chunk_bytes = kChunkBytes})->chunks)),
        new_chunks_(Decode(EncodeSnapshot(new_snapshot, {.chunk_bytes = kChunkBytes})->chunks)),
        fault_(fault) {}

  grpc::Status WatchCatalog(grpc::ServerContext* context, const v1::WatchCatalogRequest* request,
                            grpc::ServerWriter<v1::WatchCatalogResponse>* writer) override {
    EXPECT_TRUE(request->accept_chunks());
    context->AddInitialMetadata(kWatchVersionHeader, old_chunks_[0].chunk().version());
    writer->SendInitialMetadata();
    if (request->known_version().empty()) {
      for (const v1::WatchCatalogResponse& chunk : old_chunks_) writer->Write(chunk);
      // Then end the stream, so the replica calls again with the old version.
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting");
    }
    if (fault_ == Fault::kCut) {
      for (size_t i = 0; i < new_chunks_.size() / 2; ++i) writer->Write(new_chunks_[i]);
    } else {
      writer->Write(new_chunks_[0]);
      writer->Write(new_chunks_[2]);  // chunk 1 lost
      writer->Write(new_chunks_[1]);
      for (size_t i = 3; i < new_chunks_.size(); ++i) writer->Write(new_chunks_[i]);
    }
    ++broken_streams_;
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection reset mid-snapshot");
  }

  size_t new_chunk_count() const { return new_chunks_.size(); }

 private:
  const std::vector<v1::WatchCatalogResponse> old_chunks_;
  const std::vector<v1::WatchCatalogResponse> new_chunks_;
  const Fault fault_;
  std::atomic<int> broken_streams_{0};
};

void ExpectABrokenSnapshotKeepsTheOldOne(BreakingCatalog::Fault fault, const std::string& reason) {
  CatalogServer old_catalog(WriteGeneratedOffers(4), {.chunk_bytes = kChunkBytes});
  CatalogServer new_catalog(WriteGeneratedOffers(5, 1.1), {.chunk_bytes = kChunkBytes});
  const v1::CatalogSnapshot old_snapshot = old_catalog.snapshot();
  BreakingCatalog breaking(old_snapshot, new_catalog.snapshot(), fault);
  ASSERT_GT(breaking.new_chunk_count(), 4u);
  absl::StatusOr<StartedServer> server = StartServer(ServerOptions(), {&breaking});
  ASSERT_OK(server);

  const std::string cache = TestPath("cache");
  CatalogReplica::Options options;
  options.cache_path = cache;
  options.retry_interval = absl::Milliseconds(20);
  absl::Mutex mu;
  std::vector<std::string> rejected;
  options.on_rejected = [&](const absl::Status& status) {
    absl::MutexLock lock(&mu);
    rejected.push_back(std::string(status.message()));
  };
  CatalogReplica replica(
      v1::CatalogService::NewStub(grpc::CreateChannel(absl::StrCat("127.0.0.1:", server->port),
                                                      grpc::InsecureChannelCredentials())),
      options);
  replica.Start();
  ASSERT_TRUE(replica.WaitUntilLoaded(absl::Seconds(30)));
  {
    // Several broken attempts at the new snapshot.
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](std::vector<std::string>* r) { return r->size() >= 3; }, &rejected));
  }
  replica.Stop();
  {
    absl::MutexLock lock(&mu);
    ASSERT_FALSE(rejected.empty());
    for (const std::string& message : rejected) {
      EXPECT_THAT(message, HasSubstr(reason));
      EXPECT_THAT(message, HasSubstr(absl::StrCat("keeping version ", old_snapshot.version())));
    }
  }
  // Still the old snapshot, whole, in memory and in the cache.
  EXPECT_EQ(replica.Current()->snapshot().SerializeAsString(), old_snapshot.SerializeAsString());
  absl::StatusOr<std::string> bytes = ReadFile(cache);
  ASSERT_OK(bytes);
  absl::StatusOr<v1::CatalogSnapshot> cached = CatalogReplica::DecodeCache(*bytes);
  ASSERT_OK(cached);
  EXPECT_EQ(cached->version(), old_snapshot.version());
  EXPECT_EQ(cached->offers_size(), old_snapshot.offers_size());
  ShutdownServer(*server->server, 1);
}

TEST(SnapshotChunks, AStreamCutMidSnapshotKeepsTheServingSnapshot) {
  ExpectABrokenSnapshotKeepsTheOldOne(BreakingCatalog::Fault::kCut, "watch stream ended after");
}

TEST(SnapshotChunks, ChunksOutOfOrderKeepTheServingSnapshot) {
  ExpectABrokenSnapshotKeepsTheOldOne(BreakingCatalog::Fault::kOutOfOrder,
                                      "a chunk lost or repeated");
}

// The assembler on its own: every way a chunk can fail to continue the
// snapshot drops the partial one.
TEST(SnapshotAssemblerTest, RefusesChunksThatDoNotContinueTheSnapshot) {
  v1::CatalogSnapshot snapshot;
  snapshot.set_version("v1");
  snapshot.set_source(std::string(10'000, 'x'));
  const std::vector<v1::WatchCatalogResponse> chunks =
      Decode(EncodeSnapshot(snapshot, {.chunk_bytes = 1000})->chunks);
  ASSERT_GE(chunks.size(), 10u);

  SnapshotAssembler assembler;
  EXPECT_THAT(assembler.Add(chunks[1].chunk()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("without the start")));
  ASSERT_OK(assembler.Add(chunks[0].chunk()));
  EXPECT_THAT(assembler.Add(chunks[0].chunk()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("new snapshot")));
  EXPECT_FALSE(assembler.in_progress());

  ASSERT_OK(assembler.Add(chunks[0].chunk()));
  v1::SnapshotChunk other_version = chunks[1].chunk();
  other_version.set_version("v2");
  EXPECT_THAT(assembler.Add(other_version),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("inside v1")));

  ASSERT_OK(assembler.Add(chunks[0].chunk()));
  v1::SnapshotChunk too_long = chunks[1].chunk();
  too_long.mutable_data()->append(20'000, 'y');
  EXPECT_THAT(assembler.Add(too_long),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("run past")));

  // One flipped byte: caught by the checksum once complete.
  for (size_t i = 0; i < chunks.size(); ++i) {
    v1::SnapshotChunk chunk = chunks[i].chunk();
    if (i == 3) (*chunk.mutable_data())[10] ^= 0x20;
    ASSERT_OK(assembler.Add(chunk));
  }
  ASSERT_TRUE(assembler.complete());
  EXPECT_THAT(assembler.Take(nullptr),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum")));

  // Incomplete: not taken.
  ASSERT_OK(assembler.Add(chunks[0].chunk()));
  EXPECT_THAT(assembler.Take(nullptr), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("1000 of")));

  // Whole and in order: the snapshot.
  for (const v1::WatchCatalogResponse& chunk : chunks) ASSERT_OK(assembler.Add(chunk.chunk()));
  absl::StatusOr<v1::CatalogSnapshot> taken = assembler.Take(nullptr);
  ASSERT_OK(taken);
  EXPECT_EQ(taken->SerializeAsString(), snapshot.SerializeAsString());
}

}  // namespace
}  // namespace gpuadvisor::catalog
