#ifndef GPUADVISOR_SERVICES_SIZING_JOB_H_
#define GPUADVISOR_SERVICES_SIZING_JOB_H_

// A Job is everything about one workload that does not depend on the GPU
// configuration, resolved once per Estimate so that sizing N configurations
// costs N small, allocation-light plan searches. Training and serving fill
// different halves (BuildTrainingJob, BuildServingJob). Internal to the
// sizing library; docs/sizing.md documents the formulas.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/io/units.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/sizing/model_spec.h"

namespace gpuadvisor::sizing {

class Profiles;

// The training half of a Job (BuildTrainingJob): batch, memory techniques,
// bytes per parameter, FLOPs per token and the run's length.
struct TrainingJob {
  double seq = 0;
  double micro_batch = 1;
  double global_batch = 0;  // sequences per optimizer step; 0 = default per plan
  gpuadvisor::sizing::v1::GradientCheckpointing checkpointing =
      gpuadvisor::sizing::v1::GRADIENT_CHECKPOINTING_UNSPECIFIED;
  gpuadvisor::sizing::v1::Offload offload = gpuadvisor::sizing::v1::OFFLOAD_UNSPECIFIED;
  bool paged_optimizer = false;
  bool activation_offload = false;
  bool activation_offload_needs_checkpointing =
      false;  // framework default: offloads checkpoints only
  bool optimizer_in_backward = false;
  // Parameters and bytes, split into the dense part and the routed experts
  // (expert parallelism shards only the latter).
  double trainable_dense = 0;
  double trainable_expert = 0;
  double weight_bytes_dense = 0;  // all weights held (frozen base + trainable)
  double weight_bytes_expert = 0;
  double weight_bytes_per_param = 2;      // per trainable parameter
  double grad_bytes_per_param = 2;        // per trainable parameter
  double optimizer_bytes_per_param = 12;  // per trainable parameter, incl. master copy
  double act_bytes_per_element = 2;
  double logits_bytes_per_token = 0;            // before TP sharding
  bool logits_tp_sharded = false;               // vocab-parallel loss
  double model_flops_per_token = 0;             // 6N + attention (4N for LoRA): MFU numerator
  double hw_flops_per_token[4] = {0, 0, 0, 0};  // by GradientCheckpointing value
  double forward_flops_per_token = 0;
  double dequant_bytes_per_pass = 0;  // QLoRA: frozen 4-bit params x traffic per pass
  double extra_overhead_bytes = 0;    // QLoRA dequantization buffers
  double checkpoint_interval_minutes = 0;
  double efficiency_factor = 1;                // framework x LoRA x MoE multipliers
  double moe_dispatch_elements_per_token = 0;  // hidden x active experts, per MoE layer
  double expert_flops_fraction = 0;            // of the matmul FLOPs, in routed experts

