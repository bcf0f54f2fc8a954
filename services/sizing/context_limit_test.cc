// A context beyond the model's maximum, through Estimate: INVALID_ARGUMENT
// naming the field (serving context_length, or prompt_tokens when no context
// is given; training sequence_length), unless the model's RoPE scaling
// extends it (from config.json rope_scaling, or
// workload.model.rope_scaled_max_context_length), which the estimate states.

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/sizing/hf_config.h"
#include "services/sizing/shipped_model_for_test.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

v1::EstimateRequest Serving(const std::string& preset, int context) {
  v1::EstimateRequest r;
  r.mutable_workload()->set_task(v1::TASK_INFERENCE);
  r.mutable_workload()->mutable_model()->set_preset(preset);
  if (context > 0) r.mutable_workload()->set_context_length(context);
  v1::GpuConfiguration* c = r.add_configurations();
  c->set_gpu_model("H100-SXM");
  c->set_gpus_per_node(8);
  c->set_nodes(1);
  return r;
}

bool HasNote(const v1::ConfigurationEstimate& e, const std::string& code) {
  for (const v1::Note& n : e.structured_notes()) {
    if (n.code() == code) return true;
  }
  return false;
}

TEST(ContextLimit, ServingContextBeyondTheMaximumNamesTheField) {
  // Llama 2 7B: max_position_embeddings 4096 (HANDBOOK A3).
  EXPECT_THAT(ShippedSizingModel().Estimate(Serving("llama-2-7b", 8192)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workload.context_length: 8192 tokens exceeds the model's "
                                 "maximum context of 4096 tokens")));
  auto ok = ShippedSizingModel().Estimate(Serving("llama-2-7b", 4096));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_FALSE(HasNote(ok->estimates(0), "rope_scaled_context"));
}

TEST(ContextLimit, PromptAndOutputWithoutAContext) {
  v1::EstimateRequest r = Serving("llama-2-7b", 0);
  r.mutable_workload()->set_prompt_tokens(6000);
  r.mutable_workload()->set_output_tokens(500);
  EXPECT_THAT(ShippedSizingModel().Estimate(r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workload.prompt_tokens: 6500 tokens exceeds")));
}

TEST(ContextLimit, TrainingSequenceBeyondTheMaximum) {
  v1::EstimateRequest r = Serving("llama-2-7b", 0);
  r.mutable_workload()->set_task(v1::TASK_LORA);
  r.mutable_workload()->set_sequence_length(16384);
  EXPECT_THAT(ShippedSizingModel().Estimate(r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workload.sequence_length: 16384 tokens exceeds")));
}

TEST(ContextLimit, RopeScalingGivenWithThePresetAllowsItAndIsStated) {
  v1::EstimateRequest r = Serving("llama-2-7b", 8192);
  r.mutable_workload()->mutable_model()->set_rope_scaled_max_context_length(16384);
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_TRUE(HasNote(resp->estimates(0), "rope_scaled_context"));
  r.mutable_workload()->set_context_length(32768);
  EXPECT_THAT(
      ShippedSizingModel().Estimate(r),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("its RoPE scaling reaches 16384")));
}

// Qwen3 8B's config.json (max_position_embeddings 40960) with the YaRN
// setting its model card gives for long contexts: factor 4 over 32768.
constexpr char kQwen3WithYarn[] = R"({
  "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
  "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36,
  "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
  "vocab_size": 151936, "max_position_embeddings": 40960,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                   "original_max_position_embeddings": 32768}})";

TEST(ContextLimit, RopeScalingFromTheHfConfig) {
  auto m = ModelFromHfConfig(kQwen3WithYarn);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->max_context_length(), 40960);
  EXPECT_EQ(m->rope_scaled_max_context_length(), 131072);
  EXPECT_THAT(m->rope_scaling(), HasSubstr("yarn x4 over 32768"));

  v1::EstimateRequest r = Serving("", 100000);
  r.mutable_workload()->mutable_model()->set_hf_config_json(kQwen3WithYarn);
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_TRUE(HasNote(resp->estimates(0), "rope_scaled_context"));
  r.mutable_workload()->set_context_length(200000);
  EXPECT_THAT(ShippedSizingModel().Estimate(r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workload.context_length: 200000 tokens exceeds")));
}

TEST(ContextLimit, ScalingWithinMaxPositionsExtendsNothing) {
  // Llama 3.1: llama3 x8 over 8192 = 65536 < 131072 already allowed.
  auto m = ModelFromHfConfig(R"({"model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
      "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                       "original_max_position_embeddings": 8192}})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->rope_scaled_max_context_length(), 0);
}

}  // namespace
}  // namespace gpuadvisor::sizing
