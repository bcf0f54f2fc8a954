// Fine-tune defaults, through Estimate: without a global_batch_size a
// fine-tune runs the task's default tokens per step from common recipes
// (data/sizing/profiles.textproto batch_defaults), stated in a note; and the
// optimizer update is part of every step's time.

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/sizing/shipped_model_for_test.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
using ::testing::HasSubstr;

v1::EstimateRequest Train(v1::Task task, const std::string& preset, const std::string& gpu,
                          int gpus) {
  v1::EstimateRequest r;
  v1::Workload* w = r.mutable_workload();
  w->set_task(task);
  w->mutable_model()->set_preset(preset);
  w->set_sequence_length(2048);
  w->set_train_tokens(1e9);
  v1::GpuConfiguration* c = r.add_configurations();
  c->set_gpu_model(gpu);
  c->set_gpus_per_node(gpus);
  c->set_nodes(1);
  return r;
}

v1::ConfigurationEstimate One(const v1::EstimateRequest& r) {
  auto resp = ShippedSizingModel().Estimate(r);
  EXPECT_TRUE(resp.ok()) << resp.status();
  return resp.ok() ? resp->estimates(0) : v1::ConfigurationEstimate();
}

std::string NoteText(const v1::ConfigurationEstimate& e, const std::string& code) {
  for (const v1::Note& n : e.structured_notes()) {
    if (n.code() == code) return n.text();
  }
  return "";
}

TEST(FineTuneDefaults, GlobalBatchInTokensFromRecipesIsStated) {
  struct Case {
    v1::Task task;
    const char* preset;
    int gpus;
    double tokens;
  };
  for (const Case& c : {Case{v1::TASK_FULL_FINETUNE, "llama-3.1-8b", 8, 262144},
                        Case{v1::TASK_LORA, "llama-3.1-8b", 1, 65536},
                        Case{v1::TASK_QLORA, "llama-3.1-8b", 1, 65536}}) {
    const v1::ConfigurationEstimate e = One(Train(c.task, c.preset, "H100-SXM", c.gpus));
    ASSERT_TRUE(e.fits()) << v1::Task_Name(c.task) << ": " << e.not_fit_reason();
    const double tokens = static_cast<double>(e.plan().global_batch_size()) * 2048;
    EXPECT_GE(tokens, c.tokens) << v1::Task_Name(c.task);
    EXPECT_LT(tokens, c.tokens * 2) << v1::Task_Name(c.task);
    const std::string note = NoteText(e, "global_batch_assumed");
    EXPECT_THAT(note, HasSubstr(absl::StrCat(static_cast<int64_t>(c.tokens), " tokens per step")))
        << v1::Task_Name(c.task);
  }
  // A given global batch is honoured and no default is stated.
  v1::EstimateRequest r = Train(v1::TASK_LORA, "llama-3.1-8b", "H100-SXM", 1);
  r.mutable_workload()->set_global_batch_size(4);
  const v1::ConfigurationEstimate e = One(r);
  EXPECT_EQ(e.plan().global_batch_size(), 4);
  EXPECT_EQ(NoteText(e, "global_batch_assumed"), "");
}

TEST(FineTuneDefaults, OptimizerStepIsInTheStepTime) {
  // Llama 3.2 1B full fine-tune on one H100, one sequence per micro-batch:
  // two micro-batches per step cost less than two steps of one, by the
  // optimizer update paid once per step (AdamW mixed precision: ~28 bytes
  // per parameter read and written at the achieved bandwidth).
  auto step = [](int global) {
    v1::EstimateRequest r = Train(v1::TASK_FULL_FINETUNE, "llama-3.2-1b", "H100-SXM", 1);
    r.mutable_workload()->set_global_batch_size(global);
    r.mutable_workload()->set_micro_batch_size(1);
    r.mutable_workload()->set_gradient_checkpointing(v1::GRADIENT_CHECKPOINTING_NONE);
    const v1::ConfigurationEstimate e = One(r);
    EXPECT_TRUE(e.fits()) << e.not_fit_reason();
    return e.plan().step_seconds();
  };
  const double one = step(1), two = step(2);
  const double optimizer = 2 * one - two;
  const double params = 1.236e9;  // Llama 3.2 1B
  const GpuSpec* h100 = ShippedSizingModel().FindGpu("H100-SXM");
  ASSERT_NE(h100, nullptr);
  const double expected =
      params * 28 / (h100->memory_bandwidth * h100->decode_bandwidth_efficiency);
  EXPECT_NEAR(optimizer, expected, 0.2 * expected);
  EXPECT_GT(optimizer, 0.1 * one) << "the update is a visible part of a one-sequence step";
}

}  // namespace
}  // namespace gpuadvisor::sizing
