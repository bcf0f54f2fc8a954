// Calibration: the sizing model against published measurements and analytic
// results (HANDBOOK.md "Calibration cases"). One row per checked number, each
// naming its source and tolerance. Rows go through SizingModel::Estimate
// except the closed-form checks (ZeRO table, collective time, Megatron
// formulas), which use the public functions in formulas.h that the engine is
// built on.
//
// Rows a case lists but the Workload contract cannot express are named in a
// comment with the reason (e.g. torch.compile, optimizer-in-backward).

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "services/sizing/formulas.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
namespace cv1 = ::gpuadvisor::catalog::v1;

constexpr double kGB = 1e9;
constexpr double kGiB = 1073741824.0;
constexpr double kMiB = 1048576.0;

const SizingModel& Model() {
  static const SizingModel* model = [] {
    auto m = SizingModel::FromDataDir(GPUADVISOR_SOURCE_DIR "/data");
    if (!m.ok()) {
      std::fprintf(stderr, "%s\n", std::string(m.status().message()).c_str());
      std::abort();
    }
    return new SizingModel(*std::move(m));
  }();
  return *model;
}

v1::GpuConfiguration Config(const std::string& gpu, int gpus_per_node, int nodes = 1,
                            cv1::LinkType link = cv1::LINK_TYPE_NVLINK,
                            cv1::FabricType fabric = cv1::FABRIC_TYPE_INFINIBAND,
                            double fabric_gbps = 1600) {
  v1::GpuConfiguration c;
  c.set_gpu_model(gpu);
  c.set_gpus_per_node(gpus_per_node);
  c.set_nodes(nodes);
  c.set_link(gpus_per_node > 1 ? link : cv1::LINK_TYPE_NONE);
  if (nodes > 1) {
    c.set_fabric(fabric);
    c.set_fabric_gbps(fabric_gbps);
  }
  return c;
}

v1::ConfigurationEstimate Run(const v1::Workload& w, const v1::GpuConfiguration& c,
                              const SizingModel& model = Model(),
                              v1::WorkloadTotals* totals = nullptr) {
  v1::EstimateRequest req;
  *req.mutable_workload() = w;
  *req.add_configurations() = c;
  auto resp = model.Estimate(req);
  if (!resp.ok()) {
    ADD_FAILURE() << resp.status();
    return {};
  }
  if (totals != nullptr) *totals = resp->totals();
  return resp->estimates(0);
}

v1::Workload Train(v1::Task task, const std::string& preset, int seq, int micro_batch) {
  v1::Workload w;
  w.set_task(task);
  w.mutable_model()->set_preset(preset);
  w.set_sequence_length(seq);
  w.set_micro_batch_size(micro_batch);
  return w;
}

v1::Workload Serve(const std::string& preset, v1::Precision p, int context, int prompt,
                   int output) {
  v1::Workload w;
  w.set_task(v1::TASK_INFERENCE);
  w.mutable_model()->set_preset(preset);
  w.set_precision(p);
  w.set_context_length(context);
  w.set_prompt_tokens(prompt);
  w.set_output_tokens(output);
  w.set_concurrent_sequences(1);
  return w;
}

double ModelStates(const v1::ConfigurationEstimate& e) {
  return static_cast<double>(e.memory().weights_bytes() + e.memory().gradients_bytes() +
                             e.memory().optimizer_bytes());
}

enum class Check { kWithin, kBelow, kAbove };

struct Row {
  std::string id;      // case and item
  std::string source;  // where the expected value is published
  std::function<double()> got;
  double expected;
  double tolerance;  // relative, for kWithin
  Check check = Check::kWithin;
};

