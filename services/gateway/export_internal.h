#ifndef GPUADVISOR_SERVICES_GATEWAY_EXPORT_INTERNAL_H_
#define GPUADVISOR_SERVICES_GATEWAY_EXPORT_INTERNAL_H_

// Shared by the three writers (export_skypilot.cc, export_dstack.cc,
// export_karpenter.cc): the names data and what every format needs to know
// about one recommendation. Not part of the gateway's interface.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "services/gateway/export.h"

namespace gpuadvisor::gateway::export_internal {

// data/exports/orchestrators.json, parsed once.
const google::protobuf::Struct& Names();

// The string at `path` under Names() ("" when absent), and the object at it
// (an empty one when absent).
std::string NameAt(std::initializer_list<absl::string_view> path);
const google::protobuf::Struct& ObjectAt(std::initializer_list<absl::string_view> path);
bool Has(std::initializer_list<absl::string_view> path);
double NumberAt(std::initializer_list<absl::string_view> path);
std::vector<std::string> ListAt(std::initializer_list<absl::string_view> path);

// A YAML double-quoted scalar (a JSON string literal is one), and a flow list.
std::string Q(const std::string& s);
std::string QList(const std::vector<std::string>& items);

// "spot", "on-demand" or "reserved".
const char* Capacity(const v1::Recommendation& r);
// "8x H100-SXM x 2 nodes, spot, 3.2 h, $41.50/h, $133.20 total"
std::string Summary(const v1::Recommendation& r);
// "rank 2 aws/p5.48xlarge/us-east-1"
std::string RankName(const v1::Recommendation& r);
// "lora", "full-finetune", ...
std::string TaskSlug(const v1::RecommendRequest& request);
// The comment lines every file starts with.
std::string Header(const char* what, const v1::RecommendRequest& request,
                   const v1::RecommendResponse& response);

// What one recommendation rents. A serving answer rents replica nodes:
// `units` orchestrator replicas of `nodes_per_unit` nodes each, spare
// replicas of a spot endpoint included; a job rents `units` = 1 unit of
// `nodes_per_unit` = its cluster size.
struct Shape {
  bool serving = false;
  int units = 1;
  int nodes_per_unit = 1;
  int copies_per_node = 1;  // model replicas on one node (serving)
  int total_nodes() const { return units * nodes_per_unit; }
};
Shape ShapeOf(const v1::Recommendation& r);

// The list price of one node (instance) per hour the plan used: on-demand,
// the dearest zone's spot price (the median where no range is recorded) or
// the reserved rate. 0 when the offer carries none.
double NodePricePerHour(const v1::Recommendation& r);

// Rounds a price cap up to the cent, so that the planned price passes it.
double CapAbove(double usd);

// The file's comment block listing what was left out, and the same lines
// for the HTTP header.
std::string LeftOutComment(const std::vector<std::string>& left_out);

// kNotFound naming what was left out.
absl::Status NothingLeft(const char* orchestrator, const v1::RecommendResponse& response,
                         const std::vector<std::string>& left_out);

// The writers. `alternative` is 1 for the file of rank 1's shape, N for the
// N-th other shape the answer holds.
absl::StatusOr<ExportFile> SkyPilot(const v1::RecommendRequest& request,
                                    const v1::RecommendResponse& response, int alternative);
absl::StatusOr<ExportFile> Dstack(const v1::RecommendRequest& request,
                                  const v1::RecommendResponse& response, int alternative);
absl::StatusOr<ExportFile> Karpenter(const v1::RecommendRequest& request,
                                     const v1::RecommendResponse& response);

// Groups kept recommendations by shape key in order of first appearance;
// returns the index of the group the caller asked for, and words the other
// groups as alternatives. `key` must be the same for offers one file can
// fall back over.
struct Alternatives {
  std::vector<std::vector<const v1::Recommendation*>> groups;
  std::vector<std::string> keys;  // one description per group
};
void AddToGroup(Alternatives& a, const std::string& key, const v1::Recommendation* r);
// The header lines naming the other groups and how to get them.
std::string AlternativesComment(const Alternatives& a, int chosen, const char* format);

}  // namespace gpuadvisor::gateway::export_internal

#endif  // GPUADVISOR_SERVICES_GATEWAY_EXPORT_INTERNAL_H_
