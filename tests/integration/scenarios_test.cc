// The scenario suite: realistic requests with the outcome practitioners'
// guidance predicts, run against the four real services and the embedded data.

#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/stack.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::testing {
namespace {

using gateway::v1::Recommendation;
using gateway::v1::RecommendRequest;
using gateway::v1::RecommendResponse;

class Scenarios : public StackTest {
 protected:
  static RecommendResponse Recommend(const RecommendRequest& request) {
    auto stub = stack_->GatewayStub();
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    RecommendResponse response;
    const grpc::Status status = stub->Recommend(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  static RecommendRequest Workload(sizing::v1::Task task, const std::string& preset,
                                   sizing::v1::Precision precision) {
    RecommendRequest request;
    request.mutable_workload()->set_task(task);
    request.mutable_workload()->mutable_model()->set_preset(preset);
    request.mutable_workload()->set_precision(precision);
    request.set_max_results(10);
    return request;
  }

  static int TotalGpus(const Recommendation& r) {
    return r.offer().gpus_per_node() * r.offer().nodes();
  }
};

TEST_F(Scenarios, QLoraOf7BFitsOne24GBGpu) {
  RecommendRequest request =
      Workload(sizing::v1::TASK_QLORA, "llama-2-7b", sizing::v1::PRECISION_NF4);
  request.mutable_workload()->set_train_tokens(20e6);
  request.mutable_workload()->set_sequence_length(2048);
  request.mutable_workload()->set_micro_batch_size(1);
  request.mutable_constraints()->add_gpu_models("RTX-4090");
  request.mutable_constraints()->add_gpu_models("L4");
  request.mutable_constraints()->add_gpu_models("A10G");
  const RecommendResponse response = Recommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  // Every 24 GB offer qualifies, and the list includes a single card (a
  // marketplace 8-GPU box may still win on total cost by finishing sooner).
  bool single = false;
  for (const Recommendation& r : response.recommendations()) {
    EXPECT_EQ(r.gpu_memory_bytes(), 24ll << 30) << r.offer().id();  // "24 GB" = 24 GiB
    EXPECT_LT(r.memory().total_bytes(), r.gpu_memory_bytes());
    single |= TotalGpus(r) == 1;
  }
  EXPECT_TRUE(single);
  for (const auto& e : response.excluded()) {
    EXPECT_NE(e.reason(), gateway::v1::EXCLUSION_REASON_DOES_NOT_FIT) << e.example();
  }
}

TEST_F(Scenarios, FullFinetuneOf70BNeedsMultiGpuWithNvlink) {
  RecommendRequest request =
      Workload(sizing::v1::TASK_FULL_FINETUNE, "llama-3.1-70b", sizing::v1::PRECISION_BF16);
  request.mutable_workload()->set_train_tokens(100e6);
  request.mutable_workload()->set_sequence_length(4096);
  request.mutable_workload()->set_micro_batch_size(1);
  const RecommendResponse response = Recommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  const Recommendation& best = response.recommendations(0);
  EXPECT_GE(TotalGpus(best), 8);
  // A switched scale-up link (NVLink, or AMD Infinity Fabric on an 8x MI300X
  // box, which wins when its 192 GB avoids recomputation), never PCIe.
  EXPECT_TRUE(best.offer().link() == catalog::v1::LINK_TYPE_NVLINK ||
              best.offer().link() == catalog::v1::LINK_TYPE_INFINITY_FABRIC)
      << best.offer().id();
  EXPECT_GT(best.parallel_plan().zero_stage() + best.parallel_plan().tensor_parallel(), 1);
}

TEST_F(Scenarios, Pretraining405BNeedsMultiNodeWithAFabric) {
  RecommendRequest request =
      Workload(sizing::v1::TASK_PRETRAIN, "llama-3.1-405b", sizing::v1::PRECISION_BF16);
  request.mutable_workload()->set_train_tokens(100e9);
  request.mutable_workload()->set_sequence_length(8192);
  request.mutable_workload()->set_micro_batch_size(1);
  request.mutable_constraints()->set_max_nodes(64);
  const RecommendResponse response = Recommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const Recommendation& r : response.recommendations()) {
    EXPECT_GT(r.offer().nodes(), 1) << r.offer().id();
    EXPECT_NE(r.offer().fabric(), catalog::v1::FABRIC_TYPE_NONE) << r.offer().id();
    EXPECT_TRUE(r.parallel_plan().needs_fabric()) << r.offer().id();
  }
}

TEST_F(Scenarios, Serving70BInBf16NeedsTwo80GBOrOne141GB) {
  RecommendRequest request =
      Workload(sizing::v1::TASK_INFERENCE, "llama-3.1-70b", sizing::v1::PRECISION_BF16);
  request.mutable_workload()->set_context_length(4096);
  request.mutable_workload()->set_concurrent_sequences(1);
  request.set_max_results(20);
  const RecommendResponse response = Recommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const Recommendation& r : response.recommendations()) {
    const double total_memory = static_cast<double>(r.gpu_memory_bytes()) * TotalGpus(r);
    EXPECT_GE(total_memory, 141e9) << r.offer().id();
    if (TotalGpus(r) == 1) {
      EXPECT_GE(r.gpu_memory_bytes(), 141'000'000'000) << r.offer().id();
    }
  }
}

TEST_F(Scenarios, AlwaysOnEndpointGetsOnDemand) {
  RecommendRequest request =
      Workload(sizing::v1::TASK_INFERENCE, "llama-3.1-8b", sizing::v1::PRECISION_BF16);
  request.mutable_workload()->set_context_length(8192);
  request.mutable_workload()->set_concurrent_sequences(16);
  const RecommendResponse response = Recommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const Recommendation& r : response.recommendations()) {
    EXPECT_NE(r.purchase_option(), catalog::v1::PURCHASE_OPTION_SPOT) << r.offer().id();
  }
}

TEST_F(Scenarios, AThroughputFloorRulesOutSlowCards) {
  RecommendRequest request =
      Workload(sizing::v1::TASK_INFERENCE, "llama-3.1-8b", sizing::v1::PRECISION_BF16);
  request.mutable_workload()->set_context_length(4096);
  request.mutable_workload()->set_concurrent_sequences(32);
  const RecommendResponse unconstrained = Recommend(request);
  ASSERT_FALSE(unconstrained.recommendations().empty());
  const double floor = unconstrained.recommendations(0).tokens_per_second() * 2;
  request.mutable_constraints()->set_min_tokens_per_second(floor);
  const RecommendResponse response = Recommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const Recommendation& r : response.recommendations()) {
    EXPECT_GE(r.tokens_per_second(), floor) << r.offer().id();
  }
  bool too_slow = false;
  for (const auto& e : response.excluded())
    too_slow |= e.reason() == gateway::v1::EXCLUSION_REASON_TOO_SLOW;
  EXPECT_TRUE(too_slow);
}

