// The gateway's response cache through the four real binaries: a repeated
// request is answered from the cache, and a price update (a new price-book
// version) is never answered with the old prices once it is live, nor (a
// sizing deploy with other data) with the old sizing model's estimates.

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/integration/stack.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::testing {
namespace {

gateway::v1::RecommendRequest LoraOf8B() {
  gateway::v1::RecommendRequest request;
  sizing::v1::Workload* w = request.mutable_workload();
  w->set_task(sizing::v1::TASK_LORA);
  w->mutable_model()->set_preset("llama-3.1-8b");
  w->set_precision(sizing::v1::PRECISION_BF16);
  w->set_train_tokens(5e7);
  w->set_sequence_length(2048);
  request.set_max_results(5);
  return request;
}

std::unique_ptr<grpc::ClientContext> Deadline() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  return context;
}

double Counter(const Stack& stack, const std::string& name) {
  return MetricValue(*stack.gateway, name);
}

class ResponseCacheEndToEnd : public StackTest {};

TEST_F(ResponseCacheEndToEnd, RepeatedRequestIsServedFromTheCacheUntilPricesChange) {
  auto gateway = stack_->GatewayStub();
  const double hits_before = Counter(*stack_, "gpuadvisor_gateway_response_cache_hits_total");
  ASSERT_GE(hits_before, 0) << "the gateway exports no cache counter";

  // The first answer after the gateway learned the price-book version is
  // stored; the next identical request is a hit. (The follower connects in
  // the background, so allow a few rounds.)
  gateway::v1::RecommendResponse first, again;
  bool hit = false;
  for (int i = 0; i < 50 && !hit; ++i) {
    ASSERT_TRUE(gateway->Recommend(Deadline().get(), LoraOf8B(), &first).ok());
    ASSERT_TRUE(gateway->Recommend(Deadline().get(), LoraOf8B(), &again).ok());
    hit = Counter(*stack_, "gpuadvisor_gateway_response_cache_hits_total") > hits_before;
    if (!hit) absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(hit) << "no Recommend was answered from the cache";
  ASSERT_FALSE(again.recommendations().empty());
  EXPECT_EQ(again.recommendations(0).offer().id(), first.recommendations(0).offer().id());
  EXPECT_EQ(again.price_book_version(), first.price_book_version());
  EXPECT_DOUBLE_EQ(again.recommendations(0).cost().total_usd(),
                   first.recommendations(0).cost().total_usd());

  // Make the winner ten times dearer. Once the new book is live the cached
  // answer must not come back: the winner's price changes or it loses rank 1.
  const gateway::v1::Recommendation& top = again.recommendations(0);
  pricing::v1::OfferPrice price;
  price.set_offer_id(top.offer().id());
  price.set_provider(top.offer().provider());
  price.set_gpu_model(top.offer().gpu_model());
  const double hourly = top.cost().usd_per_hour() * 10;
  price.set_on_demand_usd_per_hour(hourly);
  price.set_spot_usd_per_hour(hourly);
  pricing::v1::UpdatePricesResponse updated;
  const grpc::Status status = stack_->UpdatePrice(price, &updated);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_NE(updated.price_book_version(), again.price_book_version());

  gateway::v1::RecommendResponse after;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(gateway->Recommend(Deadline().get(), LoraOf8B(), &after).ok());
    if (after.price_book_version() == updated.price_book_version()) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_EQ(after.price_book_version(), updated.price_book_version());
  ASSERT_FALSE(after.recommendations().empty());
  const gateway::v1::Recommendation& now_top = after.recommendations(0);
  EXPECT_TRUE(now_top.offer().id() != top.offer().id() ||
              now_top.cost().total_usd() > top.cost().total_usd())
      << "the answer still carries the old prices";
}

// A copy of data/ whose GPUs compute at half their 16-bit peak, for a
// sizing deployed with other data.
ScopedTempDir SlowerGpuData() {
  ScopedTempDir copy("gpuadvisor-sizing");
  const std::string& dir = copy.path();
  EXPECT_FALSE(dir.empty());
  std::filesystem::copy(DataDir(), dir, std::filesystem::copy_options::recursive);
  const std::string gpus = dir + "/catalog/gpus.textproto";
  std::ifstream in(gpus);
  std::stringstream text;
  text << in.rdbuf();
  const std::string before = text.str();
  std::string after;
  const std::regex peak("bf16_flops: ([0-9.]+)e12");
  auto last = before.cbegin();
  for (std::sregex_iterator it(before.begin(), before.end(), peak), end; it != end; ++it) {
    after.append(last, before.cbegin() + it->position());
    after += absl::StrCat("bf16_flops: ", std::stod((*it)[1].str()) / 2, "e12");
    last = before.cbegin() + it->position() + it->length();
  }
  after.append(last, before.cend());
  EXPECT_NE(after, before);
  std::ofstream(gpus) << after;
  return copy;
}

// A sizing redeployed with other data under a running gateway: the gateway
// hears its new model fingerprint (its probe, while every estimate and the
// answer are cached) and answers with the new sizing's estimates.
TEST(ResponseCacheLive, SizingDeployWithOtherDataChangesTheAnswer) {
  absl::StatusOr<Stack> started = Stack::Start("test-token", {}, {"--sizing_probe_ms=200"});
  ASSERT_OK(started);
  Stack& stack = *started;
  auto stub = stack.GatewayStub();
  gateway::v1::RecommendResponse warm, first, again;
  // An answer is cached only under the sizing model the gateway knew when
  // the call began: the first call after start-up may be the one that first
  // hears it (from its Estimate, before the probe does), so it warms up.
  ASSERT_TRUE(stub->Recommend(Deadline().get(), LoraOf8B(), &warm).ok());
  ASSERT_TRUE(stub->Recommend(Deadline().get(), LoraOf8B(), &first).ok());
  ASSERT_THAT(first.recommendations(), ::testing::Not(::testing::IsEmpty()));
  ASSERT_TRUE(stub->Recommend(Deadline().get(), LoraOf8B(), &again).ok());
  EXPECT_GE(Counter(stack, "gpuadvisor_gateway_response_cache_hits_total"), 1);
  EXPECT_EQ(again.recommendations(0).estimated_hours(), first.recommendations(0).estimated_hours());

  // The new sizing takes the old one's address (the gateway's --sizing_address).
  const int port = stack.sizing->grpc_port();
  stack.sizing->Stop(SIGTERM);
  stack.sizing.reset();
  const ScopedTempDir data = SlowerGpuData();
  absl::StatusOr<std::unique_ptr<ServiceProcess>> redeployed = ServiceProcess::Start(
      BinaryPath("sizing", "sizing_server"),
      {absl::StrCat("--port=", port), "--metrics_port=0", "--data_dir=" + data.path()});
  ASSERT_OK(redeployed);
  stack.sizing = *std::move(redeployed);

  gateway::v1::RecommendResponse changed;
  const absl::Time until = absl::Now() + absl::Seconds(20);
  do {
    absl::SleepFor(absl::Milliseconds(200));
    changed.Clear();
    ASSERT_TRUE(stub->Recommend(Deadline().get(), LoraOf8B(), &changed).ok());
    ASSERT_THAT(changed.recommendations(), ::testing::Not(::testing::IsEmpty()));
  } while (changed.recommendations(0).tokens_per_second() ==
               first.recommendations(0).tokens_per_second() &&
           absl::Now() < until);
  // Half the peak: slower, and no longer the cached answer.
  EXPECT_LT(changed.recommendations(0).tokens_per_second(),
            0.9 * first.recommendations(0).tokens_per_second());
  EXPECT_GE(Counter(stack, "gpuadvisor_gateway_sizing_model_changes_total"), 2);
}

}  // namespace
}  // namespace gpuadvisor::testing
