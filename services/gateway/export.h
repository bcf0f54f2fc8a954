#ifndef GPUADVISOR_SERVICES_GATEWAY_EXPORT_H_
#define GPUADVISOR_SERVICES_GATEWAY_EXPORT_H_

// A Recommend answer in the formats orchestrators read (docs/http.md says
// what each file does when its orchestrator reads it):
//   skypilot   SkyPilot task: resources.ordered, one entry per fallback in
//              rank order, each pinned (infra cloud/region, instance_type,
//              use_spot, max_hourly_cost); num_nodes; a serving answer is a
//              SkyServe service (service: replicas, ports).
//   dstack     dstack task (nodes) or service (replicas, port): backends,
//              regions and instance_types in dstack's offer names,
//              spot_policy, max_price. dstack takes the cheapest matching
//              offer, so only fallbacks that leave rank 1 the cheapest match.
//   karpenter  Karpenter v1 NodePools for one cluster (rank 1's provider and
//              region), one per fallback, weights falling with the rank,
//              a GPU taint, limits from the plan.
// Names (cloud, backend, region, instance type, GPU) come from
// data/exports/orchestrators.json, compiled in. An offer an orchestrator
// cannot run as planned is left out, with the reason in the file's header
// comment and in ExportFile.left_out. Fallbacks of another shape (node
// count, replicas) than the chosen one are alternatives: files of their own
// (`alternative` 2, 3, ...), named in the header. Reserved offers are left
// out rather than written as on-demand. Plain C++; thread-safe.

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

struct ExportFile {
  std::string text;                   // the YAML
  std::vector<std::string> left_out;  // "rank N provider/type/region: why"
  int alternatives = 1;               // files this answer has in this format
};

// The file for `response` (the answer to `request`). `alternative` 1 is the
// file of rank 1's shape; 2.. the other shapes' files (kNotFound past the
// last). kNotFound when no recommendation is left to export; the message
// says which were left out and why.
absl::StatusOr<ExportFile> ExportAnswer(ExportFormat format, const v1::RecommendRequest& request,
                                        const v1::RecommendResponse& response, int alternative = 1);

// `left_out` as one HTTP header value: "; "-joined, non-ASCII bytes as '?'.
std::string ExportHeaderValue(const std::vector<std::string>& left_out);

// ExportAnswer(...).text.
absl::StatusOr<std::string> ExportRecommendations(ExportFormat format,
                                                  const v1::RecommendRequest& request,
                                                  const v1::RecommendResponse& response);

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_EXPORT_H_
