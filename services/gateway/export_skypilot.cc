// SkyPilot task or SkyServe service (export.h).

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "services/gateway/export_internal.h"

namespace gpuadvisor::gateway::export_internal {
namespace {

using v1::Recommendation;

// SkyPilot's names for one offer, or why it has none.
struct SkyNames {
  std::string infra, instance_type, why_not;
  std::string accelerator;  // set with the count where the GPUs are attached to a machine type
  int accelerator_count = 0;
};

SkyNames SkyNamesOf(const Recommendation& r) {
  SkyNames n;
  const auto& o = r.offer();
  const std::string& p = o.provider();
  if (r.purchase_option() == catalog::v1::PURCHASE_OPTION_RESERVED) {
    n.why_not =
        "reserved: its price needs a capacity reservation the task cannot name; written as "
        "on-demand it would be charged the on-demand price";
    return n;
  }
  if (Has({"skypilot", "left_out", p})) {
    n.why_not = NameAt({"skypilot", "left_out", p});
    return n;
  }
  const std::string cloud = NameAt({"skypilot", "providers", p, "cloud"});
  const std::vector<std::string> clouds = ListAt({"skypilot", "clouds"});
  if (cloud.empty() || std::find(clouds.begin(), clouds.end(), cloud) == clouds.end()) {
    n.why_not = absl::StrCat("SkyPilot has no cloud for \"", p, "\"");
    return n;
  }
  const std::string prefix = NameAt({"skypilot", "providers", p, "instance_prefix"});
  n.instance_type = o.instance_type();
  if (!prefix.empty() && !absl::StartsWith(n.instance_type, prefix)) {
    n.why_not = absl::StrCat("not in SkyPilot's catalog: its ", cloud, " cloud lists ", prefix,
                             "* instance types only");
    return n;
  }
  if (Has({"skypilot", "providers", p, "left_out_instance_types", o.instance_type()})) {
    n.why_not = NameAt({"skypilot", "providers", p, "left_out_instance_types", o.instance_type()});
    return n;
  }
  if (Has({"skypilot", "providers", p, "attached_accelerators", o.instance_type()})) {
    const std::string t = o.instance_type();
    n.instance_type =
        NameAt({"skypilot", "providers", p, "attached_accelerators", t, "instance_type"});
    n.accelerator = NameAt({"skypilot", "providers", p, "attached_accelerators", t, "accelerator"});
    n.accelerator_count = static_cast<int>(
        NumberAt({"skypilot", "providers", p, "attached_accelerators", t, "count"}));
  }
  if (Has({"skypilot", "providers", p, "instance_types"})) {
    n.instance_type = NameAt({"skypilot", "providers", p, "instance_types", o.instance_type()});
    if (n.instance_type.empty()) {
      n.why_not = "no SkyPilot instance type for it in data/exports/orchestrators.json";
      return n;
    }
  }
  std::string region = o.region();
  if (Has({"skypilot", "providers", p, "regions", region})) {
    region = NameAt({"skypilot", "providers", p, "regions", region});
  }
  // "global" is this catalog's word for a price without a region: SkyPilot
  // picks the region.
  n.infra = region == "global" || region.empty() ? cloud : absl::StrCat(cloud, "/", region);
  const Shape shape = ShapeOf(r);
  if (shape.serving && shape.nodes_per_unit > 1) {
    n.why_not = absl::StrCat("a replica spans ", shape.nodes_per_unit,
                             " nodes; SkyServe replicas are single nodes");
  }
  return n;
}

std::string ShapeKey(const Recommendation& r) {
  const Shape s = ShapeOf(r);
  // SkyServe takes resources that all use spot or none (validate_service_task).
  if (s.serving) {
    return absl::StrCat(
        s.units, s.units == 1 ? " replica" : " replicas",
        r.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? ", spot" : ", on-demand");
  }
  return absl::StrCat(s.nodes_per_unit, s.nodes_per_unit == 1 ? " node" : " nodes");
}

std::string Entry(const Recommendation& r, const SkyNames& n) {
  std::string y = absl::StrCat("    # rank ", r.rank(), ": ", Summary(r), "\n");
  absl::StrAppend(&y, "    - infra: ", Q(n.infra), "\n");
  absl::StrAppend(&y, "      instance_type: ", Q(n.instance_type), "\n");
  if (!n.accelerator.empty()) {
    absl::StrAppend(&y, "      accelerators: {", Q(n.accelerator), ": ", n.accelerator_count,
                    "}\n");
  }
  absl::StrAppend(&y, "      use_spot: ",
                  r.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? "true" : "false",
                  "\n");
  const double price = NodePricePerHour(r);
  if (price > 0) absl::StrAppend(&y, "      max_hourly_cost: ", CapAbove(price), "\n");
  return y;
}

std::string ServiceSection(const Recommendation& first) {
  const Shape s = ShapeOf(first);
  std::string y = "service:\n";
  absl::StrAppend(&y, "  readiness_probe: ", Q(NameAt({"skypilot", "serving", "readiness_probe"})),
                  "\n");
  absl::StrAppend(&y, "  replicas: ", s.units, "\n");
  if (s.copies_per_node > 1) {
    y = absl::StrCat("# Each replica node serves ", s.copies_per_node,
                     " model copies (one per GPU group): start that many servers.\n", y);
  }
  absl::StrAppend(&y, "  ports: ", static_cast<int>(NumberAt({"skypilot", "serving", "port"})),
                  "\n");
  return y;
}

}  // namespace

absl::StatusOr<ExportFile> SkyPilot(const v1::RecommendRequest& request,
                                    const v1::RecommendResponse& response, int alternative) {
  ExportFile file;
  Alternatives alts;
  std::vector<SkyNames> names(response.recommendations_size());
  for (int i = 0; i < response.recommendations_size(); ++i) {
    const Recommendation& r = response.recommendations(i);
    names[i] = SkyNamesOf(r);
    if (!names[i].why_not.empty()) {
      file.left_out.push_back(absl::StrCat(RankName(r), ": ", names[i].why_not));
      continue;
    }
    AddToGroup(alts, ShapeKey(r), &r);
  }
  if (alts.groups.empty()) return NothingLeft("SkyPilot", response, file.left_out);
  if (alternative > static_cast<int>(alts.groups.size())) {
    return absl::NotFoundError(
        absl::StrCat("alternative: this answer has ", alts.groups.size(), " SkyPilot file(s)"));
  }
  file.alternatives = static_cast<int>(alts.groups.size());
  const auto& kept = alts.groups[alternative - 1];
  const bool serving = ShapeOf(*kept.front()).serving;
  std::string y = Header(serving ? "SkyServe service" : "SkyPilot task", request, response);
  y += serving ? "# Run: sky serve up -n gpu-advisor service.yaml (add your setup/run).\n"
               : "# Run: sky launch -c gpu-advisor task.yaml (add your setup/run).\n";
  y += "# SkyPilot checks every entry of resources.ordered, then tries them in this order;\n"
       "# each is pinned to its cloud/region, instance type, spot or not and the planned\n"
       "# price per node-hour (max_hourly_cost).\n";
  y += AlternativesComment(alts, alternative, "skypilot");
  y += LeftOutComment(file.left_out);
  absl::StrAppend(&y, "name: ", Q(absl::StrCat("gpu-advisor-", TaskSlug(request))), "\n");
  if (!serving) absl::StrAppend(&y, "num_nodes: ", ShapeOf(*kept.front()).nodes_per_unit, "\n");
  y += "resources:\n  ordered:\n";
  for (const Recommendation* r : kept) {
    // Recommendations are not contiguous: find the entry's names by identity.
    for (int i = 0; i < response.recommendations_size(); ++i) {
      if (&response.recommendations(i) == r) y += Entry(*r, names[i]);
    }
  }
  if (serving) y += ServiceSection(*kept.front());
  y += "run: |\n  echo \"replace with your job\"\n";
  file.text = std::move(y);
  return file;
}

}  // namespace gpuadvisor::gateway::export_internal
