#include "services/sizing/sizing_model.h"

#include <cmath>
#include <limits>
#include <map>
#include <ostream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/sizing/shipped_model_for_test.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
namespace cv1 = ::gpuadvisor::catalog::v1;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

v1::GpuConfiguration Config(const std::string& gpu, int gpus_per_node, int nodes = 1,
                            cv1::LinkType link = cv1::LINK_TYPE_NVLINK) {
  v1::GpuConfiguration c;
  c.set_gpu_model(gpu);
  c.set_gpus_per_node(gpus_per_node);
  c.set_nodes(nodes);
  c.set_link(link);
  if (nodes > 1) c.set_fabric(cv1::FABRIC_TYPE_INFINIBAND);
  return c;
}

v1::EstimateRequest Request(v1::Task task, const std::string& preset) {
  v1::EstimateRequest r;
  r.mutable_workload()->set_task(task);
  r.mutable_workload()->mutable_model()->set_preset(preset);
  if (task != v1::TASK_INFERENCE && task != v1::TASK_BATCH_INFERENCE) {
    r.mutable_workload()->set_sequence_length(2048);
  }
  *r.add_configurations() = Config("H100-SXM", 1);
  return r;
}

v1::ConfigurationEstimate One(const v1::EstimateRequest& r) {
  auto resp = ShippedSizingModel().Estimate(r);
  EXPECT_TRUE(resp.ok()) << resp.status();
  return resp.ok() ? resp->estimates(0) : v1::ConfigurationEstimate();
}

// ---- Data files ----

TEST(SizingModelData, EveryPresetAndGpuLoads) {
  const v1::ListModelsResponse models = ShippedSizingModel().ListModels();
  EXPECT_GE(models.models_size(), 24);
  for (const char* name :
       {"llama-2-7b", "llama-3.1-405b", "mixtral-8x7b", "deepseek-v3", "stable-diffusion-xl",
        "whisper-large-v3", "bert-base-cased", "llama-3.2-3b", "gpt3-175b", "llama-65b"}) {
    bool found = false;
    for (const auto& m : models.models()) found |= m.preset() == name;
    EXPECT_TRUE(found) << name;
  }
  for (const auto& m : models.models()) {
    EXPECT_FALSE(m.source().empty()) << m.preset();
    EXPECT_GT(m.layers(), 0) << m.preset();
  }
  for (const char* gpu : {"B200",         "H200",      "H100-SXM",       "H100-PCIE", "H100-NVL",
                          "GH200",        "A100-80GB", "A100-80GB-PCIE", "A100-40GB", "L40S",
                          "L40",          "L4",        "A10G",           "A10",       "T4",
                          "V100",         "V100-32GB", "RTX-4090",       "RTX-3090",  "RTX-A6000",
                          "RTX-6000-ADA", "MI300X",    "MI250X",         "GAUDI2",    "GAUDI3"}) {
    const GpuSpec* g = ShippedSizingModel().FindGpu(gpu);
    ASSERT_NE(g, nullptr) << gpu;
    EXPECT_EQ(g->name, gpu);
  }
  ASSERT_NE(ShippedSizingModel().FindGpu("RTX A6000"), nullptr);
  EXPECT_EQ(ShippedSizingModel().FindGpu("rtxa6000")->name, "RTX-A6000");
  EXPECT_EQ(ShippedSizingModel().FindGpu("H100")->name, "H100-SXM");
  EXPECT_EQ(ShippedSizingModel().FindGpu("T4")->bf16_flops, 0.0);
}

