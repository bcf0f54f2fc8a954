#ifndef GPUADVISOR_SERVICES_GATEWAY_WORKLOAD_DEFAULTS_H_
#define GPUADVISOR_SERVICES_GATEWAY_WORKLOAD_DEFAULTS_H_

// The gateway's one rule for missing or zero workload fields, applied before
// the workload goes to sizing (docs/gateway.md, "Defaults"):
//   - a field the task needs and that has no honest default is rejected with
//     kInvalidArgument naming it ("workload.train_tokens: required for
//     TASK_LORA ...");
//   - every other unset field the task uses is set here, explicitly, to its
//     default, and recorded as an Assumption, so the answer states it and
//     sizing computes with exactly that value.
// Defaults are conventions (what the common training and serving tools use
// when nothing is said), not facts about hardware, so they live here.

#include <vector>

#include "absl/status/status.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::gateway {

inline constexpr int kDefaultTrainSequenceLength =
    2048;                                           // axolotl sequence_len, nanoGPT-class runs
inline constexpr int kDefaultContextLength = 4096;  // serving: prompt + output per sequence
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
// `assumptions` gets one entry per default applied.
absl::Status ApplyWorkloadDefaults(sizing::v1::Workload& workload,
                                   std::vector<v1::Assumption>& assumptions,
                                   WorkloadUse use = WorkloadUse::kPrice);

// After sizing: what depends on the resolved model, e.g. the training tokens
// derived from dataset_gb or the compute-optimal tokens of a pretraining run,
// and a defaulted context longer than the model's own maximum.
void AddSizedAssumptions(const sizing::v1::Workload& workload,
                         const sizing::v1::EstimateResponse& sized,
                         std::vector<v1::Assumption>& assumptions);

v1::Assumption MakeAssumption(std::string field, std::string value, std::string note);

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_WORKLOAD_DEFAULTS_H_
