#include "services/sizing/hf_config.h"

#include <dirent.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/sizing/kv_cache.h"
#include "services/sizing/model_spec.h"
#include "services/sizing/sizing_model.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::sizing {
namespace {

using ::gpuadvisor::sizing::v1::Model;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kConfigs[] = GPUADVISOR_SOURCE_DIR "/tests/data/hf-configs";

absl::StatusOr<Model> FromFixture(const std::string& name) {
  absl::StatusOr<std::string> text = ReadFile(std::string(kConfigs) + "/" + name);
  if (!text.ok()) return text.status();
  return ModelFromHfConfig(*text);
}

// Published sizes: model cards (Qwen3, gpt-oss, Llama 4, Mixtral, DeepSeek-V3
// technical report arXiv:2412.19437 - 671B total, 37B activated, MTP not
// counted) and the checkpoints' sizes on the Hub.
struct Expected {
  const char* file;
  double params;
  double active_params;  // 0 = dense
  double weight_bytes;   // 0 = params x 2
  int layers, kv_heads, head_dim, sliding_window, sliding_layers;
  bool tied;
};

TEST(HfConfig, EveryRealConfig) {
  GPUADVISOR_REQUIRE_FIXTURE(std::string(kConfigs) + "/Qwen--Qwen3-8B.config.json");
  const Expected cases[] = {
      {"Qwen--Qwen3-8B.config.json", 8.19e9, 0, 0, 36, 8, 128, 0, 0, false},
      {"Qwen--Qwen3-32B.config.json", 32.8e9, 0, 0, 64, 8, 128, 0, 0, false},
      {"Qwen--Qwen3-30B-A3B.config.json", 30.5e9, 3.3e9, 0, 48, 4, 128, 0, 0, false},
      {"Qwen--Qwen3-235B-A22B.config.json", 235e9, 22e9, 0, 94, 4, 128, 0, 0, false},
      {"meta-llama--Meta-Llama-3.1-70B.config.json", 70.55e9, 0, 0, 80, 8, 128, 0, 0, false},
      {"meta-llama--Llama-3.1-70B-Instruct.config.json", 70.55e9, 0, 0, 80, 8, 128, 0, 0, false},
      // Scout: 109B / 17B with its vision tower; the text model is ~108B.
      {"meta-llama--Llama-4-Scout-17B-16E-Instruct.config.json", 108e9, 17e9, 0, 48, 8, 128, 8192,
       36, false},
      {"RedHatAI--Llama-4-Scout-17B-16E-Instruct-FP8-dynamic.config.json", 108e9, 17e9, 109e9, 48,
       8, 128, 8192, 36, false},
      // gpt-oss: 21B / 3.6B and 117B / 5.1B; checkpoints 13.8 GB and 65.3 GB (MXFP4 experts).
      {"openai--gpt-oss-20b.config.json", 20.9e9, 3.6e9, 13.8e9, 24, 8, 64, 128, 12, false},
      {"openai--gpt-oss-120b.config.json", 116.8e9, 5.1e9, 65.3e9, 36, 8, 64, 128, 18, false},
      // DeepSeek: 671B / 37B; FP8 weights with bf16 embeddings, ~675 GB.
      {"deepseek-ai--DeepSeek-V3.config.json", 671e9, 37e9, 673e9, 61, 128, 192, 0, 0, false},
      {"deepseek-ai--DeepSeek-R1.config.json", 671e9, 37e9, 673e9, 61, 128, 192, 0, 0, false},
      {"mistralai--Mixtral-8x22B-v0.1.config.json", 140.6e9, 39.2e9, 0, 56, 8, 128, 0, 0, false},
  };
  std::map<std::string, bool> covered;
  for (const Expected& e : cases) {
    SCOPED_TRACE(e.file);
    absl::StatusOr<Model> m = FromFixture(e.file);
    ASSERT_OK(m);
    covered[e.file] = true;
    EXPECT_NEAR(m->params(), e.params, 0.03 * e.params);
    if (e.active_params > 0) {
      // OpenAI counts gpt-oss's active parameters without the input embedding
      // (a lookup); Model.active_params includes it, as for the other MoEs.
      const double lookup = absl::StartsWith(e.file, "openai--")
                                ? static_cast<double>(m->vocab_size()) * m->hidden_size()
                                : 0.0;
      EXPECT_NEAR(m->active_params() - lookup, e.active_params, 0.05 * e.active_params);
      EXPECT_GT(m->experts(), 0);
    } else {
      EXPECT_EQ(m->experts(), 0);
    }
    const double bytes = e.weight_bytes > 0 ? e.weight_bytes : 2 * e.params;
    EXPECT_NEAR(m->checkpoint_weight_bytes(), bytes, 0.04 * bytes);
    EXPECT_EQ(m->layers(), e.layers);
    EXPECT_EQ(m->kv_heads(), e.kv_heads);
    EXPECT_EQ(m->head_dim(), e.head_dim);
    EXPECT_EQ(m->sliding_window(), e.sliding_window);
    EXPECT_EQ(m->sliding_window_layers(), e.sliding_layers);
    EXPECT_EQ(m->tied_embeddings(), e.tied);
    // The sizing service accepts what the import produces.
    ASSERT_OK(BuildModelSpec(*m, "workload.model"));
  }
  // Every file in the folder is covered: the cases above, and the one family
  // outside the known set, read from its fields (below).
  DIR* dir = opendir(kConfigs);
  ASSERT_NE(dir, nullptr);
  int files = 0;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (!absl::EndsWith(name, ".config.json")) continue;
    ++files;
    if (covered.count(name)) continue;
    EXPECT_EQ(name, "google--gemma-4-26B-A4B.config.json");
  }
  closedir(dir);
  EXPECT_EQ(files, 14);
}