TEST(SizingModelData, CreateRejectsBadEntries) {
  v1::ModelList models;
  v1::Model* m = models.add_models();
  m->set_preset("bad");
  m->set_params(1e9);
  m->set_layers(2);
  m->set_hidden_size(100);
  m->set_attention_heads(3);
  EXPECT_THAT(SizingModel::Create(models, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("models[0].attention_heads")));
  cv1::GpuList gpus;
  cv1::Gpu* g = gpus.add_gpus();
  g->set_name("X");
  g->set_memory_bytes(0);
  EXPECT_THAT(SizingModel::Create({}, gpus),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gpus[0].memory_bytes")));
}

// ---- Validation: each bad input gives the exact code and field path. ----

struct BadCase {
  const char* name;
  void (*mutate)(v1::EstimateRequest*);
  absl::StatusCode code;
  const char* field;
};

// Names the case in ctest's listing instead of dumping its bytes.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name << " -> " << c.field; }

class Validation : public ::testing::TestWithParam<BadCase> {};

TEST_P(Validation, NamesTheField) {
  v1::EstimateRequest r = Request(v1::TASK_FULL_FINETUNE, "llama-2-7b");
  GetParam().mutate(&r);
  auto resp = ShippedSizingModel().Estimate(r);
  EXPECT_THAT(resp, StatusIs(GetParam().code, HasSubstr(GetParam().field)))
      << (resp.ok() ? std::string("OK") : resp.status().ToString());
}

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

INSTANTIATE_TEST_SUITE_P(
    BadInputs, Validation,
    ::testing::Values(
        BadCase{"NegativeParams",
                [](v1::EstimateRequest* r) { r->mutable_workload()->mutable_model()->set_params(-1); },
                absl::StatusCode::kInvalidArgument, "workload.model.params: must be finite, >= 0"},
        BadCase{"ParamsOnlyZero",
                [](v1::EstimateRequest* r) {
                  r->mutable_workload()->mutable_model()->Clear();
                  r->mutable_workload()->mutable_model()->set_active_params(1);
                },
                absl::StatusCode::kInvalidArgument, "workload.model"},
        BadCase{"NanParams",
                [](v1::EstimateRequest* r) { r->mutable_workload()->mutable_model()->set_params(kNan); },
                absl::StatusCode::kInvalidArgument, "workload.model.params: must be finite"},
        BadCase{"AbsurdParams",
                [](v1::EstimateRequest* r) { r->mutable_workload()->mutable_model()->set_params(1e20); },
                absl::StatusCode::kInvalidArgument, "workload.model.params"},
        BadCase{"NegativeSequence",
                [](v1::EstimateRequest* r) { r->mutable_workload()->set_sequence_length(-5); },
                absl::StatusCode::kInvalidArgument, "workload.sequence_length"},
        BadCase{"HeadsDoNotDivideHidden",
                [](v1::EstimateRequest* r) {
                  r->mutable_workload()->mutable_model()->set_attention_heads(30);
                },
                absl::StatusCode::kInvalidArgument, "workload.model.attention_heads"},
        BadCase{"UnknownPreset",
                [](v1::EstimateRequest* r) {
                  r->mutable_workload()->mutable_model()->set_preset("llama-3.1-7b");
                },
                absl::StatusCode::kNotFound,
                "workload.model.preset: unknown preset \"llama-3.1-7b\"; closest: llama-3.1-70b, llama-3.1-8b, "},
        BadCase{"InfTokens",
                [](v1::EstimateRequest* r) { r->mutable_workload()->set_train_tokens(kInf); },
                absl::StatusCode::kInvalidArgument, "workload.train_tokens: must be finite"},
        BadCase{"NanMargin", [](v1::EstimateRequest* r) { r->set_vram_margin(kNan); },
                absl::StatusCode::kInvalidArgument, "vram_margin"},
        BadCase{"NegativeTtftSlo",
                [](v1::EstimateRequest* r) { r->mutable_serving_slo()->set_max_time_to_first_token_seconds(-1); },
                absl::StatusCode::kInvalidArgument, "serving_slo.max_time_to_first_token_seconds: must be finite, >= 0"},
        BadCase{"NanPerUserSlo",
                [](v1::EstimateRequest* r) { r->mutable_serving_slo()->set_min_tokens_per_second_per_user(kNan); },
                absl::StatusCode::kInvalidArgument, "serving_slo.min_tokens_per_second_per_user: must be finite"},
        BadCase{"NanFabric",
                [](v1::EstimateRequest* r) { r->mutable_configurations(0)->set_fabric_gbps(kNan); },
                absl::StatusCode::kInvalidArgument, "configurations[0].fabric_gbps"},
        BadCase{"LoraRankOnFullFinetune",
                [](v1::EstimateRequest* r) { r->mutable_workload()->set_lora_rank(8); },
                absl::StatusCode::kInvalidArgument, "workload.lora_rank"},
        BadCase{"NoConfigurations", [](v1::EstimateRequest* r) { r->clear_configurations(); },
                absl::StatusCode::kInvalidArgument, "configurations: must not be empty"},
        BadCase{"ZeroGpusPerNode",
                [](v1::EstimateRequest* r) { r->mutable_configurations(0)->set_gpus_per_node(0); },
                absl::StatusCode::kInvalidArgument, "configurations[0].gpus_per_node"},
        BadCase{"ZeroNodes",
                [](v1::EstimateRequest* r) { r->mutable_configurations(0)->set_nodes(0); },
                absl::StatusCode::kInvalidArgument, "configurations[0].nodes"},
        BadCase{"UnknownGpu",
                [](v1::EstimateRequest* r) {
                  *r->add_configurations() = Config("H900", 1);
                },
                absl::StatusCode::kNotFound,
                "configurations[1].gpu_model: unknown GPU \"H900\"; closest: H200, "},
        BadCase{"NoTask",
                [](v1::EstimateRequest* r) { r->mutable_workload()->clear_task(); },
                absl::StatusCode::kInvalidArgument, "workload.task"},
        BadCase{"KvHeadsDoNotDivide",
                [](v1::EstimateRequest* r) {
                  r->mutable_workload()->mutable_model()->set_kv_heads(5);
                },
                absl::StatusCode::kInvalidArgument, "workload.model.kv_heads"},
        BadCase{"Int4FullTraining",
                [](v1::EstimateRequest* r) {
                  r->mutable_workload()->set_precision(v1::PRECISION_INT4);
                },
                absl::StatusCode::kInvalidArgument, "workload.precision"},
        BadCase{"UnknownLoraModule",
                [](v1::EstimateRequest* r) {
                  r->mutable_workload()->set_task(v1::TASK_LORA);
                  r->mutable_workload()->add_lora_target_modules("attn");
                },
                absl::StatusCode::kInvalidArgument, "workload.lora_target_modules[0]"},
        BadCase{"ZeroStageFour",
                [](v1::EstimateRequest* r) {
                  r->mutable_workload()->mutable_parallelism()->set_zero_stage(4);
                },
                absl::StatusCode::kInvalidArgument, "workload.parallelism.zero_stage"}),
    [](const ::testing::TestParamInfo<BadCase>& param_info) { return param_info.param.name; });

// Sizing owns the workload defaults: what the request leaves unset is
// filled and reported (EstimateResponse.applied_defaults), the fine-tune's
// default global batch included; what it sets is not reported.
TEST(SizingModel, AppliedDefaultsAreReported) {
  v1::EstimateRequest r = Request(v1::TASK_FULL_FINETUNE, "llama-3.1-8b");
  r.mutable_workload()->clear_sequence_length();
  r.mutable_workload()->set_train_tokens(1e8);
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_GT(resp->applied_defaults_size(), 0);
  std::map<std::string, std::string> applied;
  for (const v1::AppliedDefault& d : resp->applied_defaults()) {
    EXPECT_FALSE(d.reason().empty()) << d.field();
    applied[d.field()] = d.value();
  }
  EXPECT_EQ(applied["workload.sequence_length"], "2048");
  EXPECT_EQ(applied["workload.precision"], "PRECISION_BF16");
  EXPECT_EQ(applied["workload.optimizer"], "OPTIMIZER_ADAMW");
  EXPECT_EQ(applied["workload.global_batch_size"], "128 sequences (262144 tokens per step)");
  EXPECT_EQ(applied.count("workload.train_tokens"), 0u);
  EXPECT_EQ(resp->estimates(0).plan().global_batch_size() * 2048 >= 262144, true);

  r.mutable_workload()->set_global_batch_size(64);
  r.mutable_workload()->set_sequence_length(4096);
  resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok()) << resp.status();
  for (const v1::AppliedDefault& d : resp->applied_defaults()) {
    EXPECT_NE(d.field(), "workload.global_batch_size");
    EXPECT_NE(d.field(), "workload.sequence_length");
  }
}

