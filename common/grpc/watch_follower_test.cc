// The watch follower template on a real port-0 gRPC server (a scripted
// CatalogService, the catalog's contract being at hand): it takes a whole
// value and one sent in chunks, asks again with the version it holds, drops
// corrupt chunks and keeps its value, reports a value its owner rejects, backs
// off while refused and resets once current, re-dials a stream that goes
// silent after announcing heartbeats, does not time a writer that announces
// none, and reports its age. Silence is made by moving a ManualClock, not by
// sleeping.

#include "common/grpc/watch_follower.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/grpc/server.h"
#include "common/io/fingerprint.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"

namespace gpuadvisor {
namespace {

using ::gpuadvisor::catalog::v1::CatalogService;
using ::gpuadvisor::catalog::v1::CatalogSnapshot;
using ::gpuadvisor::catalog::v1::WatchCatalogRequest;
using ::gpuadvisor::catalog::v1::WatchCatalogResponse;
using ::testing::HasSubstr;
using Follower = WatchFollower<WatchCatalogRequest, WatchCatalogResponse, CatalogSnapshot>;

constexpr char kVersionHeader[] = "x-test-version";
constexpr char kHeartbeatHeader[] = "x-test-heartbeat-ms";

CatalogSnapshot Snapshot(const std::string& version, int offers) {
  CatalogSnapshot snapshot;
  snapshot.set_version(version);
  for (int i = 0; i < offers; ++i) snapshot.add_offers()->set_id(absl::StrCat("offer-", i));
  return snapshot;
}

WatchCatalogResponse Whole(const CatalogSnapshot& snapshot) {
  WatchCatalogResponse response;
  *response.mutable_snapshot() = snapshot;
  return response;
}

// The snapshot as chunks of `bytes` each.
std::vector<WatchCatalogResponse> Chunks(const CatalogSnapshot& snapshot, size_t bytes) {
  const std::string data = snapshot.SerializeAsString();
  std::vector<WatchCatalogResponse> chunks;
  for (size_t offset = 0; offset < data.size(); offset += bytes) {
    WatchCatalogResponse response;
    catalog::v1::SnapshotChunk* chunk = response.mutable_chunk();
    chunk->set_version(snapshot.version());
    chunk->set_total_bytes(static_cast<int64_t>(data.size()));
    chunk->set_offset(static_cast<int64_t>(offset));
    chunk->set_fnv1a64(FingerprintHex(data));
    chunk->set_data(data.substr(offset, bytes));
    chunks.push_back(std::move(response));
  }
  return chunks;
}

// A writer whose every watch call runs `script` with the call's index.
class ScriptedWriter final : public CatalogService::Service {
 public:
  using Script =
      std::function<grpc::Status(int call, const WatchCatalogRequest&, grpc::ServerContext*,
                                 grpc::ServerWriter<WatchCatalogResponse>*)>;
  explicit ScriptedWriter(Script script) : script_(std::move(script)) {}

  grpc::Status WatchCatalog(grpc::ServerContext* context, const WatchCatalogRequest* request,
                            grpc::ServerWriter<WatchCatalogResponse>* writer) override {
    const int call = calls_.fetch_add(1);
    {
      absl::MutexLock lock(&mu_);
      requests_.push_back(*request);
    }
    return script_(call, *request, context, writer);
  }

