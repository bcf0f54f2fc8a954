// Serving under load, through Estimate: the time to first token includes the
// wait for prefill capacity at the requested concurrency (P90, M/D/1 queue
// with an exponential tail: serving_plan.h PrefillWaitSeconds), and MoE
// decode reads the experts the batch activates.

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/sizing/serving_plan.h"
#include "services/sizing/shipped_model_for_test.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
using ::testing::HasSubstr;

v1::EstimateRequest Endpoint(const std::string& preset, int users, int prompt, int output) {
  v1::EstimateRequest r;
  v1::Workload* w = r.mutable_workload();
  w->set_task(v1::TASK_INFERENCE);
  w->mutable_model()->set_preset(preset);
  w->set_context_length(8192);
  w->set_prompt_tokens(prompt);
  w->set_output_tokens(output);
  w->set_concurrent_sequences(users);
  w->mutable_parallelism()->set_tensor_parallel(1);
  v1::GpuConfiguration* c = r.add_configurations();
  c->set_gpu_model("H100-SXM");
  c->set_gpus_per_node(1);
  c->set_nodes(1);
  return r;
}

v1::ServingEstimate Serving(const v1::EstimateRequest& r, v1::ConfigurationEstimate* e = nullptr) {
  auto resp = ShippedSizingModel().Estimate(r);
  EXPECT_TRUE(resp.ok()) << resp.status();
  if (!resp.ok()) return {};
  EXPECT_TRUE(resp->estimates(0).fits()) << resp->estimates(0).not_fit_reason();
  if (e != nullptr) *e = resp->estimates(0);
  return resp->estimates(0).serving();
}

TEST(ServingLoad, PrefillWaitHandComputed) {
  // rho = 0.6 x 10 / 11; tau = 0.1 / (2 (1 - rho)); P90 = tau ln(rho / 0.1).
  const double rho = 0.6 * 10 / 11, tau = 0.1 / (2 * (1 - rho));
  EXPECT_NEAR(PrefillWaitSeconds(0.6, 11, 0.1, 0.9), tau * std::log(rho / 0.1), 1e-12);
  EXPECT_EQ(PrefillWaitSeconds(0.6, 1, 0.1, 0.9), 0.0);    // nobody else
  EXPECT_EQ(PrefillWaitSeconds(0.05, 32, 0.1, 0.9), 0.0);  // rho below 1 - q
  // Never more than every other sequence's prefill.
  EXPECT_NEAR(PrefillWaitSeconds(1.0, 4, 0.1, 0.9), 0.3, 1e-12);
}

TEST(ServingLoad, FirstTokenWaitsForPrefillCapacityAtConcurrency) {
  const v1::ServingEstimate one = Serving(Endpoint("llama-3.1-8b", 1, 4096, 256));
  EXPECT_EQ(one.prefill_wait_seconds(), 0.0);
  EXPECT_DOUBLE_EQ(one.time_to_first_token_seconds(), one.unloaded_time_to_first_token_seconds());
  EXPECT_DOUBLE_EQ(one.time_to_first_token_percentile(), 0.9);

  v1::ConfigurationEstimate e;
  const v1::ServingEstimate many = Serving(Endpoint("llama-3.1-8b", 32, 4096, 256), &e);
  EXPECT_GT(many.prefill_fraction(), 0.3);
  EXPECT_GT(many.prefill_wait_seconds(), many.unloaded_time_to_first_token_seconds());
  EXPECT_NEAR(many.time_to_first_token_seconds(),
              many.unloaded_time_to_first_token_seconds() + many.prefill_wait_seconds(), 1e-9);
  bool noted = false;
  for (const v1::Note& n : e.structured_notes()) {
    if (n.code() == "prefill_wait") {
      noted = true;
      EXPECT_THAT(n.text(), HasSubstr("90th percentile"));
    }
  }
  EXPECT_TRUE(noted);
  // A first-token SLO is checked against the loaded percentile.
  v1::EstimateRequest capped = Endpoint("llama-3.1-8b", 32, 4096, 256);
  capped.mutable_serving_slo()->set_max_time_to_first_token_seconds(
      0.5 * (many.unloaded_time_to_first_token_seconds() + many.time_to_first_token_seconds()));
  auto resp = ShippedSizingModel().Estimate(capped);
  ASSERT_TRUE(resp.ok()) << resp.status();
  bool missed = false;
  for (const v1::Note& n : resp->estimates(0).structured_notes()) {
    missed = missed || n.code() == "serving_slo_missed";
  }
  EXPECT_TRUE(missed);
}

TEST(ServingLoad, MoeDecodeReadsTheExpertsTheBatchActivates) {
  // Mixtral 8x7B (top-2 of 8): one sequence reads 2 of 8 experts per layer,
  // 16 sequences nearly all of them, so a step of 16 reads far more weights.
  // FP8 so that the 46.7B parameters fit one H100.
  auto mixtral = [](int users) {
    v1::EstimateRequest r = Endpoint("mixtral-8x7b", users, 128, 128);
    r.mutable_workload()->set_precision(v1::PRECISION_FP8);
    return Serving(r);
  };
  const v1::ServingEstimate one = mixtral(1);
  const v1::ServingEstimate sixteen = mixtral(16);
  EXPECT_GT(sixteen.inter_token_latency_seconds(), 1.8 * one.inter_token_latency_seconds());
  // A dense model's step barely grows with a small batch.
  const v1::ServingEstimate dense_one = Serving(Endpoint("llama-3.1-8b", 1, 128, 128));
  const v1::ServingEstimate dense_sixteen = Serving(Endpoint("llama-3.1-8b", 16, 128, 128));
  EXPECT_LT(dense_sixteen.inter_token_latency_seconds(),
            1.3 * dense_one.inter_token_latency_seconds());
}

}  // namespace
}  // namespace gpuadvisor::sizing