TEST(SizingModel, ByteCountsAreNeverNegative) {
  v1::EstimateRequest r = Request(v1::TASK_INFERENCE, "gpt2");
  r.mutable_workload()->set_context_length(16);
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok()) << resp.status();
  const auto& m = resp->estimates(0).memory();
  for (int64_t b : {m.weights_bytes(), m.gradients_bytes(), m.optimizer_bytes(),
                    m.activations_bytes(), m.kv_cache_bytes(), m.overhead_bytes()}) {
    EXPECT_GE(b, 0);
  }
  EXPECT_GT(m.total_bytes(), 0);
  EXPECT_GT(resp->estimates(0).tokens_per_second(), 0);
}

TEST(SizingModel, ExplicitArchitectureDerivesParams) {
  v1::EstimateRequest r = Request(v1::TASK_INFERENCE, "");
  v1::Model* m = r.mutable_workload()->mutable_model();
  m->set_layers(32);
  m->set_hidden_size(4096);
  m->set_attention_heads(32);
  m->set_kv_heads(8);
  m->set_intermediate_size(14336);
  m->set_vocab_size(128256);
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok()) << resp.status();
  // Llama-3.1-8B's shape: 8.03B parameters (HANDBOOK A3).
  EXPECT_NEAR(resp->totals().params() / 8.03e9, 1.0, 0.01);
}