std::vector<Row> Rows() {
  std::vector<Row> rows;
  // ---- B-01: ZeRO Fig. 1, 7.5B on 64 GPUs, model states (analytic). ----
  const char* zero_src = "ZeRO paper (arXiv:1910.02054) Fig. 1, §5.1-5.3";
  rows.push_back({"B-01 baseline DP 7.5B", zero_src,
                  [] { return ZeroModelStateBytesPerGpu(7.5e9, 0, 64) / kGB; }, 120, 0.02});
  rows.push_back({"B-01 ZeRO-1 7.5B Nd=64", zero_src,
                  [] { return ZeroModelStateBytesPerGpu(7.5e9, 1, 64) / kGB; }, 31.4, 0.02});
  rows.push_back({"B-01 ZeRO-2 7.5B Nd=64", zero_src,
                  [] { return ZeroModelStateBytesPerGpu(7.5e9, 2, 64) / kGB; }, 16.6, 0.02});
  rows.push_back({"B-01 ZeRO-3 7.5B Nd=64", zero_src,
                  [] { return ZeroModelStateBytesPerGpu(7.5e9, 3, 64) / kGB; }, 1.88, 0.02});
  // The same through Estimate: ZeRO-1 hint on 8 nodes x 8 A100.
  rows.push_back({"B-01 ZeRO-1 via Estimate", zero_src,
                  [] {
                    v1::Workload w;
                    w.set_task(v1::TASK_PRETRAIN);
                    w.mutable_model()->set_params(7.5e9);
                    w.set_sequence_length(1024);
                    w.mutable_parallelism()->set_zero_stage(1);
                    return ModelStates(Run(w, Config("A100-80GB", 8, 8))) / kGB;
                  },
                  31.4, 0.02});

  // ---- B-02: ZeRO Table 1 (analytic). ----
  const char* t1 = "ZeRO paper Table 1";
  struct Z {
    double params;
    int dp, stage;
    double gb;
  };
  for (const Z& z : {Z{128e9, 64, 1, 536}, Z{128e9, 64, 2, 284}, Z{128e9, 64, 3, 32},
                     Z{1e12, 1024, 1, 4011}, Z{1e12, 1024, 2, 2013}, Z{1e12, 1024, 3, 15.6},
                     Z{7.5e9, 4, 1, 52.5}, Z{7.5e9, 4, 2, 41.3}, Z{7.5e9, 4, 3, 30}}) {
    rows.push_back({"B-02 " + std::to_string(static_cast<int>(z.params / 1e9)) + "B Nd=" +
                        std::to_string(z.dp) + " ZeRO-" + std::to_string(z.stage),
                    t1, [z] { return ZeroModelStateBytesPerGpu(z.params, z.stage, z.dp) / kGB; },
                    z.gb, 0.02});
  }

  // ---- B-04: GPT-2 1.5B anatomy, seq 1024, batch 32. ZeRO counts the
  // transformer blocks only, so the loss is taken as chunked (no logits). ----
  const char* b04 = "ZeRO paper §3.1-3.2";
  auto gpt2 = [](v1::GradientCheckpointing ckpt) {
    v1::Workload w = Train(v1::TASK_PRETRAIN, "gpt2-xl", 1024, 32);
    w.mutable_model()->set_params(1.5e9);
    w.set_gradient_checkpointing(ckpt);
    w.set_chunked_loss(true);
    return Run(w, Config("A100-80GB", 1));
  };
  rows.push_back({"B-04 model states 1.5B", b04,
                  [=] { return ModelStates(gpt2(v1::GRADIENT_CHECKPOINTING_NONE)) / kGB; }, 24,
                  0.02});
  rows.push_back({"B-04 activations, no checkpointing", b04,
                  [=] {
                    return gpt2(v1::GRADIENT_CHECKPOINTING_NONE).memory().activations_bytes() / kGB;
                  },
                  60, 0.30});
  rows.push_back({"B-04 activations, checkpointing", b04,
                  [=] {
                    return gpt2(v1::GRADIENT_CHECKPOINTING_FULL).memory().activations_bytes() / kGB;
                  },
                  8, 0.30});

  // ---- B-06: HF accelerate estimate-memory, bert-base-cased (MiB). ----
  const char* b06 = "huggingface/accelerate docs/source/usage_guides/model_size_estimator.md";
  auto bert_weights = [](v1::Precision p) {
    v1::Workload w = Serve("bert-base-cased", p, 512, 256, 1);
    v1::WorkloadTotals totals;
    Run(w, Config("A100-80GB", 1), Model(), &totals);
    return static_cast<double>(totals.weights_bytes());
  };
  rows.push_back({"B-06 bert-base-cased fp32 weights (MiB)", b06,
                  [=] { return bert_weights(v1::PRECISION_FP32) / kMiB; }, 413.18, 0.01});
  rows.push_back({"B-06 bert-base-cased fp16 weights (MiB)", b06,
                  [=] { return bert_weights(v1::PRECISION_FP16) / kMiB; }, 206.59, 0.01});
  // accelerate divides the whole fp32 size by 4 / 8; real int8/int4 loaders
  // (bitsandbytes, GPTQ, AWQ) keep the embeddings in 16-bit, and int4 adds
  // group-128 scales, which the engine models. The rows check the quantized
  // body: engine bytes with the 23M embedding parameters counted at the
  // target width instead of 16-bit, and int4 without the group scales.
  const double bert_embedding = 28996.0 * 768.0;
  rows.push_back({"B-06 bert-base-cased int8 (MiB, embeddings at 1 B)", b06,
                  [=] {
                    return (bert_weights(v1::PRECISION_INT8) - bert_embedding * (2.0 - 1.0)) / kMiB;
                  },
                  103.29, 0.01});
  rows.push_back({"B-06 bert-base-cased int4 (MiB, embeddings at 0.5 B, no scales)", b06,
                  [=] {
                    const double body = (bert_weights(v1::PRECISION_INT4) - bert_embedding * 2.0) /
                                        (0.5 + 4.0 / 128.0) * 0.5;
                    return (body + bert_embedding * 0.5) / kMiB;
                  },
                  51.65, 0.01});
  auto bert_train = [](v1::Precision p, bool master) {
    v1::Workload w = Train(v1::TASK_FULL_FINETUNE, "bert-base-cased", 128, 1);
    w.set_precision(p);
    w.mutable_parallelism()->set_master_weights(master);
    return ModelStates(Run(w, Config("A100-80GB", 1)));
  };
  rows.push_back({"B-06 training with Adam, fp32 = 4x weights (MiB)", b06,
                  [=] { return bert_train(v1::PRECISION_FP32, false) / kMiB; }, 4 * 413.18, 0.01});
  // accelerate's float16 figure is 4x the fp16 weights (8 B/param): pure
  // 16-bit Adam without a master copy (2 + 2 + 2 x 2).
  rows.push_back({"B-06 training with Adam, fp16 = 4x weights (MiB)", b06,
                  [=] { return bert_train(v1::PRECISION_FP16, false) / kMiB; }, 826.36, 0.01});

  // ---- B-08: PEFT README, A100 80GB, twitter_complaints (fp32, seq 64,
  // batch 8). Architectures from the HF configs. LoRA r=8 on q, v (PEFT
  // default). The "LoRA + DeepSpeed CPU offload" column is not modelled:
  // DeepSpeed ZeRO-3 offloads the frozen fp32 base per layer, which the
  // Offload enum (optimizer / optimizer and parameters) does not separate.
  const char* b08 = "huggingface/peft README.md (table of Dec 2022, commit 5de17518)";
  struct Arch {
    const char* name;
    double params;
    int layers, hidden, heads, head_dim, inter, vocab;
    v1::ModelKind kind;
    bool tied;
  };
  const Arch t0{"bigscience/T0_3B", 2.85e9, 48, 2048, 32, 64, 5120, 32128,
                v1::MODEL_KIND_ENCODER_DECODER, false};
  const Arch mt0{"bigscience/mt0-xxl", 12.9e9, 48, 4096, 64, 64, 10240, 250112,
                 v1::MODEL_KIND_ENCODER_DECODER, false};
  const Arch bloomz{"bigscience/bloomz-7b1", 7.07e9, 30, 4096, 32, 128, 16384, 250880,
                    v1::MODEL_KIND_DECODER, true};
  auto peft = [](const Arch& a, v1::Task task) {
    v1::Workload w;
    w.set_task(task);
    v1::Model* m = w.mutable_model();
    m->set_name(a.name);
    m->set_params(a.params);
    m->set_layers(a.layers);
    m->set_hidden_size(a.hidden);
    m->set_attention_heads(a.heads);
    m->set_head_dim(a.head_dim);
    m->set_intermediate_size(a.inter);
    m->set_vocab_size(a.vocab);
    m->set_kind(a.kind);
    m->set_tied_embeddings(a.tied);
    w.set_precision(v1::PRECISION_FP32);
    w.set_sequence_length(64);
    w.set_micro_batch_size(8);
    w.set_gradient_checkpointing(v1::GRADIENT_CHECKPOINTING_NONE);
    if (task == v1::TASK_LORA) {
      w.set_lora_rank(8);
      w.add_lora_target_modules("q");
      w.add_lora_target_modules("v");
    }
    return Run(w, Config("A100-80GB", 1));
  };
  rows.push_back({"B-08 T0_3B full fine-tune GPU (GB)", b08,
                  [=] { return peft(t0, v1::TASK_FULL_FINETUNE).memory().total_bytes() / kGB; },
                  47.14, 0.20});
  rows.push_back({"B-08 T0_3B LoRA GPU (GB)", b08,
                  [=] { return peft(t0, v1::TASK_LORA).memory().total_bytes() / kGB; }, 14.4,
                  0.20});
  rows.push_back({"B-08 mt0-xxl LoRA GPU (GB)", b08,
                  [=] { return peft(mt0, v1::TASK_LORA).memory().total_bytes() / kGB; }, 56,
                  0.20});
  rows.push_back({"B-08 bloomz-7b1 LoRA GPU (GB)", b08,
                  [=] { return peft(bloomz, v1::TASK_LORA).memory().total_bytes() / kGB; }, 32,
                  0.20});
  rows.push_back({"B-08 mt0-xxl full fine-tune OOM on 80 GB (fits=1)", b08,
                  [=] { return peft(mt0, v1::TASK_FULL_FINETUNE).fits() ? 1.0 : 0.0; }, 0.5, 0,
                  Check::kBelow});
  rows.push_back({"B-08 bloomz-7b1 full fine-tune OOM on 80 GB (fits=1)", b08,
                  [=] { return peft(bloomz, v1::TASK_FULL_FINETUNE).fits() ? 1.0 : 0.0; }, 0.5,
                  0, Check::kBelow});

  // ---- B-10: torchtune ladder, Llama 3.2 3B full fine-tune on one A100,
  // bf16 without a master copy (torchtune trains in pure bf16), batch 2.
  // Peak active memory (GiB). Packed rows use seq 4096; the unpacked rows
  // (baseline, LoRA, QLoRA) are Alpaca samples, modelled as 256 tokens.
  // Not expressible: "+ compile" as its own knob (same inputs as "+ packed",
  // checked against both), "+ optimizer step in backward", "+ activation
  // offload" and the 8-bit row that includes them. ----
  const char* b10 = "pytorch/torchtune README.md (memory/speed ladder, Llama 3.2 3B)";
  auto tune = [](int seq, v1::GradientCheckpointing ckpt, bool chunked,
                 v1::Task task = v1::TASK_FULL_FINETUNE) {
    v1::Workload w = Train(task, "llama-3.2-3b", seq, 2);
    w.set_gradient_checkpointing(ckpt);
    w.set_chunked_loss(chunked);
    w.mutable_parallelism()->set_master_weights(false);
    w.set_train_tokens(1e9);
    if (task != v1::TASK_FULL_FINETUNE) {
      w.set_lora_rank(64);  // torchtune llama3_2 3B LoRA configs: q, v, output_proj + MLP
      for (const char* m : {"q", "v", "o", "gate", "up", "down"}) w.add_lora_target_modules(m);
    }
    return Run(w, Config("A100-80GB", 1));
  };
  rows.push_back({"B-10 baseline, unpacked (GiB)", b10,
                  [=] {
                    return tune(256, v1::GRADIENT_CHECKPOINTING_NONE, false).memory().total_bytes() /
                           kGiB;
                  },
                  25.5, 0.20});
  rows.push_back({"B-10 + packed 4096 (GiB)", b10,
                  [=] {
                    return tune(4096, v1::GRADIENT_CHECKPOINTING_NONE, false).memory().total_bytes() /
                           kGiB;
                  },
                  60.0, 0.20});
  rows.push_back({"B-10 + compile (GiB)", b10,
                  [=] {
                    return tune(4096, v1::GRADIENT_CHECKPOINTING_NONE, false).memory().total_bytes() /
                           kGiB;
                  },
                  51.0, 0.20});
  rows.push_back({"B-10 + chunked CE (GiB)", b10,
                  [=] {
                    return tune(4096, v1::GRADIENT_CHECKPOINTING_NONE, true).memory().total_bytes() /
                           kGiB;
                  },
                  42.9, 0.20});
  rows.push_back({"B-10 + activation checkpointing (GiB)", b10,
                  [=] {
                    return tune(4096, v1::GRADIENT_CHECKPOINTING_FULL, true).memory().total_bytes() /
                           kGiB;
                  },
                  24.9, 0.20});
  rows.push_back({"B-10 LoRA (GiB)", b10,
                  [=] {
                    return tune(256, v1::GRADIENT_CHECKPOINTING_NONE, false, v1::TASK_LORA)
                               .memory()
                               .total_bytes() /
                           kGiB;
                  },
                  8.5, 0.20});
  rows.push_back({"B-10 QLoRA (GiB)", b10,
                  [=] {
                    return tune(256, v1::GRADIENT_CHECKPOINTING_NONE, false, v1::TASK_QLORA)
                               .memory()
                               .total_bytes() /
                           kGiB;
                  },
                  4.6, 0.20});
  rows.push_back({"B-10 + packed tokens/s", b10,
                  [=] {
                    return tune(4096, v1::GRADIENT_CHECKPOINTING_NONE, false).tokens_per_second();
                  },
                  7075, 0.20});

  // ---- B-11: QLoRA paper. ----
  const char* b11 = "QLoRA paper (arXiv:2305.14314) Abstract, §1-2, Table 1";
  rows.push_back({"B-11 LLaMA-65B QLoRA on one GPU < 48 GB", b11,
                  [] {
                    v1::Workload w = Train(v1::TASK_QLORA, "llama-65b", 512, 1);
                    w.set_gradient_checkpointing(v1::GRADIENT_CHECKPOINTING_FULL);
                    return Run(w, Config("RTX-A6000", 1)).memory().total_bytes() / kGB;
                  },
                  48, 0, Check::kBelow});
  rows.push_back({"B-11 LLaMA-65B 16-bit full fine-tune > 780 GB", b11,
                  [] {
                    v1::Workload w = Train(v1::TASK_FULL_FINETUNE, "llama-65b", 512, 1);
                    v1::WorkloadTotals totals;
                    Run(w, Config("A100-80GB", 1), Model(), &totals);
                    return totals.min_vram_bytes_single_gpu() / kGB;
                  },
                  780, 0, Check::kAbove});
  rows.push_back({"B-11 LLaMA-7B 4-bit base + runtime (MB)", b11,
                  [] {
                    v1::Workload w = Train(v1::TASK_QLORA, "llama-2-7b", 512, 1);
                    w.set_lora_rank(1);
                    w.add_lora_target_modules("q");
                    const auto e = Run(w, Config("A100-80GB", 1));
                    return (e.memory().weights_bytes() + e.memory().overhead_bytes()) / 1e6;
                  },
                  5048, 0.15});
  rows.push_back({"B-11 LLaMA-65B NF4+DQ weights (GB)", b11,
                  [] {
                    v1::WorkloadTotals totals;
                    Run(Serve("llama-65b", v1::PRECISION_NF4, 2048, 1024, 256),
                        Config("A100-80GB", 1), Model(), &totals);
                    return totals.weights_bytes() / kGB;
                  },
                  33.6, 0.15});
  struct Guanaco {
    const char* preset;
    double gb;
  };
  for (const Guanaco& g : {Guanaco{"llama-65b", 41}, Guanaco{"llama-2-13b", 10},
                           Guanaco{"llama-2-7b", 6}}) {
    rows.push_back({std::string("B-11 Guanaco deployed NF4, ") + g.preset + " (GB)", b11,
                    [g] {
                      return Run(Serve(g.preset, v1::PRECISION_NF4, 2048, 1024, 256),
                                 Config("A100-80GB", 1))
                                 .memory()
                                 .total_bytes() /
                             kGB;
                    },
                    g.gb, 0.15});
  }
  rows.push_back({"B-11 Guanaco deployed NF4, LLaMA-33B (GB)", b11,
                  [] {
                    v1::Workload w = Serve("llama-2-13b", v1::PRECISION_NF4, 2048, 1024, 256);
                    v1::Model* m = w.mutable_model();
                    m->set_params(32.5e9);
                    m->set_layers(60);
                    m->set_hidden_size(6656);
                    m->set_attention_heads(52);
                    m->set_kv_heads(52);
                    m->set_intermediate_size(17920);
                    return Run(w, Config("A100-80GB", 1)).memory().total_bytes() / kGB;
                  },
                  21, 0.15});

  // ---- B-17: Korthikanti 2022, GPT-3 175B on 64 A100 (TP8 PP8), batch 64. ----
  const char* b17 = "Korthikanti et al. 2022 (arXiv:2205.05198) Tables 3, 5 and App. A";
  rows.push_back({"B-17 activations per layer, no parallelism (GB)", b17,
                  [] {
                    return KorthikantiActivationBytesPerLayer(2048, 1, 12288, 96, 1, false, false) /
                           kGB;
                  },
                  2.87, 0.02});
  rows.push_back({"B-17 activations per layer, TP8+SP+selective (GB)", b17,
                  [] {
                    return KorthikantiActivationBytesPerLayer(2048, 1, 12288, 96, 8, true, true) /
                           kGB;
                  },
                  0.107, 0.02});
  rows.push_back({"B-17 MFU from the FLOP formula at 13.75 s", b17,
                  [] {
                    return MegatronModelFlopsPerIteration(64, 96, 2048, 12288, 51200) /
                           (13.75 * 64 * 312e12);
                  },
                  0.514, 0.02});
  auto gpt3 = [](v1::GradientCheckpointing ckpt) {
    v1::Workload w = Train(v1::TASK_PRETRAIN, "gpt3-175b", 2048, 1);
    w.set_global_batch_size(64);
    w.set_gradient_checkpointing(ckpt);
    w.mutable_parallelism()->set_tensor_parallel(8);
    w.mutable_parallelism()->set_pipeline_parallel(8);
    const auto e = Run(w, Config("A100-80GB", 8, 8));
    return 64.0 * 2048.0 / e.tokens_per_second();
  };
  rows.push_back({"B-17 iteration time, selective recompute (s)", b17,
                  [=] { return gpt3(v1::GRADIENT_CHECKPOINTING_SELECTIVE); }, 13.75, 0.15});
  rows.push_back({"B-17 iteration time, full recompute (s)", b17,
                  [=] { return gpt3(v1::GRADIENT_CHECKPOINTING_FULL); }, 18.13, 0.15});

  // ---- B-19: KV cache, analytic (memory x TP shards = whole cache). ----
  const char* b19 = "HANDBOOK A1.7 formula; vllm-project/vllm vllm/v1/kv_cache_interface.py";
  auto kv_total = [](const std::string& preset, v1::Precision p, int ctx,
                     const v1::GpuConfiguration& c) {
    v1::Workload w = Serve(preset, p, ctx, ctx / 2, ctx / 4);
    w.set_kv_cache_precision(v1::PRECISION_BF16);
    const auto e = Run(w, c);
    const double shards = e.plan().tensor_parallel() * e.plan().pipeline_parallel();
    return e.memory().kv_cache_bytes() * (preset == "deepseek-v3" ? 1.0 : shards);
  };
  rows.push_back({"B-19 Llama-2-70B fp16 4096 tokens (GiB)", b19,
                  [=] { return kv_total("llama-2-70b", v1::PRECISION_FP16, 4096, Config("MI300X", 1)) / kGiB; },
                  1.25, 0.01});
  rows.push_back({"B-19 Llama-2-7B 4096 tokens (GiB)", b19,
                  [=] { return kv_total("llama-2-7b", v1::PRECISION_BF16, 4096, Config("A100-80GB", 1)) / kGiB; },
                  2.0, 0.01});
  rows.push_back({"B-19 Llama-3.1-8B 128k (GiB)", b19,
                  [=] { return kv_total("llama-3.1-8b", v1::PRECISION_BF16, 131072, Config("H200", 1)) / kGiB; },
                  16, 0.01});
  rows.push_back({"B-19 Llama-3.1-405B 128k (GiB)", b19,
                  [=] { return kv_total("llama-3.1-405b", v1::PRECISION_FP8, 131072, Config("MI300X", 8)) / kGiB; },
                  63, 0.01});
  rows.push_back({"B-19 DeepSeek-V3 MLA bytes per token", b19,
                  [=] { return kv_total("deepseek-v3", v1::PRECISION_FP8, 1000, Config("MI300X", 8)) / 1000; },
                  70272, 0.01});

  // ---- B-20: gpt-fast batch-1 decode, A100-80GB (power-capped 330 W),
  // 5-token prompt, 200 new tokens. ----
  const char* b20 = "pytorch-labs/gpt-fast README.md at 32971d31";
  auto decode = [](const std::string& preset, v1::Precision p, int tp,
                   const SizingModel& model = Model(), const std::string& gpu = "A100-80GB") {
    v1::Workload w = Serve(preset, p, 512, 5, 200);
    if (tp > 1) w.mutable_parallelism()->set_tensor_parallel(tp);
    return Run(w, Config(gpu, tp), model).tokens_per_second();
  };
  struct Decode {
    const char* preset;
    v1::Precision p;
    int tp;
    double tps;
    double tol;
  };
  for (const Decode& d : {Decode{"llama-2-7b", v1::PRECISION_BF16, 1, 104.9, 0.2},
                          Decode{"llama-2-7b", v1::PRECISION_INT8, 1, 155.58, 0.2},
                          Decode{"llama-2-7b", v1::PRECISION_INT4, 1, 196.80, 0.2},
                          Decode{"llama-2-70b", v1::PRECISION_INT8, 1, 19.13, 0.2},
                          Decode{"llama-2-70b", v1::PRECISION_INT4, 1, 25.25, 0.2},
                          Decode{"llama-3.1-8b", v1::PRECISION_BF16, 1, 93.89, 0.2},
                          Decode{"llama-3.1-8b", v1::PRECISION_INT8, 1, 137.64, 0.2},
                          Decode{"llama-3.1-70b", v1::PRECISION_INT8, 1, 18.04, 0.2},
                          Decode{"mixtral-8x7b", v1::PRECISION_INT8, 1, 97.92, 0.2},
                          Decode{"llama-2-7b", v1::PRECISION_BF16, 2, 168.84, 0.3},
                          Decode{"llama-2-7b", v1::PRECISION_BF16, 4, 254.02, 0.3},
                          Decode{"llama-2-7b", v1::PRECISION_BF16, 8, 328.43, 0.3},
                          Decode{"llama-2-70b", v1::PRECISION_BF16, 2, 21.32, 0.3},
                          Decode{"llama-2-70b", v1::PRECISION_BF16, 4, 38.01, 0.3},
                          Decode{"llama-2-70b", v1::PRECISION_BF16, 8, 62.50, 0.3},
                          Decode{"llama-3.1-70b", v1::PRECISION_BF16, 8, 58.78, 0.3},
                          Decode{"llama-3.1-405b", v1::PRECISION_INT8, 8, 15.60, 0.3},
                          Decode{"mixtral-8x7b", v1::PRECISION_BF16, 2, 96.67, 0.3},
                          Decode{"mixtral-8x7b", v1::PRECISION_BF16, 4, 155.35, 0.3},
                          Decode{"mixtral-8x7b", v1::PRECISION_BF16, 8, 227.82, 0.3}}) {
    rows.push_back({std::string("B-20 ") + d.preset + " " + v1::Precision_Name(d.p) + " TP" +
                        std::to_string(d.tp) + " tokens/s",
                    b20, [=] { return decode(d.preset, d.p, d.tp); }, d.tps, d.tol});
  }
  // MI250X: one GCD as frameworks see it (half the package: 64 GB, 1.64 TB/s).
  rows.push_back({"B-20 MI250X one GCD llama-2-7b bf16 tokens/s", b20,
                  [=] {
                    v1::ModelList models;
                    cv1::GpuList gpus;
                    cv1::Gpu* g = gpus.add_gpus();
                    g->set_name("MI250X-GCD");
                    g->set_vendor("AMD");
                    g->set_memory_bytes(64000000000);
                    g->set_memory_bandwidth_bytes_per_second(1.6384e12);
                    g->set_bf16_flops(191.5e12);
                    g->set_fp16_flops(191.5e12);
                    g->set_supports_bf16(true);
                    v1::Model* m = models.add_models();
                    *m = Model().ListModels().models(0);  // llama-2-7b
                    auto model = SizingModel::Create(models, gpus);
                    EXPECT_TRUE(model.ok()) << model.status();
                    return decode("llama-2-7b", v1::PRECISION_BF16, 1, *model, "MI250X-GCD");
                  },
                  76.33, 0.2});

  // ---- B-25: Llama 2 pretraining GPU-hours, 2.0T tokens on A100-80GB
  // (1,024 GPUs, 4M-token batches of 4k sequences). Meta does not publish
  // its recompute setting; full activation recomputation is assumed. ----
  const char* b25 = "meta-llama/llama-models models/llama2/MODEL_CARD.md; Llama 2 paper Table 2";
  struct Pretrain {
    const char* preset;
    double hours;
  };
  for (const Pretrain& p : {Pretrain{"llama-2-7b", 184320}, Pretrain{"llama-2-13b", 368640},
                            Pretrain{"llama-2-70b", 1720320}}) {
    rows.push_back({std::string("B-25 ") + p.preset + " GPU-hours", b25,
                    [p] {
                      v1::Workload w = Train(v1::TASK_PRETRAIN, p.preset, 4096, 1);
                      w.set_train_tokens(2.0e12);
                      w.set_global_batch_size(1024);
                      w.set_gradient_checkpointing(v1::GRADIENT_CHECKPOINTING_FULL);
                      const auto e = Run(w, Config("A100-80GB", 8, 128));
                      EXPECT_TRUE(e.fits()) << e.not_fit_reason();
                      return e.estimated_hours() * 1024;
                    },
                    p.hours, 0.25});
  }

  // ---- B-29: Megatron-LM training time 8TP/(nX) (Narayanan 2021). ----
  const char* b29 = "Narayanan et al. 2021 (arXiv:2104.04473) §5.1-5.2, Tables 1-2";
  constexpr double kDay = 86400;
  rows.push_back({"B-29 GPT-3 175B, 300B tokens, 1024 GPUs at 140 TF (days)", b29,
                  [] { return MegatronTrainingSeconds(300e9, 175e9, 1024, 140e12, true) / kDay; },
                  34, 0.05});
  rows.push_back({"B-29 1T, 450B tokens, 3072 GPUs at 163 TF (days)", b29,
                  [] { return MegatronTrainingSeconds(450e9, 1e12, 3072, 163e12, true) / kDay; },
                  84, 0.05});
  rows.push_back({"B-29 ZeRO-3 175B, 384 GPUs at 144 TF (days)", b29,
                  [] { return MegatronTrainingSeconds(300e9, 175e9, 384, 144e12, true) / kDay; },
                  90, 0.05});
  rows.push_back({"B-29 PTD-P 175B, 1536 GPUs at 141 TF (days)", b29,
                  [] { return MegatronTrainingSeconds(300e9, 175e9, 1536, 141e12, true) / kDay; },
                  23, 0.05});

  // ---- B-35: collective time. ----
  const char* b35 = "NVIDIA/nccl-tests doc/PERFORMANCE.md; ZeRO §7";
  rows.push_back({"B-35 all-reduce 14 GB over 8 GPUs at 400 GB/s (ms)", b35,
                  [] { return AllReduceSeconds(14e9, 8, 400e9) * 1e3; }, 61.25, 0.01});
  rows.push_back({"B-35 ZeRO-3 gather + reduce-scatter, 1.5x (ms)", b35,
                  [] { return AllReduceSeconds(14e9, 8, 400e9) * ZeroCommunicationFactor(3) * 1e3; },
                  91.875, 0.01});
  return rows;
}