  double TrainableParams() const { return trainable_dense + trainable_expert; }
  double WeightBytes() const { return weight_bytes_dense + weight_bytes_expert; }
};

// The serving half of a Job (BuildServingJob): sequence lengths, load,
// weights, KV cache and the bytes and FLOPs of decode and prefill.
struct ServingJob {
  double context = 0;
  double prompt = 0;
  double output = 0;
  double concurrency = 0;  // whole endpoint; 0 = as many as fit (batch inference)
  double requests = 0;
  double serving_hours = 0;
  // The request's serving SLOs (EstimateRequest.serving_slo; 0 = none):
  // the plan search prefers layouts that meet them (serving_estimate.cc).
  gpuadvisor::sizing::v1::ServingSlo slo;
  double kv_bytes_per_token = 0;  // whole model, at the KV precision, every layer global
  // One sequence's KV cache at `context` tokens, layer by layer
  // (KvCacheElementsPerSequence: sliding-window layers keep their window,
  // MLA its latent), whole model, at the KV precision.
  double kv_bytes_per_sequence = 0;
  // KV bytes one decode step reads per sequence at the average context
  // (prompt + output / 2), times heads / kv_heads when the engine's decode
  // attention reads K/V per query head.
  double kv_read_bytes_per_sequence = 0;
  double serving_weight_bytes = 0;
  double serving_expert_bytes = 0;  // routed experts' share of serving_weight_bytes
  double dense_read_bytes = 0;      // weights read per decode step, excluding routed experts
  double expert_read_bytes = 0;     // all routed experts' weights
  double bw_ratio = 1;              // precision's share of the 16-bit bandwidth efficiency
  double decode_flops_per_token = 0;
  double prefill_flops_per_token = 0;
};

// The shared part, and the half of the job's kind (`train` when `training`,
// else `serve`; the other half stays default).
struct Job {
  const ModelSpec* model = nullptr;
  const gpuadvisor::sizing::v1::FrameworkProfile* framework = nullptr;
  const Profiles* profiles = nullptr;
  // Link, memory and kernel constants (data/sizing/engine.textproto).
  const gpuadvisor::sizing::v1::EngineConstants* engine = nullptr;
  gpuadvisor::sizing::v1::Task task = gpuadvisor::sizing::v1::TASK_UNSPECIFIED;
  bool training = false;
  bool lora = false;  // LoRA or QLoRA
  bool qlora = false;
  bool batch = false;  // batch inference
  bool moe = false;
  gpuadvisor::sizing::v1::Precision precision = gpuadvisor::sizing::v1::PRECISION_BF16;
  double vram_margin = kDefaultVramMargin;
  bool vram_margin_given = false;
  // Assumptions stated in every estimate (structured: code, severity, text).
  std::vector<gpuadvisor::sizing::v1::Note> notes;
  std::string precision_note;  // filled when the precision was adapted

  // Hints (training and serving). -1 / 0 = chosen by sizing.
  int zero_hint = -1;
  int tp_hint = 0;
  int pp_hint = 0;
  int ep_hint = 0;

  double total_tokens = 0;  // training tokens, or batch inference prompt + output tokens
  double moe_layers = 0;    // layers with routed experts

  TrainingJob train;
  ServingJob serve;
};

// Bytes per GPU.
struct Memory {
  double weights = 0, grads = 0, optimizer = 0, activations = 0, kv = 0, overhead = 0;
  double pageable = 0;               // part of `optimizer` that pages to CPU under pressure
  double offloaded_activations = 0;  // per micro-batch, kept in CPU memory
  // Paged optimizer state evicted to CPU memory (unified memory): pages
  // stay on the GPU while there is room, the rest is not in `optimizer`.
  double paged_out = 0;
  double Total() const { return weights + grads + optimizer + activations + kv + overhead; }
};

// Builds the configuration-independent part of the estimate and fills
// `totals`. kInvalidArgument for combinations the fields alone cannot catch
// (an unknown framework names "workload.framework").
absl::StatusOr<Job> BuildJob(const gpuadvisor::sizing::v1::Workload& workload,
                             const ModelSpec& model, const Profiles& profiles, double vram_margin,
                             bool vram_margin_given,
                             gpuadvisor::sizing::v1::WorkloadTotals* totals);

// The halves of BuildJob; `job` has the common fields set.
absl::Status BuildTrainingJob(const gpuadvisor::sizing::v1::Workload& w, Job* job,
                              gpuadvisor::sizing::v1::WorkloadTotals* totals);
absl::Status BuildServingJob(const gpuadvisor::sizing::v1::Workload& w, Job* job,
                             gpuadvisor::sizing::v1::WorkloadTotals* totals);

// Weight bytes of the whole model at precision `p`: quantized formats keep the
// embeddings and LM head 16-bit (bitsandbytes, GPTQ/AWQ and FP8 checkpoints).
double QuantizedWeightBytes(const ModelSpec& m, gpuadvisor::sizing::v1::Precision p);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_JOB_H_