// A MoE family outside the known model_type list (Gemma 4, model_type
// gemma4_text) is read from its fields: num_experts, top_k_experts,
// moe_intermediate_size, and enable_moe_block (a dense MLP of
// intermediate_size beside the experts in every layer). Google's name: 26B
// total, 4B active ("A4B").
TEST(HfConfig, MoeFamilyReadFromItsFields) {
  GPUADVISOR_REQUIRE_FIXTURE(std::string(kConfigs) + "/google--gemma-4-26B-A4B.config.json");
  absl::StatusOr<Model> m = FromFixture("google--gemma-4-26B-A4B.config.json");
  ASSERT_OK(m);
  EXPECT_EQ(m->experts(), 128);
  EXPECT_EQ(m->active_experts(), 8);
  EXPECT_EQ(m->expert_intermediate_size(), 704);
  EXPECT_EQ(m->shared_experts(), 1);
  EXPECT_EQ(m->layers(), 30);
  EXPECT_EQ(m->sliding_window(), 1024);
  EXPECT_EQ(m->sliding_window_layers(), 25);
  EXPECT_TRUE(m->tied_embeddings());
  EXPECT_NEAR(m->params(), 26e9, 0.05 * 26e9);
  EXPECT_NEAR(m->active_params(), 4e9, 0.1 * 4e9);
  ASSERT_OK(BuildModelSpec(*m, "workload.model"));

  // The same fields under a model_type nobody listed, DeepSeek-style shared
  // experts and leading dense layers.
  absl::StatusOr<Model> other = ModelFromHfConfig(R"({"model_type": "new_moe",
      "num_hidden_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
      "num_key_value_heads": 2, "vocab_size": 32000, "intermediate_size": 4096,
      "moe_intermediate_size": 512, "n_routed_experts": 16, "num_experts_per_tok": 2,
      "n_shared_experts": 1, "first_k_dense_replace": 1})");
  ASSERT_OK(other);
  EXPECT_EQ(other->experts(), 16);
  EXPECT_EQ(other->shared_experts(), 1);
  EXPECT_EQ(other->dense_layers(), 1);
  // Per layer: 3 MoE layers of 16 + 1 shared experts of 3 x 1024 x 512, one
  // dense MLP of 3 x 1024 x 4096.
  const double experts = 3 * 17 * 3.0 * 1024 * 512, dense = 3.0 * 1024 * 4096;
  EXPECT_GT(other->params(), experts + dense);
  EXPECT_LT(other->params(), experts + dense + 100e6);

  // Without the standard fields it is still refused by name.
  EXPECT_THAT(ModelFromHfConfig(R"({"model_type": "new_moe", "hidden_size": 1024})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("model_type: unsupported \"new_moe\"")));
}