// ---- Plan selection ----

TEST(PlanSelection, Full70BFinetuneOn8xH100PicksZero3) {
  v1::EstimateRequest r = Request(v1::TASK_FULL_FINETUNE, "llama-3.1-70b");
  *r.mutable_configurations(0) = Config("H100-SXM", 8);
  v1::ConfigurationEstimate e = One(r);
  EXPECT_EQ(e.plan().zero_stage(), 3);
  EXPECT_EQ(e.plan().tensor_parallel(), 1);
  // 16 B/param x 70.6B / 8 GPUs = 141 GB: needs offload or more GPUs.
  EXPECT_FALSE(e.fits());
  EXPECT_THAT(e.not_fit_reason(), HasSubstr("per GPU"));
  // With the optimizer on the CPU (torchtune's 70B recipe) it fits.
  r.mutable_workload()->mutable_parallelism()->set_offload(v1::OFFLOAD_OPTIMIZER_CPU);
  e = One(r);
  EXPECT_TRUE(e.fits()) << e.not_fit_reason();
  EXPECT_EQ(e.plan().zero_stage(), 3);
  EXPECT_THAT(e.plan().description(), HasSubstr("ZeRO-3"));
}

// The host link is the offer's (catalog Offer.host_link): offload runs at
// 62.5% of its nominal one-way rate; unset keeps 20 GB/s, the Gen4 x16 reading.
TEST(PlanSelection, OffloadTimeFollowsTheOffersHostLink) {
  v1::EstimateRequest r = Request(v1::TASK_FULL_FINETUNE, "llama-3.1-70b");
  r.mutable_workload()->mutable_parallelism()->set_offload(v1::OFFLOAD_OPTIMIZER_CPU);
  r.mutable_workload()->set_train_tokens(100e6);
  *r.mutable_configurations(0) = Config("H100-SXM", 8);
  for (double host : {16e9, 32e9, 64e9}) {
    *r.add_configurations() = Config("H100-SXM", 8);
    r.mutable_configurations(r.configurations_size() - 1)->set_host_link_bytes_per_second(host);
  }
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->estimates_size(), 4);
  for (const auto& e : resp->estimates()) {
    ASSERT_TRUE(e.fits()) << e.not_fit_reason();
    ASSERT_GT(e.estimated_hours(), 0);
  }
  const double unset = resp->estimates(0).estimated_hours();
  EXPECT_DOUBLE_EQ(resp->estimates(2).estimated_hours(), unset);  // Gen4 x16 = the default
  EXPECT_GT(resp->estimates(1).estimated_hours(), unset);         // Gen3 x16: slower
  EXPECT_LT(resp->estimates(3).estimated_hours(), unset);         // Gen5 x16: faster
}

