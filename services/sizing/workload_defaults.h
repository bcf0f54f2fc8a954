#ifndef GPUADVISOR_SERVICES_SIZING_WORKLOAD_DEFAULTS_H_
#define GPUADVISOR_SERVICES_SIZING_WORKLOAD_DEFAULTS_H_

// The one rule for missing or zero workload fields, owned by sizing and
// used by the gateway (docs/gateway.md, "Defaults"):
//   - a field the task needs and that has no honest default is rejected with
//     kInvalidArgument naming it when the workload is to be priced
//     ("workload.train_tokens: required for TASK_LORA ...");
//   - every other unset field the task uses is set, explicitly, to its
//     default and recorded (field, value, reason), so the answer states it
//     and sizing computes with exactly that value.
// Defaults are conventions (what the common training and serving tools use
// when nothing is said), not facts about hardware. SizingModel::Estimate
// applies them and reports them in EstimateResponse.applied_defaults; the
// gateway applies the same function before sizing (its request cache key
// and required-field checks need the filled workload) and states sizing's
// answer as assumptions. Pure C++ over the contract; thread-safe.

#include <vector>

#include "absl/status/status.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::sizing {

inline constexpr int kDefaultTrainSequenceLength = 2048;  // axolotl sequence_len, nanoGPT-class
inline constexpr int kDefaultContextLength = 4096;        // serving: prompt + output per sequence
inline constexpr int kDefaultOutputTokens = 256;
inline constexpr double kDefaultServingHours = 720;  // an endpoint priced for a 30-day month
inline constexpr int kDefaultLoraRank = 16;          // PEFT/axolotl examples
inline constexpr int kDefaultQloraRank = 64;         // QLoRA paper (Dettmers et al. 2023)

// What the caller will do with the workload.
enum class WorkloadUse {
  kPrice,  // Recommend: the job's length (tokens, requests) is required
  kSize,   // Estimate: memory and plan need no length; a missing one is stated
};

// Checks the fields the task needs and fills the defaults (see above).
// `applied` gets one entry per default applied. `model_max_context` (0 =
// unknown): a defaulted serving context is at most the model's maximum.
absl::Status ApplyWorkloadDefaults(v1::Workload& workload, std::vector<v1::AppliedDefault>& applied,
                                   WorkloadUse use = WorkloadUse::kSize,
                                   double model_max_context = 0);

// After sizing, what depends on the resolved model: the training tokens
// derived from dataset_tokens or dataset_gb, or the compute-optimal tokens of
// a pretraining run (`total_tokens`), for a workload without train_tokens.
void AddDerivedDefaults(const v1::Workload& workload, double total_tokens,
                        std::vector<v1::AppliedDefault>& applied);

v1::AppliedDefault MakeAppliedDefault(std::string field, std::string value, std::string reason);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_WORKLOAD_DEFAULTS_H_