// The presets of the same models carry the architecture of their published
// config.json.
TEST(HfConfig, PresetsAgreeWithTheirConfigs) {
  GPUADVISOR_REQUIRE_FIXTURE(std::string(kConfigs) + "/Qwen--Qwen3-8B.config.json");
  v1::ModelList presets;
  ASSERT_OK(LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/sizing/models.textproto", &presets));
  std::map<std::string, const Model*> by_preset;
  for (const Model& m : presets.models()) by_preset[m.preset()] = &m;
  const std::pair<const char*, const char*> pairs[] = {
      {"qwen3-8b", "Qwen--Qwen3-8B.config.json"},
      {"qwen3-32b", "Qwen--Qwen3-32B.config.json"},
      {"qwen3-30b-a3b", "Qwen--Qwen3-30B-A3B.config.json"},
      {"qwen3-235b-a22b", "Qwen--Qwen3-235B-A22B.config.json"},
      {"llama-3.1-70b", "meta-llama--Meta-Llama-3.1-70B.config.json"},
      {"llama-4-scout", "meta-llama--Llama-4-Scout-17B-16E-Instruct.config.json"},
      {"gpt-oss-20b", "openai--gpt-oss-20b.config.json"},
      {"gpt-oss-120b", "openai--gpt-oss-120b.config.json"},
      {"deepseek-r1", "deepseek-ai--DeepSeek-R1.config.json"},
      {"mixtral-8x22b", "mistralai--Mixtral-8x22B-v0.1.config.json"},
  };
  for (const auto& [preset, file] : pairs) {
    SCOPED_TRACE(preset);
    ASSERT_TRUE(by_preset.count(preset));
    const Model& p = *by_preset.at(preset);
    absl::StatusOr<Model> c = FromFixture(file);
    ASSERT_OK(c);
    EXPECT_EQ(p.layers(), c->layers());
    EXPECT_EQ(p.hidden_size(), c->hidden_size());
    EXPECT_EQ(p.attention_heads(), c->attention_heads());
    EXPECT_EQ(p.kv_heads(), c->kv_heads());
    EXPECT_EQ(p.head_dim(), c->head_dim());
    EXPECT_EQ(p.vocab_size(), c->vocab_size());
    EXPECT_EQ(p.experts(), c->experts());
    EXPECT_EQ(p.active_experts(), c->active_experts());
    EXPECT_EQ(p.kv_lora_rank(), c->kv_lora_rank());
    EXPECT_EQ(p.sliding_window(), c->sliding_window());
    EXPECT_EQ(p.sliding_window_layers(), c->sliding_window_layers());
    EXPECT_EQ(p.tied_embeddings(), c->tied_embeddings());
    // Scout's card counts its vision encoder (109B); the others match to 1%.
    EXPECT_NEAR(p.params(), c->params(),
                (p.preset() == "llama-4-scout" ? 0.02 : 0.01) * p.params());
    if (p.active_params() > 0) {
      EXPECT_NEAR(p.active_params(), c->active_params(), 0.02 * p.active_params());
    }
    if (p.checkpoint_weight_bytes() > 0) {
      EXPECT_NEAR(p.checkpoint_weight_bytes(), c->checkpoint_weight_bytes(),
                  0.01 * p.checkpoint_weight_bytes());
    }
  }
}

TEST(HfConfig, MlaAndSlidingWindowKvCache) {
  GPUADVISOR_REQUIRE_FIXTURE(std::string(kConfigs) + "/deepseek-ai--DeepSeek-V3.config.json");
  absl::StatusOr<Model> deepseek = FromFixture("deepseek-ai--DeepSeek-V3.config.json");
  ASSERT_OK(deepseek);
  EXPECT_EQ(deepseek->kv_lora_rank(), 512);
  EXPECT_EQ(deepseek->qk_rope_head_dim(), 64);
  EXPECT_EQ(deepseek->dense_layers(), 3);
  EXPECT_EQ(deepseek->shared_experts(), 1);
  EXPECT_THAT(deepseek->quantization(), HasSubstr("fp8"));
  // 61 layers x (512 + 64) per token, not 2 x 128 heads x 192.
  EXPECT_DOUBLE_EQ(KvCacheElementsPerSequence(*deepseek, 1000), 61.0 * 576 * 1000);

  absl::StatusOr<Model> oss = FromFixture("openai--gpt-oss-120b.config.json");
  ASSERT_OK(oss);
  EXPECT_THAT(oss->quantization(), HasSubstr("mxfp4"));
  // 18 full layers keep 8192 tokens, 18 sliding layers keep 128.
  EXPECT_DOUBLE_EQ(KvCacheElementsPerSequence(*oss, 8192),
                   2.0 * 8 * 64 * (18 * 8192.0 + 18 * 128.0));
  EXPECT_DOUBLE_EQ(KvCacheElementsPerSequence(*oss, 100), 2.0 * 8 * 64 * 36 * 100);

  absl::StatusOr<Model> scout =
      FromFixture("meta-llama--Llama-4-Scout-17B-16E-Instruct.config.json");
  ASSERT_OK(scout);
  EXPECT_DOUBLE_EQ(KvCacheElementsPerSequence(*scout, 100000),
                   2.0 * 8 * 128 * (12 * 100000.0 + 36 * 8192.0));
}

// Configs written the way the published ones are, for families with no
// fixture here (Gemma 3, Gemma 2, Mistral, Phi-3/4, Qwen2): the numbers are
// those of the model's config.json.
TEST(HfConfig, FamiliesWithoutFixtures) {
  // google/gemma-3-27b-it text_config (sliding_window_pattern 6, 1024 window).
  absl::StatusOr<Model> gemma3 = ModelFromHfConfig(R"({
    "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "text_config": {"model_type": "gemma3_text", "hidden_size": 5376, "num_hidden_layers": 62,
      "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
      "intermediate_size": 21504, "vocab_size": 262208, "sliding_window": 1024,
      "sliding_window_pattern": 6, "max_position_embeddings": 131072},
    "torch_dtype": "bfloat16"})");
  ASSERT_OK(gemma3);
  EXPECT_NEAR(gemma3->params(), 27.0e9, 0.03 * 27.0e9);  // 27B with a 0.4B vision tower
  EXPECT_TRUE(gemma3->tied_embeddings());                // Gemma's default
  EXPECT_EQ(gemma3->sliding_window(), 1024);
  EXPECT_EQ(gemma3->sliding_window_layers(), 52);  // 62 - 62/6 global
  EXPECT_THAT(gemma3->source(), HasSubstr("text model only"));

  absl::StatusOr<Model> gemma2 = ModelFromHfConfig(R"({"model_type": "gemma2",
    "hidden_size": 3584, "num_hidden_layers": 42, "num_attention_heads": 16,
    "num_key_value_heads": 8, "head_dim": 256, "intermediate_size": 14336,
    "vocab_size": 256000, "sliding_window": 4096})");
  ASSERT_OK(gemma2);
  EXPECT_NEAR(gemma2->params(), 9.242e9, 0.02 * 9.242e9);
  EXPECT_EQ(gemma2->sliding_window_layers(), 21);

  // mistralai/Mistral-Small-24B-Base-2501: no window.
  absl::StatusOr<Model> small = ModelFromHfConfig(R"({"model_type": "mistral",
    "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 32768,
    "vocab_size": 131072, "sliding_window": null, "tie_word_embeddings": false})");
  ASSERT_OK(small);
  EXPECT_NEAR(small->params(), 23.57e9, 0.02 * 23.57e9);
  EXPECT_EQ(small->sliding_window(), 0);

  // Mistral 7B v0.1: a 4096 window on every layer.
  absl::StatusOr<Model> mistral = ModelFromHfConfig(R"({"model_type": "mistral",
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
    "sliding_window": 4096})");
  ASSERT_OK(mistral);
  EXPECT_NEAR(mistral->params(), 7.242e9, 0.01 * 7.242e9);
  EXPECT_EQ(mistral->sliding_window_layers(), 32);

  // microsoft/phi-4 (phi3 architecture).
  absl::StatusOr<Model> phi4 = ModelFromHfConfig(R"({"model_type": "phi3",
    "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 40,
    "num_key_value_heads": 10, "intermediate_size": 17920, "vocab_size": 100352,
    "sliding_window": null, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})");
  ASSERT_OK(phi4);
  EXPECT_NEAR(phi4->params(), 14.66e9, 0.02 * 14.66e9);

  // A 4-bit bitsandbytes Qwen2.5-7B: weights shrink, params do not.
  absl::StatusOr<Model> qwen = ModelFromHfConfig(R"({"model_type": "qwen2",
    "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
    "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
    "use_sliding_window": false, "sliding_window": 131072,
    "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true,
                            "bnb_4bit_quant_type": "nf4"}})");
  ASSERT_OK(qwen);
  EXPECT_NEAR(qwen->params(), 7.616e9, 0.01 * 7.616e9);
  EXPECT_EQ(qwen->sliding_window(), 0);
  EXPECT_LT(qwen->checkpoint_weight_bytes(), 0.4 * 2 * qwen->params());
  EXPECT_THAT(qwen->quantization(), HasSubstr("nf4"));
}

