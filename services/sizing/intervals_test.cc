// Intervals through Estimate: every fitting training and batch estimate
// carries P10-P90 intervals of its hours and tokens/s, serving ones of the
// time to first token, from data/sizing/error_intervals.textproto; an
// endpoint's hours (an input) and a configuration that does not fit carry
// none. Bad error-interval data is rejected naming the entry.

#include <string>

#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/sizing/profiles.h"
#include "services/sizing/shipped_model_for_test.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

v1::EstimateRequest Request(v1::Task task, const std::string& preset, const std::string& gpu,
                            int gpus) {
  v1::EstimateRequest r;
  v1::Workload* w = r.mutable_workload();
  w->set_task(task);
  w->mutable_model()->set_preset(preset);
  v1::GpuConfiguration* c = r.add_configurations();
  c->set_gpu_model(gpu);
  c->set_gpus_per_node(gpus);
  c->set_nodes(1);
  c->set_link(gpuadvisor::catalog::v1::LINK_TYPE_NVLINK);
  return r;
}

v1::ConfigurationEstimate One(const v1::EstimateRequest& r) {
  auto resp = ShippedSizingModel().Estimate(r);
  EXPECT_TRUE(resp.ok()) << resp.status();
  return resp.ok() ? resp->estimates(0) : v1::ConfigurationEstimate();
}

void ExpectOrdered(const v1::Interval& i, double value, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_GT(i.p10(), 0);
  EXPECT_LT(i.p10(), i.p90());
  EXPECT_LE(i.p10(), i.p50());
  EXPECT_LE(i.p50(), i.p90());
  // The calibration error is tens of percent, never a factor of two.
  EXPECT_GT(i.p10(), value / 2);
  EXPECT_LT(i.p90(), value * 2);
  EXPECT_LT(i.p10(), value * 1.05);
  EXPECT_GT(i.p90(), value * 0.95);
  EXPECT_THAT(i.basis(), HasSubstr("calibration rows"));
}

TEST(Intervals, TrainingHoursAndTokensPerSecond) {
  v1::EstimateRequest r = Request(v1::TASK_PRETRAIN, "llama-3.1-8b", "H100-SXM", 8);
  r.mutable_workload()->set_sequence_length(4096);
  r.mutable_workload()->set_train_tokens(2e10);
  const v1::ConfigurationEstimate e = One(r);
  ASSERT_TRUE(e.fits()) << e.not_fit_reason();
  ASSERT_GT(e.estimated_hours(), 0);
  ExpectOrdered(e.tokens_per_second_interval(), e.tokens_per_second(), "tokens/s");
  ExpectOrdered(e.estimated_hours_interval(), e.estimated_hours(), "hours");
  // Hours are tokens over the speed: the slow end of the speed is the long
  // end of the hours.
  EXPECT_NEAR(e.estimated_hours_interval().p90() * e.tokens_per_second_interval().p10(),
              e.estimated_hours() * e.tokens_per_second(),
              1e-6 * e.estimated_hours() * e.tokens_per_second());
  EXPECT_THAT(e.tokens_per_second_interval().basis(), HasSubstr("megatron"));
  EXPECT_FALSE(e.has_time_to_first_token_interval());
}

TEST(Intervals, FineTuneUsesTheCatchAllClass) {
  v1::EstimateRequest r = Request(v1::TASK_LORA, "llama-3.1-8b", "H100-SXM", 1);
  r.mutable_workload()->set_sequence_length(2048);
  r.mutable_workload()->set_train_tokens(1e8);
  const v1::ConfigurationEstimate e = One(r);
  ASSERT_TRUE(e.fits()) << e.not_fit_reason();
  ExpectOrdered(e.estimated_hours_interval(), e.estimated_hours(), "hours");
  EXPECT_THAT(e.estimated_hours_interval().basis(), HasSubstr("all frameworks"));
}