TEST(PlanSelection, QLora7BFitsOne24GbGpu) {
  v1::EstimateRequest r = Request(v1::TASK_QLORA, "llama-2-7b");
  *r.mutable_configurations(0) = Config("RTX-4090", 1);
  const v1::ConfigurationEstimate e = One(r);
  EXPECT_TRUE(e.fits()) << e.not_fit_reason();
  EXPECT_EQ(e.plan().data_parallel(), 1);
  EXPECT_LT(e.memory().total_bytes(), 24e9);
}

TEST(PlanSelection, QLora70BNeedsAtLeast48Gb) {
  v1::EstimateRequest r = Request(v1::TASK_QLORA, "llama-3.1-70b");
  *r.mutable_configurations(0) = Config("RTX-4090", 1);
  *r.add_configurations() = Config("A100-80GB", 1);
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok());
  EXPECT_FALSE(resp->estimates(0).fits());
  EXPECT_TRUE(resp->estimates(1).fits()) << resp->estimates(1).not_fit_reason();
  EXPECT_GE(resp->estimates(1).memory().total_bytes(), 40e9);
  EXPECT_GE(resp->totals().min_vram_bytes_single_gpu(), 40e9);
}

TEST(PlanSelection, Inference7BAt4kFits24Gb) {
  v1::EstimateRequest r = Request(v1::TASK_INFERENCE, "llama-2-7b");
  r.mutable_workload()->set_context_length(4096);
  r.mutable_workload()->set_concurrent_sequences(1);
  *r.mutable_configurations(0) = Config("L4", 1);
  const v1::ConfigurationEstimate e = One(r);
  EXPECT_TRUE(e.fits()) << e.not_fit_reason();
  EXPECT_EQ(e.plan().tensor_parallel(), 1);
  EXPECT_GT(e.memory().kv_cache_bytes(), 2.0e9);
  EXPECT_DOUBLE_EQ(e.estimated_hours(), 720);
}

TEST(PlanSelection, Pretrain405BNeedsMultiNodeWithFabric) {
  v1::EstimateRequest r = Request(v1::TASK_PRETRAIN, "llama-3.1-405b");
  r.mutable_workload()->set_sequence_length(8192);
  *r.mutable_configurations(0) = Config("H100-SXM", 8);
  *r.add_configurations() = Config("H100-SXM", 8, 16);
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok());
  EXPECT_FALSE(resp->estimates(0).fits());
  const v1::ConfigurationEstimate& multi = resp->estimates(1);
  EXPECT_TRUE(multi.fits()) << multi.not_fit_reason();
  EXPECT_TRUE(multi.plan().needs_fabric());
  EXPECT_GT(multi.plan().tensor_parallel() * multi.plan().pipeline_parallel() *
                multi.plan().data_parallel(),
            8);
  // Without a fabric the same nodes cannot train together.
  r.mutable_configurations(1)->set_fabric(cv1::FABRIC_TYPE_NONE);
  resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok());
  EXPECT_FALSE(resp->estimates(1).fits());
  EXPECT_THAT(resp->estimates(1).not_fit_reason(), HasSubstr("fabric"));
}

TEST(PlanSelection, PcieBoxIsSlowerThanNvlink) {
  v1::EstimateRequest r = Request(v1::TASK_FULL_FINETUNE, "llama-3.1-8b");
  r.mutable_workload()->set_train_tokens(1e9);
  *r.mutable_configurations(0) = Config("H100-SXM", 8, 1, cv1::LINK_TYPE_NVLINK);
  *r.add_configurations() = Config("H100-SXM", 8, 1, cv1::LINK_TYPE_PCIE);
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok());
  const auto& nvlink = resp->estimates(0);
  const auto& pcie = resp->estimates(1);
  EXPECT_TRUE(nvlink.fits());
  EXPECT_GT(nvlink.tokens_per_second(), 1.2 * pcie.tokens_per_second());
  EXPECT_GT(pcie.communication_fraction(), nvlink.communication_fraction());
  EXPECT_LT(nvlink.estimated_hours(), pcie.estimated_hours());
}

