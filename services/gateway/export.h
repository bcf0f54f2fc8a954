#ifndef GPUADVISOR_SERVICES_GATEWAY_EXPORT_H_
#define GPUADVISOR_SERVICES_GATEWAY_EXPORT_H_

// A Recommend answer in the formats orchestrators read, offers in rank order:
//   skypilot   SkyPilot task YAML: resources.ordered, one entry per offer
//              (infra cloud/region, instance_type, use_spot); SkyPilot tries
//              them in that order.
//   dstack     dstack task configuration with its profile fields: backends,
//              regions, instance_types (ranked), spot_policy, max_price,
//              resources.gpu (names, memory, count) and nodes.
//   karpenter  Karpenter v1 NodePools, one per ranked (instance type,
//              capacity type), weights descending from 100 so Karpenter
//              prefers them in rank order; requirements on
//              node.kubernetes.io/instance-type and karpenter.sh/capacity-type.
// Offers the orchestrator cannot use are left out and named in a comment: a
// provider it does not support, another cluster size than rank 1 (one task
// has one node count), another provider or region than rank 1 (Karpenter
// runs in one cluster). Provider, backend and GPU names come from
// data/exports/orchestrators.json, compiled in. Plain C++; thread-safe.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"

namespace gpuadvisor::gateway {

enum class ExportFormat { kSkyPilot, kDstack, kKarpenter };

// "skypilot", "dstack", "karpenter": the names ParseExportFormat takes.
const std::vector<std::string>& ExportFormatNames();

// Case-insensitive. kInvalidArgument naming "format" and the choices.
absl::StatusOr<ExportFormat> ParseExportFormat(absl::string_view name);

// The YAML for `response` (the answer to `request`). kNotFound when no
// recommendation is left to export (none qualified, or none the orchestrator
// can run); the message says which were left out and why.
absl::StatusOr<std::string> ExportRecommendations(ExportFormat format,
                                                  const v1::RecommendRequest& request,
                                                  const v1::RecommendResponse& response);

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_EXPORT_H_