TEST(Intervals, ServingTimeToFirstTokenAndBatchHours) {
  v1::EstimateRequest r = Request(v1::TASK_INFERENCE, "llama-3.1-8b", "H100-SXM", 1);
  r.mutable_workload()->set_context_length(4096);
  r.mutable_workload()->set_prompt_tokens(1024);
  r.mutable_workload()->set_output_tokens(256);
  r.mutable_workload()->set_concurrent_sequences(8);
  r.mutable_workload()->set_serving_hours(24);
  v1::ConfigurationEstimate e = One(r);
  ASSERT_TRUE(e.fits()) << e.not_fit_reason();
  ExpectOrdered(e.time_to_first_token_interval(), e.serving().time_to_first_token_seconds(),
                "ttft");
  ExpectOrdered(e.tokens_per_second_interval(), e.tokens_per_second(), "tokens/s");
  EXPECT_FALSE(e.has_estimated_hours_interval()) << "an endpoint's hours are its input";

  r.mutable_workload()->set_task(v1::TASK_BATCH_INFERENCE);
  r.mutable_workload()->set_requests(100000);
  e = One(r);
  ASSERT_TRUE(e.fits()) << e.not_fit_reason();
  ExpectOrdered(e.estimated_hours_interval(), e.estimated_hours(), "batch hours");
}

TEST(Intervals, NoneWhenTheConfigurationDoesNotFit) {
  v1::EstimateRequest r = Request(v1::TASK_FULL_FINETUNE, "llama-3.1-70b", "L4", 1);
  r.mutable_workload()->set_sequence_length(2048);
  r.mutable_workload()->set_train_tokens(1e8);
  const v1::ConfigurationEstimate e = One(r);
  ASSERT_FALSE(e.fits());
  EXPECT_FALSE(e.has_estimated_hours_interval());
  EXPECT_FALSE(e.has_tokens_per_second_interval());
}

TEST(Intervals, BadErrorIntervalDataIsRejectedNamingTheEntry) {
  struct Case {
    const char* text;
    const char* error;
  };
  for (const Case& c : {
           Case{R"(error_intervals { p10_ratio: 0.8 p50_ratio: 1 p90_ratio: 1.2 method: "m"
                  source: "s" })",
                "error_intervals[0].quantity: must be set"},
           Case{R"(error_intervals { quantity: ERROR_QUANTITY_TRAINING_SPEED p10_ratio: 1.3
                  p50_ratio: 1 p90_ratio: 1.2 method: "m" source: "s" })",
                "error_intervals[0]: must have p10_ratio <= p50_ratio <= p90_ratio"},
           Case{R"(error_intervals { quantity: ERROR_QUANTITY_TRAINING_SPEED p10_ratio: 0
                  p50_ratio: 1 p90_ratio: 1.2 method: "m" source: "s" })",
                "error_intervals[0].p10_ratio: must be in (0, 100]"},
           Case{R"(error_intervals { quantity: ERROR_QUANTITY_TRAINING_SPEED p10_ratio: 0.8
                  p50_ratio: 1 p90_ratio: 1.2 method: "m" })",
                "error_intervals[0].source, .method: must be set"},
           Case{R"(error_intervals { quantity: ERROR_QUANTITY_TRAINING_SPEED p10_ratio: 0.8
                  p50_ratio: 1 p90_ratio: 1.2 method: "m" source: "s" }
                  error_intervals { quantity: ERROR_QUANTITY_TRAINING_SPEED p10_ratio: 0.8
                  p50_ratio: 1 p90_ratio: 1.2 method: "m" source: "s" })",
                "error_intervals[1].frameworks: another entry already covers"},
       }) {
    v1::SizingProfiles data;
    ASSERT_TRUE(ParseTextProto(c.text, "test", &data).ok()) << c.text;
    EXPECT_THAT(Profiles::Build(data),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)))
        << c.text;
  }
}

}  // namespace
}  // namespace gpuadvisor::sizing