// Through the sizing service's own path: a workload that names its model by
// config.json text, with an override, sized on one GPU.
TEST(HfConfig, EstimateWithAConfigJson) {
  absl::StatusOr<SizingModel> sizing = SizingModel::FromDataDir(GPUADVISOR_SOURCE_DIR "/data");
  ASSERT_OK(sizing);
  v1::EstimateRequest request;
  v1::Workload& w = *request.mutable_workload();
  w.set_task(v1::TASK_INFERENCE);
  w.set_context_length(8192);
  w.set_concurrent_sequences(4);
  // mistralai/Mistral-Small-24B-Base-2501, shortened to its architecture keys.
  w.mutable_model()->set_hf_config_json(R"({"architectures": ["MistralForCausalLM"],
    "model_type": "mistral", "hidden_size": 5120, "num_hidden_layers": 40,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "intermediate_size": 32768, "vocab_size": 131072, "max_position_embeddings": 32768,
    "sliding_window": null, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})");
  w.mutable_model()->set_max_context_length(16384);  // an override wins
  v1::GpuConfiguration& c = *request.add_configurations();
  c.set_gpu_model("H100-SXM");
  c.set_gpus_per_node(1);
  c.set_nodes(1);
  absl::StatusOr<v1::EstimateResponse> response = sizing->Estimate(request);
  ASSERT_OK(response);
  EXPECT_NEAR(response->model().params(), 23.57e9, 0.01 * 23.57e9);
  EXPECT_EQ(response->model().max_context_length(), 16384);
  EXPECT_EQ(response->model().layers(), 40);
  EXPECT_TRUE(response->model().hf_config_json().empty());  // not echoed back
  ASSERT_EQ(response->estimates_size(), 1);
  EXPECT_GT(response->estimates(0).memory().weights_bytes(), 40e9);
  // 40 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes per token and sequence.
  EXPECT_GT(response->estimates(0).memory().kv_cache_bytes(), 0);

  w.mutable_model()->set_hf_config_json(R"({"model_type": "gemma4_text"})");
  EXPECT_THAT(sizing->Estimate(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workload.model.hf_config_json.model_type: unsupported")));
  w.mutable_model()->set_preset("llama-3.1-8b");
  EXPECT_THAT(sizing->Estimate(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workload.model.hf_config_json: give a preset or a config.json")));
}

TEST(HfConfig, ErrorsNameTheField) {
  EXPECT_THAT(ModelFromHfConfig("{"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workload.model.hf_config_json: not JSON")));
  EXPECT_THAT(ModelFromHfConfig("[1]"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be a JSON object")));
  EXPECT_THAT(
      ModelFromHfConfig(R"({"model_type": "bert", "hidden_size": 768})"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("workload.model.hf_config_json.model_type: unsupported \"bert\"")));
  EXPECT_THAT(ModelFromHfConfig(R"({"hidden_size": 768})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workload.model.hf_config_json.model_type: missing")));
  EXPECT_THAT(ModelFromHfConfig(R"({"model_type": "llama", "hidden_size": "big",
      "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10,
      "intermediate_size": 8})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workload.model.hf_config_json.hidden_size: must be a")));
  EXPECT_THAT(ModelFromHfConfig(R"({"model_type": "llama", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10})",
                                "m"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("m.intermediate_size: must be a positive integer")));
  EXPECT_THAT(ModelFromHfConfig(R"({"model_type": "mixtral", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10,
      "intermediate_size": 8, "num_local_experts": 8})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("num_experts_per_tok: missing for an MoE model")));
  EXPECT_THAT(ModelFromHfConfig(R"({"model_type": "llama", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10,
      "intermediate_size": 8, "quantization_config": {"quant_method": "hqq"}})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hf_config_json.quantization_config.quant_method: unsupported")));
}

}  // namespace
}  // namespace gpuadvisor::sizing