  int calls() const { return calls_.load(); }
  std::vector<WatchCatalogRequest> requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  const Script script_;
  std::atomic<int> calls_{0};
  mutable absl::Mutex mu_;
  std::vector<WatchCatalogRequest> requests_ ABSL_GUARDED_BY(mu_);
};

// Accepts the watch (version header, and the heartbeat interval when `heartbeat_ms` > 0).
void Accept(grpc::ServerContext* context, grpc::ServerWriter<WatchCatalogResponse>* writer,
            const std::string& version, int heartbeat_ms) {
  context->AddInitialMetadata(kVersionHeader, version);
  if (heartbeat_ms > 0) context->AddInitialMetadata(kHeartbeatHeader, absl::StrCat(heartbeat_ms));
  writer->SendInitialMetadata();
}

// Holds the stream open until the follower leaves, with heartbeats every
// `heartbeat_ms` (none when 0).
grpc::Status HoldOpen(grpc::ServerContext* context,
                      grpc::ServerWriter<WatchCatalogResponse>* writer, int heartbeat_ms) {
  while (!context->IsCancelled()) {
    absl::SleepFor(absl::Milliseconds(heartbeat_ms > 0 ? heartbeat_ms : 20));
    if (heartbeat_ms > 0) {
      WatchCatalogResponse heartbeat;
      heartbeat.set_heartbeat_unix_millis(absl::ToUnixMillis(absl::Now()));
      if (!writer->Write(heartbeat)) break;
    }
  }
  return grpc::Status::OK;
}

// The follower's owner: what it serves, and what it was told.
struct Owner {
  Follower::Protocol Protocol(CatalogService::StubInterface* stub) {
    Follower::Protocol protocol;
    protocol.peer = "the test writer";
    protocol.value_name = "snapshot";
    protocol.version_header = kVersionHeader;
    protocol.heartbeat_header = kHeartbeatHeader;
    protocol.open = [stub](grpc::ClientContext* context, const WatchCatalogRequest& request) {
      return stub->WatchCatalog(context, request);
    };
    protocol.value_of = [](WatchCatalogResponse* r) -> CatalogSnapshot* {
      return r->has_snapshot() ? r->mutable_snapshot() : nullptr;
    };
    protocol.apply = [this](CatalogSnapshot snapshot, std::string serialized, const std::string&) {
      absl::MutexLock lock(&mu);
      if (snapshot.offers_size() == 0) return absl::InvalidArgumentError("no offers");
      served.push_back(snapshot.version());
      chunked.push_back(!serialized.empty());
      return absl::OkStatus();
    };
    protocol.serving_version = [this] {
      absl::MutexLock lock(&mu);
      return served.empty() ? std::string() : served.back();
    };
    return protocol;
  }
  WatchFollowerOptions Options() {
    WatchFollowerOptions options;
    options.name = "test follower";
    options.retry_interval = absl::Milliseconds(10);
    options.max_retry_interval = absl::Milliseconds(80);
    options.heartbeat_interval = absl::Milliseconds(100);
    options.on_rejected = [this](const absl::Status& status) {
      absl::MutexLock lock(&mu);
      rejected.push_back(std::string(status.message()));
    };
    return options;
  }
  // Waits until `done` holds of the owner (at most 30 s), checking every 5 ms.
  bool WaitFor(const std::function<bool(const Owner&)>& done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (true) {
      {
        absl::MutexLock lock(&mu);
        if (done(*this)) return true;
      }
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
  }

  mutable absl::Mutex mu;
  std::vector<std::string> served ABSL_GUARDED_BY(mu);
  std::vector<bool> chunked ABSL_GUARDED_BY(mu);
  std::vector<std::string> rejected ABSL_GUARDED_BY(mu);
};

struct Running {
  explicit Running(ScriptedWriter* writer) {
    absl::StatusOr<StartedServer> started = StartServer(ServerOptions(), {writer});
    EXPECT_TRUE(started.ok()) << started.status();
    server = std::move(started->server);
    stub = CatalogService::NewStub(grpc::CreateChannel(absl::StrCat("127.0.0.1:", started->port),
                                                       grpc::InsecureChannelCredentials()));
  }
  ~Running() { ShutdownServer(*server, 0.1); }
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<CatalogService::Stub> stub;
};

TEST(WatchFollower, TakesAWholeValueThenOneInChunksAndAsksWithTheVersionItHolds) {
  const CatalogSnapshot first = Snapshot("v1", 3);
  const CatalogSnapshot second = Snapshot("v2", 400);
  ScriptedWriter writer([&](int call, const WatchCatalogRequest&, grpc::ServerContext* context,
                            grpc::ServerWriter<WatchCatalogResponse>* out) {
    Accept(context, out, "v", 100);
    if (call == 0) {
      out->Write(Whole(first));
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting");
    }
    for (const WatchCatalogResponse& chunk : Chunks(second, 500)) out->Write(chunk);
    return HoldOpen(context, out, 100);
  });
  Running running(&writer);
  Owner owner;
  Follower follower(owner.Protocol(running.stub.get()), owner.Options());
  EXPECT_EQ(follower.AgeSeconds(), -1);
  follower.Start();
  ASSERT_TRUE(owner.WaitFor([](const Owner& o) { return o.served.size() == 2; }));
  follower.Stop();
  absl::MutexLock lock(&owner.mu);
  EXPECT_THAT(owner.served, ::testing::ElementsAre("v1", "v2"));
  EXPECT_THAT(owner.chunked, ::testing::ElementsAre(false, true));  // chunks hand their bytes on
  EXPECT_TRUE(owner.rejected.empty());
  const std::vector<WatchCatalogRequest> requests = writer.requests();
  ASSERT_GE(requests.size(), 2u);
  EXPECT_EQ(requests[0].known_version(), "");
  EXPECT_EQ(requests[1].known_version(), "v1");
  for (const WatchCatalogRequest& request : requests) {
    EXPECT_TRUE(request.accept_chunks());
    EXPECT_EQ(request.heartbeat_interval_millis(), 100);
  }
}

// A corrupt chunk and a snapshot the owner refuses: both reported with what
// is kept; the follower re-dials after the corrupt one.
TEST(WatchFollower, CorruptChunksAndRefusedValuesKeepTheServedOne) {
  const CatalogSnapshot good = Snapshot("v1", 3);
  ScriptedWriter writer([&](int call, const WatchCatalogRequest&, grpc::ServerContext* context,
                            grpc::ServerWriter<WatchCatalogResponse>* out) {
    Accept(context, out, "v", 0);
    if (call == 0) {
      out->Write(Whole(good));
      out->Write(Whole(Snapshot("empty", 0)));  // refused by the owner
      std::vector<WatchCatalogResponse> chunks = Chunks(Snapshot("v2", 200), 300);
      (*chunks[1].mutable_chunk()->mutable_data())[10] ^= 0x20;
      for (const WatchCatalogResponse& chunk : chunks) out->Write(chunk);
    }
    return HoldOpen(context, out, 0);
  });
  Running running(&writer);
  Owner owner;
  Follower follower(owner.Protocol(running.stub.get()), owner.Options());
  follower.Start();
  ASSERT_TRUE(owner.WaitFor([](const Owner& o) { return o.rejected.size() == 2; }));
  ASSERT_TRUE(owner.WaitFor([&](const Owner&) { return writer.calls() >= 2; }));
  follower.Stop();
  absl::MutexLock lock(&owner.mu);
  EXPECT_THAT(owner.served, ::testing::ElementsAre("v1"));
  EXPECT_THAT(owner.rejected[0], HasSubstr("no offers; keeping version v1"));
  EXPECT_THAT(owner.rejected[1], HasSubstr("checksum mismatch; keeping version v1"));
  EXPECT_EQ(writer.requests()[1].known_version(), "v1");
}

// Refused calls back off, doubling up to the cap; once a value arrives the
// wait is back to the first interval.
TEST(WatchFollower, BacksOffWhileRefusedAndResetsOnceCurrent) {
  ScriptedWriter writer([&](int call, const WatchCatalogRequest&, grpc::ServerContext* context,
                            grpc::ServerWriter<WatchCatalogResponse>* out) {
    if (call < 5) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "not yet");
    Accept(context, out, "v", 100);
    out->Write(Whole(Snapshot("v1", 2)));
    return HoldOpen(context, out, 100);
  });
  Running running(&writer);
  Owner owner;
  Follower follower(owner.Protocol(running.stub.get()), owner.Options());
  ::testing::internal::CaptureStderr();
  follower.Start();
  ASSERT_TRUE(owner.WaitFor([](const Owner& o) { return !o.served.empty(); }));
  // The backoff is reset once the value is taken, just after it is served.
  ASSERT_TRUE(owner.WaitFor(
      [&](const Owner&) { return follower.retry_delay() == absl::Milliseconds(10); }));
  follower.Stop();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("test follower: watch of the test writer ended: not yet; "
                             "reconnecting in 10ms"));
  EXPECT_THAT(log, HasSubstr("reconnecting in 20ms"));
  EXPECT_THAT(log, HasSubstr("reconnecting in 80ms"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("reconnecting in 160ms")));
  EXPECT_EQ(writer.calls(), 6);
}

// A writer that announced heartbeats and then goes silent (hung, SIGSTOPped):
// once the follower's clock has moved past three intervals the age shows the
// silence and the call is cancelled and re-dialled. A writer that announced
// no interval, silent as long on the same clock, is not timed.
TEST(WatchFollower, ASilentStreamAgesAndIsReDialledUnlessItAnnouncedNoHeartbeats) {
  ScriptedWriter timed_writer([&](int call, const WatchCatalogRequest&,
                                  grpc::ServerContext* context,
                                  grpc::ServerWriter<WatchCatalogResponse>* out) {
    Accept(context, out, "v", 100);
    if (call == 0) out->Write(Whole(Snapshot("v1", 2)));
    return HoldOpen(context, out, 0);  // silent until the follower leaves
  });
  ScriptedWriter untimed_writer([&](int, const WatchCatalogRequest&, grpc::ServerContext* context,
                                    grpc::ServerWriter<WatchCatalogResponse>* out) {
    Accept(context, out, "v", 0);
    out->Write(Whole(Snapshot("v1", 2)));
    return HoldOpen(context, out, 0);
  });
  Running timed_server(&timed_writer);
  Running untimed_server(&untimed_writer);
  ManualClock clock;
  Owner timed_owner, untimed_owner;
  WatchFollowerOptions timed_options = timed_owner.Options();
  timed_options.clock = &clock;
  WatchFollowerOptions untimed_options = untimed_owner.Options();
  untimed_options.clock = &clock;
  Follower timed(timed_owner.Protocol(timed_server.stub.get()), timed_options);
  Follower untimed(untimed_owner.Protocol(untimed_server.stub.get()), untimed_options);
  ::testing::internal::CaptureStderr();
  timed.Start();
  untimed.Start();
  ASSERT_TRUE(timed_owner.WaitFor([](const Owner& o) { return !o.served.empty(); }));
  ASSERT_TRUE(untimed_owner.WaitFor([](const Owner& o) { return !o.served.empty(); }));
  EXPECT_EQ(timed.AgeSeconds(), 0);

  clock.Advance(absl::Milliseconds(500));  // five heartbeat intervals of silence
  EXPECT_DOUBLE_EQ(timed.AgeSeconds(), 0.5);
  EXPECT_EQ(untimed.AgeSeconds(), 0);  // no interval announced: an open stream is current
  ASSERT_TRUE(timed_owner.WaitFor([&](const Owner&) { return timed_writer.calls() >= 2; }));
  timed.Stop();
  untimed.Stop();
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("test follower: nothing heard from the test writer for 500ms"));
  EXPECT_EQ(timed_writer.calls(), 2);  // the clock did not move again
  EXPECT_EQ(untimed_writer.calls(), 1);
}

// A value served before following (a cache) counts its age from when it was
// written, until the writer is heard.
TEST(WatchFollower, AValueFromACacheAgesFromWhenItWasWritten) {
  ScriptedWriter writer([&](int, const WatchCatalogRequest&, grpc::ServerContext*,
                            grpc::ServerWriter<WatchCatalogResponse>*) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "down");
  });
  Running running(&writer);
  Owner owner;
  Follower follower(owner.Protocol(running.stub.get()), owner.Options());
  follower.Took("cached", absl::Now() - absl::Seconds(100));
  EXPECT_GE(follower.AgeSeconds(), 100);
  follower.Start();
  ASSERT_TRUE(owner.WaitFor([&](const Owner&) { return writer.calls() >= 1; }));
  follower.Stop();
  EXPECT_EQ(writer.requests()[0].known_version(), "cached");
  EXPECT_GE(follower.AgeSeconds(), 100);
}

}  // namespace
}  // namespace gpuadvisor
