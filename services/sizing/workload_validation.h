#ifndef GPUADVISOR_SERVICES_SIZING_WORKLOAD_VALIDATION_H_
#define GPUADVISOR_SERVICES_SIZING_WORKLOAD_VALIDATION_H_

// Field-level checks of an EstimateRequest that need no model or GPU data.

#include "absl/status/status.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::sizing {

// Returns OK or kInvalidArgument "<field path>: <reason>", e.g.
// "workload.sequence_length: must be > 0 for training" or
// "configurations[2].nodes: must be >= 1". Checks: every double finite and
// non-negative, counts within sane bounds, enums known, lora_rank only on
// LoRA/QLoRA, a sequence length for training, at least one configuration.
// It does not resolve presets, model architecture or GPU names (see
// SizingModel::Estimate). Thread-safe.
absl::Status ValidateEstimateRequest(const gpuadvisor::sizing::v1::EstimateRequest& request);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_WORKLOAD_VALIDATION_H_