TEST(PlanSelection, SlowFabricIsSlower) {
  v1::EstimateRequest r = Request(v1::TASK_PRETRAIN, "llama-3.1-8b");
  r.mutable_workload()->set_train_tokens(1e11);
  *r.mutable_configurations(0) = Config("H100-SXM", 8, 4);
  v1::GpuConfiguration slow = Config("H100-SXM", 8, 4);
  slow.set_fabric(cv1::FABRIC_TYPE_ETHERNET);
  slow.set_fabric_gbps(100);
  *r.add_configurations() = slow;
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok());
  EXPECT_GT(resp->estimates(0).tokens_per_second(), resp->estimates(1).tokens_per_second());
}

TEST(PlanSelection, HintsAreHonoured) {
  v1::EstimateRequest r = Request(v1::TASK_FULL_FINETUNE, "llama-3.1-8b");
  r.mutable_workload()->mutable_parallelism()->set_zero_stage(2);
  *r.mutable_configurations(0) = Config("H100-SXM", 8);
  v1::ConfigurationEstimate e = One(r);
  EXPECT_EQ(e.plan().zero_stage(), 2);
  r.mutable_workload()->mutable_parallelism()->set_tensor_parallel(4);
  e = One(r);
  EXPECT_EQ(e.plan().tensor_parallel(), 4);
  EXPECT_EQ(e.plan().data_parallel(), 2);
  EXPECT_TRUE(e.plan().needs_nvlink());
}

TEST(PlanSelection, ServingShardsWhenOneGpuIsTooSmall) {
  v1::EstimateRequest r = Request(v1::TASK_INFERENCE, "llama-3.1-70b");
  r.mutable_workload()->set_context_length(8192);
  *r.mutable_configurations(0) = Config("H100-SXM", 8);
  v1::ConfigurationEstimate e = One(r);
  // 141 GB of bf16 weights do not fit one 80 GB GPU. For one user the
  // fastest layout is one TP8 replica (lowest inter-token latency); TP4 x 2
  // replicas is the runner-up.
  EXPECT_TRUE(e.fits());
  EXPECT_EQ(e.plan().tensor_parallel(), 8);
  EXPECT_EQ(e.plan().replicas(), 1);
  EXPECT_TRUE(e.plan().needs_nvlink());
  EXPECT_EQ(e.runner_up().tensor_parallel(), 4);
  EXPECT_THAT(e.runner_up_reason(), HasSubstr("ms"));
  EXPECT_GT(e.serving().max_concurrency_per_replica(), 1);
  // 64 users: TP2 does not fit the weights with room for KV; more replicas
  // share the users.
  r.mutable_workload()->set_concurrent_sequences(64);
  e = One(r);
  EXPECT_TRUE(e.fits()) << e.not_fit_reason();
  EXPECT_EQ(e.serving().concurrency_per_replica() * e.serving().replicas(), 64);
}

TEST(Throughput, BatchInferenceHoursAndMoeActiveCompute) {
  v1::EstimateRequest r = Request(v1::TASK_BATCH_INFERENCE, "mixtral-8x7b");
  r.mutable_workload()->set_requests(100000);
  r.mutable_workload()->set_context_length(2048);
  r.mutable_workload()->set_output_tokens(512);
  *r.mutable_configurations(0) = Config("H100-SXM", 8);
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok());
  const auto& e = resp->estimates(0);
  EXPECT_TRUE(e.fits());
  EXPECT_GT(e.estimated_hours(), 0);
  EXPECT_GT(e.prefill_tokens_per_second(), e.tokens_per_second() / 100);
  // MoE: all experts in memory.
  EXPECT_GT(resp->totals().weights_bytes(), 90e9);
}

