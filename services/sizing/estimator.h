#ifndef GPUADVISOR_SERVICES_SIZING_ESTIMATOR_H_
#define GPUADVISOR_SERVICES_SIZING_ESTIMATOR_H_

// The per-workload and per-configuration math behind SizingModel::Estimate.
// A Job holds everything that does not depend on the GPU configuration, so
// that sizing N configurations costs N small, allocation-light loops.
// Internal to the sizing library; docs/sizing.md documents the formulas.

#include <string>

#include "absl/status/statusor.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/sizing/model_spec.h"

namespace gpuadvisor::sizing {

struct GpuSpec;

// Default VRAM margin (fraction of GPU memory kept free).
inline constexpr double kDefaultVramMargin = 0.1;

struct Job {
  const ModelSpec* model = nullptr;
  gpuadvisor::sizing::v1::Task task = gpuadvisor::sizing::v1::TASK_UNSPECIFIED;
  bool training = false;
  bool lora = false;   // LoRA or QLoRA
  bool qlora = false;
  bool batch = false;  // batch inference
  gpuadvisor::sizing::v1::Precision precision = gpuadvisor::sizing::v1::PRECISION_BF16;

  // Training.
  double seq = 0;
  double micro_batch = 1;
  double global_batch = 0;  // sequences per optimizer step; 0 = derived per plan
  gpuadvisor::sizing::v1::GradientCheckpointing checkpointing =
      gpuadvisor::sizing::v1::GRADIENT_CHECKPOINTING_UNSPECIFIED;
  gpuadvisor::sizing::v1::Offload offload = gpuadvisor::sizing::v1::OFFLOAD_NONE;
  int zero_hint = -1;  // -1 = chosen by sizing
  int tp_hint = 0;
  int pp_hint = 0;
  double trainable_params = 0;
  double weight_bytes = 0;          // all weights held (frozen base + trainable)
  double grad_bytes_per_param = 0;  // per trainable parameter
  double optimizer_bytes_per_param = 0;  // per trainable parameter, incl. master copy
  double weight_bytes_per_param = 0;     // per trainable parameter (gathered under ZeRO-3)
  double act_bytes_per_element = 2;
  double logits_bytes_per_token = 0;
  double grad_comm_bytes_per_param = 2;
  double model_flops_per_token = 0;     // 6N + attention (4N for LoRA): MFU numerator
  double hw_flops_per_token[4] = {0, 0, 0, 0};  // by GradientCheckpointing value
  double extra_overhead_bytes = 0;      // QLoRA dequantization buffers
  double total_tokens = 0;

  // Serving.
  double context = 0;
  double prompt = 0;
  double output = 0;
  double concurrency = 0;  // 0 = as many as fit (batch inference)
  double requests = 0;
  double serving_hours = 0;
  double kv_bytes_per_token = 0;   // whole model, at the KV precision
  double serving_weight_bytes = 0;
  double dense_read_bytes = 0;     // weights read per decode step, excluding routed experts
  double expert_read_bytes = 0;    // all routed experts' weights
  double bw_efficiency = 0.72;
  double decode_flops_per_token = 0;
  double prefill_flops_per_token = 0;

  double vram_margin = kDefaultVramMargin;
  std::string precision_note;  // filled when the precision was adapted
};

// Builds the configuration-independent part of the estimate and fills
// `totals`. kInvalidArgument for combinations the fields alone cannot catch.
absl::StatusOr<Job> BuildJob(const gpuadvisor::sizing::v1::Workload& workload,
                             const ModelSpec& model, double vram_margin,
                             gpuadvisor::sizing::v1::WorkloadTotals* totals);

// Sizes `job` on one configuration into `out` (configuration already copied).
void EstimateConfiguration(const Job& job, const GpuSpec& gpu,
                           const gpuadvisor::sizing::v1::GpuConfiguration& config,
                           gpuadvisor::sizing::v1::ConfigurationEstimate* out);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_ESTIMATOR_H_
