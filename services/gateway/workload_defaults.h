#ifndef GPUADVISOR_SERVICES_GATEWAY_WORKLOAD_DEFAULTS_H_
#define GPUADVISOR_SERVICES_GATEWAY_WORKLOAD_DEFAULTS_H_

// The gateway's side of the workload defaults, which sizing owns
// (services/sizing/workload_defaults.h, docs/gateway.md "Defaults"): the
// same rule is applied before sizing (the request cache key, the required
// fields of a priced job) and every default applied is stated as an
// Assumption; after sizing, the defaults sizing reports in its answer
// (EstimateResponse.applied_defaults: derived tokens, the default global
// batch) are stated too. Whether a job may resume after a preemption is
// pricing's default, stated here.

#include <vector>

#include "absl/status/status.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/sizing/workload_defaults.h"

namespace gpuadvisor::gateway {

using sizing::WorkloadUse;

// Checks the fields the task needs and fills the defaults (see above).
// `assumptions` gets one entry per default applied.
absl::Status ApplyWorkloadDefaults(sizing::v1::Workload& workload,
                                   std::vector<v1::Assumption>& assumptions,
                                   WorkloadUse use = WorkloadUse::kPrice);

// After sizing: the defaults sizing reports (`sized.applied_defaults`) that
// are not stated yet, e.g. the training tokens derived from dataset_gb, the
// compute-optimal tokens of a pretraining run or the default global batch of
// a fine-tune, and a defaulted context longer than the model's own maximum.
void AddSizedAssumptions(const sizing::v1::Workload& workload,
                         const sizing::v1::EstimateResponse& sized,
                         std::vector<v1::Assumption>& assumptions);

v1::Assumption MakeAssumption(std::string field, std::string value, std::string note);

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_WORKLOAD_DEFAULTS_H_
