// Bounded resources of every server: receive limits, rate limiting, and
// admin handlers that authenticate before they read the body.

#include "common/grpc/server.h"

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/grpc/channel.h"
#include "common/grpc/rate_limiter.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor {
namespace {

using ::testing::HasSubstr;

// Calls `method` with raw `payload` bytes through a generic stub.
grpc::Status CallRaw(int port, const std::string& method, const std::string& payload,
                     const std::string& token = "") {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  auto channel = grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                           grpc::InsecureChannelCredentials(), args);
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
  grpc::Slice slice(payload);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response, [&](grpc::Status s) {
    std::lock_guard<std::mutex> lock(mu);
    status = std::move(s);
    done = true;
    cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  return status;
}

TEST(ServerTest, RequestsOverTheReceiveLimitAreRefusedBeforeAnyHandler) {
  ServerOptions options;
  options.max_receive_bytes = 64 << 10;
  absl::StatusOr<StartedServer> server = StartServer(options, {});
  ASSERT_OK(server);
  // The health service exists on every server; a 1 MB body is refused by the
  // transport, not parsed.
  const grpc::Status status =
      CallRaw(server->port, "/grpc.health.v1.Health/Check", std::string(1 << 20, 'x'));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  ShutdownServer(*server->server, 0);
}

// Backend channels check health on the client side: a backend that is not
// SERVING (loading, or draining before shutdown) gets no calls; before, every
// call went to it regardless.
TEST(ServerTest, BackendChannelsSkipBackendsThatAreNotServing) {
  absl::StatusOr<StartedServer> server = StartServer(ServerOptions(), {});
  ASSERT_OK(server);  // starts NOT_SERVING
  auto channel = BackendChannel(absl::StrCat("127.0.0.1:", server->port));
  auto call = [&] {
    grpc::GenericStub stub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::Slice slice(std::string("x"));
    grpc::ByteBuffer request(&slice, 1), response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, "/no.Such/Method", grpc::StubOptions(), &request, &response,
                   [&](grpc::Status s) { done.set_value(std::move(s)); });
    return done.get_future().get().error_code();
  };
  // Reaching the server at all would give UNIMPLEMENTED.
  EXPECT_EQ(call(), grpc::StatusCode::UNAVAILABLE);
  SetServing(*server->server, {}, true);
  grpc::StatusCode code = grpc::StatusCode::UNAVAILABLE;
  for (int i = 0; i < 100 && code != grpc::StatusCode::UNIMPLEMENTED; ++i) {
    code = call();
    if (code != grpc::StatusCode::UNIMPLEMENTED) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(code, grpc::StatusCode::UNIMPLEMENTED);
  SetServing(*server->server, {}, false);
  for (int i = 0; i < 100 && code != grpc::StatusCode::UNAVAILABLE; ++i) {
    code = call();
    if (code != grpc::StatusCode::UNAVAILABLE) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(code, grpc::StatusCode::UNAVAILABLE);
  ShutdownServer(*server->server, 0);
}

TEST(PeerRateLimiterTest, KeysByAddressWithoutThePort) {
  EXPECT_EQ(PeerRateLimiter::PeerKey("ipv4:10.0.0.7:51234"), "ipv4:10.0.0.7");
  EXPECT_EQ(PeerRateLimiter::PeerKey("ipv6:[::1]:5000"), "ipv6:[::1]");
  EXPECT_EQ(PeerRateLimiter::PeerKey("unix:/tmp/s"), "unix:/tmp/s");
}

TEST(PeerRateLimiterTest, EachPeerHasItsOwnBucketThatRefills) {
  PeerRateLimiter limiter({.per_second = 2, .burst = 3});
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Allow("a", t0)) << i;
  EXPECT_FALSE(limiter.Allow("a", t0));
  EXPECT_TRUE(limiter.Allow("b", t0));                             // another client is not affected
  EXPECT_FALSE(limiter.Allow("a", t0 + absl::Milliseconds(400)));  // 0.8 token
  EXPECT_TRUE(limiter.Allow("a", t0 + absl::Milliseconds(500)));   // 1 token
  EXPECT_FALSE(limiter.Allow("a", t0 + absl::Milliseconds(500)));
  // Idle long enough, the bucket is full again but never above the burst.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Allow("a", t0 + absl::Seconds(60))) << i;
  EXPECT_FALSE(limiter.Allow("a", t0 + absl::Seconds(60)));
}

TEST(PeerRateLimiterTest, KeepsAtMostMaxPeersBuckets) {
  PeerRateLimiter limiter({.per_second = 1, .burst = 1, .max_peers = 10});
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(limiter.Allow(absl::StrCat("peer", i), t0));
  EXPECT_LE(limiter.peers(), 10u);
  EXPECT_GT(limiter.peers(), 0u);
}

TEST(PeerRateLimiterTest, DisabledAllowsEverything) {
  PeerRateLimiter limiter({});
  EXPECT_FALSE(limiter.enabled());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.Allow("a", absl::FromUnixSeconds(1)));
}

}  // namespace
}  // namespace gpuadvisor