TEST_F(Scenarios, ADeadlineForcesAFasterPricierOption) {
  RecommendRequest request =
      Workload(sizing::v1::TASK_FULL_FINETUNE, "llama-3.1-8b", sizing::v1::PRECISION_BF16);
  request.mutable_workload()->set_train_tokens(2e9);
  request.mutable_workload()->set_sequence_length(4096);
  request.mutable_workload()->set_micro_batch_size(1);
  request.set_max_results(1);
  const RecommendResponse unhurried = Recommend(request);
  ASSERT_EQ(unhurried.recommendations_size(), 1);
  const Recommendation& cheapest = unhurried.recommendations(0);

  request.mutable_constraints()->set_objective(gateway::v1::OBJECTIVE_DEADLINE);
  request.mutable_constraints()->set_deadline_hours(cheapest.estimated_hours() / 3);
  const RecommendResponse hurried = Recommend(request);
  ASSERT_EQ(hurried.recommendations_size(), 1);
  const Recommendation& fast = hurried.recommendations(0);
  EXPECT_LE(fast.estimated_hours(), cheapest.estimated_hours() / 3);
  EXPECT_GT(fast.cost().total_usd(), cheapest.cost().total_usd());
  EXPECT_GT(fast.cost().usd_per_hour(), cheapest.cost().usd_per_hour());
}

TEST_F(Scenarios, ABudgetThatExcludesEverythingReturnsTheSummary) {
  RecommendRequest request =
      Workload(sizing::v1::TASK_FULL_FINETUNE, "llama-3.1-70b", sizing::v1::PRECISION_BF16);
  request.mutable_workload()->set_train_tokens(1e9);
  request.mutable_workload()->set_sequence_length(4096);
  request.mutable_constraints()->set_max_total_usd(1);
  const RecommendResponse response = Recommend(request);
  EXPECT_TRUE(response.recommendations().empty());
  int excluded = 0;
  bool over_budget = false;
  for (const auto& e : response.excluded()) {
    excluded += e.count();
    over_budget |= e.reason() == gateway::v1::EXCLUSION_REASON_OVER_BUDGET;
  }
  EXPECT_GT(excluded, 0);
  EXPECT_TRUE(over_budget);
}

TEST_F(Scenarios, SpotForANonRestartableJobComesWithAWarning) {
  RecommendRequest request =
      Workload(sizing::v1::TASK_LORA, "llama-3.1-8b", sizing::v1::PRECISION_BF16);
  request.mutable_workload()->set_train_tokens(50e6);
  request.mutable_workload()->set_sequence_length(2048);
  request.mutable_workload()->set_restartable(false);
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_SPOT);
  const RecommendResponse response = Recommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const Recommendation& r : response.recommendations()) {
    EXPECT_THAT(r.warnings(), ::testing::Contains(::testing::HasSubstr("non-restartable")))
        << r.offer().id();
    EXPECT_GT(r.cost().preemption_usd(), 0) << r.offer().id();
  }
}

}  // namespace
}  // namespace gpuadvisor::testing