// Every note carries a code and a severity: context already in the numbers
// (the assumed framework, the KV-cache capacity) is INFO; what changes
// whether the job works or what it costs (PCIe-bound TP, FP8 on a GPU
// without it, a configuration that does not fit) is WARNING. `notes` keeps
// every text for clients that read text only.
TEST(Notes, EveryNoteHasACodeAndASeverity) {
  v1::EstimateRequest serve = Request(v1::TASK_INFERENCE, "llama-3.1-8b");
  serve.mutable_workload()->set_context_length(8192);
  serve.mutable_workload()->set_concurrent_sequences(32);
  serve.clear_configurations();
  *serve.add_configurations() = Config("RTX-3090", 4, 1, cv1::LINK_TYPE_PCIE);
  v1::EstimateRequest fp8 = Request(v1::TASK_FULL_FINETUNE, "llama-3.2-3b");
  fp8.mutable_workload()->set_precision(v1::PRECISION_FP8);
  fp8.mutable_workload()->set_train_tokens(1e8);
  fp8.clear_configurations();
  *fp8.add_configurations() = Config("A100-80GB", 8);
  v1::EstimateRequest too_small = Request(v1::TASK_FULL_FINETUNE, "llama-3.1-70b");
  too_small.mutable_workload()->set_train_tokens(1e8);

  std::map<std::string, v1::NoteSeverity> seen;
  for (const v1::EstimateRequest& r : {serve, fp8, too_small}) {
    const v1::ConfigurationEstimate e = One(r);
    ASSERT_FALSE(e.structured_notes().empty());
    EXPECT_EQ(e.notes_size(), e.structured_notes_size());
    for (int i = 0; i < e.structured_notes_size(); ++i) {
      const v1::Note& n = e.structured_notes(i);
      EXPECT_FALSE(n.code().empty()) << n.text();
      EXPECT_NE(n.severity(), v1::NOTE_SEVERITY_UNSPECIFIED) << n.text();
      EXPECT_EQ(e.notes(i), n.text());
      seen[n.code()] = n.severity();
    }
  }
  EXPECT_EQ(seen["framework_assumed"], v1::NOTE_SEVERITY_INFO);
  EXPECT_EQ(seen["kv_capacity"], v1::NOTE_SEVERITY_INFO);
  EXPECT_EQ(seen["tp_over_pcie"], v1::NOTE_SEVERITY_WARNING);
  EXPECT_EQ(seen["no_fp8"], v1::NOTE_SEVERITY_WARNING);
  EXPECT_EQ(seen["does_not_fit"], v1::NOTE_SEVERITY_WARNING);
}

// Was: 43.6 tokens/s per user x 32 users, far above the 163 tokens/s the
// replica delivers (Llama 3.1 8B, 8k context, 32 users on 4x RTX 3090): the
// per-user figure was 1 / inter-token latency, as if no other user's
// 7936-token prompt were ever prefilled. At full load the users share the
// replica with those prefills, so per-user x concurrency = the replica's
// output rate, and the estimate says what bounds it.
TEST(Serving, PerUserSpeedAtFullLoadAndWhatBoundsTheTotal) {
  v1::EstimateRequest r = Request(v1::TASK_INFERENCE, "llama-3.1-8b");
  r.mutable_workload()->set_context_length(8192);
  r.mutable_workload()->set_concurrent_sequences(32);
  r.clear_configurations();
  *r.add_configurations() = Config("RTX-3090", 4, 1, cv1::LINK_TYPE_PCIE);
  // One replica of all 32 users (TP4); unhinted, the plan search now picks
  // 2 replicas of TP2, which serve each user faster (plan_search_test.cc).
  r.mutable_workload()->mutable_parallelism()->set_tensor_parallel(4);
  const v1::ConfigurationEstimate e = One(r);
  ASSERT_TRUE(e.fits());
  const v1::ServingEstimate& s = e.serving();
  ASSERT_EQ(s.replicas(), 1);
  ASSERT_EQ(s.concurrency_per_replica(), 32);
  EXPECT_EQ(s.throughput_bound(), v1::SERVING_BOUND_PREFILL);
  EXPECT_GT(s.prefill_fraction(), 0.5);
  EXPECT_LT(s.prefill_fraction(), 1.0);
  EXPECT_DOUBLE_EQ(s.decode_tokens_per_second_per_user(), 1.0 / s.inter_token_latency_seconds());
  // Consistent: 32 users' speeds add up to what the replica delivers (their
  // own first-token wait aside), far below 32 x the decode speed.
  EXPECT_NEAR(s.tokens_per_second_per_user() * 32 / s.output_tokens_per_second_per_replica(), 1.0,
              0.05);
  EXPECT_LT(s.tokens_per_second_per_user(), 0.25 * s.decode_tokens_per_second_per_user());

  // Short prompts, long outputs: decode-bound, and each user streams at
  // about the decode speed.
  r.mutable_workload()->set_context_length(2048);
  r.mutable_workload()->set_prompt_tokens(128);
  r.mutable_workload()->set_output_tokens(1024);
  r.mutable_workload()->set_concurrent_sequences(8);
  const v1::ServingEstimate d = One(r).serving();
  EXPECT_EQ(d.throughput_bound(), v1::SERVING_BOUND_DECODE);
  EXPECT_LT(d.prefill_fraction(), 0.1);
  EXPECT_NEAR(d.tokens_per_second_per_user() / d.decode_tokens_per_second_per_user(), 1.0, 0.1);
  EXPECT_LE(d.tokens_per_second_per_user(), d.decode_tokens_per_second_per_user());

  // One user: nothing else to wait for, per-user = decode speed.
  r.mutable_workload()->set_concurrent_sequences(1);
  const v1::ServingEstimate one = One(r).serving();
  EXPECT_NEAR(one.tokens_per_second_per_user(), one.decode_tokens_per_second_per_user(), 1e-9);

  // A batch job without a concurrency runs as many sequences as the KV cache
  // holds; with short prompts the full KV cache is what bounds it.
  v1::EstimateRequest batch = Request(v1::TASK_BATCH_INFERENCE, "llama-3.1-70b");
  batch.mutable_workload()->set_context_length(8192);
  batch.mutable_workload()->set_prompt_tokens(256);
  batch.mutable_workload()->set_output_tokens(2048);
  batch.mutable_workload()->set_requests(1000);
  batch.clear_configurations();
  *batch.add_configurations() = Config("H100-SXM", 4);
  const v1::ConfigurationEstimate kv = One(batch);
  ASSERT_TRUE(kv.fits()) << kv.not_fit_reason();
  EXPECT_EQ(kv.serving().concurrency_per_replica(), kv.serving().max_concurrency_per_replica());
  EXPECT_EQ(kv.serving().throughput_bound(), v1::SERVING_BOUND_KV_CAPACITY);
}