TEST(Calibration, EveryPublishedCase) {
  int failures = 0;
  for (const Row& row : Rows()) {
    const double got = row.got();
    bool ok = false;
    switch (row.check) {
      case Check::kWithin:
        ok = std::fabs(got - row.expected) <= row.tolerance * std::fabs(row.expected);
        break;
      case Check::kBelow:
        ok = got < row.expected;
        break;
      case Check::kAbove:
        ok = got > row.expected;
        break;
    }
    const double dev = row.expected != 0 ? (got - row.expected) / row.expected * 100.0 : 0.0;
    std::printf("%-4s %-62s expected %10.4g got %10.4g (%+6.1f%%, tol %s)  [%s]\n",
                ok ? "ok" : "FAIL", row.id.c_str(), row.expected, got, dev,
                row.check == Check::kWithin
                    ? (std::to_string(static_cast<int>(row.tolerance * 100)) + "%").c_str()
                    : (row.check == Check::kBelow ? "below" : "above"),
                row.source.c_str());
    EXPECT_TRUE(ok) << row.id << ": expected " << row.expected << " got " << got << " ("
                    << row.source << ")";
    if (!ok) ++failures;
  }
  std::printf("%d failing rows\n", failures);
}

}  // namespace
}  // namespace gpuadvisor::sizing