TEST(Memory, OptimizerAccounting) {
  auto per_param = [](v1::Optimizer opt, v1::Precision p) {
    v1::EstimateRequest r = Request(v1::TASK_FULL_FINETUNE, "llama-2-7b");
    r.mutable_workload()->set_optimizer(opt);
    r.mutable_workload()->set_precision(p);
    *r.mutable_configurations(0) = Config("MI300X", 1);
    const auto e = One(r);
    return (e.memory().weights_bytes() + e.memory().gradients_bytes() +
            e.memory().optimizer_bytes()) /
           6.738e9;
  };
  EXPECT_NEAR(per_param(v1::OPTIMIZER_ADAMW, v1::PRECISION_BF16), 16.0, 0.01);
  EXPECT_NEAR(per_param(v1::OPTIMIZER_ADAMW, v1::PRECISION_FP32), 16.0, 0.01);
  EXPECT_NEAR(per_param(v1::OPTIMIZER_ADAMW_8BIT, v1::PRECISION_BF16), 10.0, 0.01);
  EXPECT_NEAR(per_param(v1::OPTIMIZER_SGD, v1::PRECISION_BF16), 12.0, 0.01);
  EXPECT_NEAR(per_param(v1::OPTIMIZER_ADAFACTOR, v1::PRECISION_BF16), 8.0, 0.01);
}

TEST(Memory, LoraTrainableParamsFromRankAndModules) {
  v1::EstimateRequest r = Request(v1::TASK_LORA, "llama-3.1-8b");
  r.mutable_workload()->set_lora_rank(8);
  for (const char* m : {"q", "v", "o", "gate", "up", "down"}) {
    r.mutable_workload()->add_lora_target_modules(m);
  }
  auto resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok());
  EXPECT_NEAR(resp->totals().trainable_params() / 19.7e6, 1.0, 0.02);  // HANDBOOK A1.4
  r.mutable_workload()->set_lora_rank(16);
  r.mutable_workload()->clear_lora_target_modules();
  resp = ShippedSizingModel().Estimate(r);
  ASSERT_TRUE(resp.ok());
  EXPECT_NEAR(resp->totals().trainable_params() / 41.9e6, 1.0, 0.02);
}

}  // namespace
}  // namespace gpuadvisor::sizing
