// Karpenter v1 NodePools (export.h).

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "services/gateway/export_internal.h"

namespace gpuadvisor::gateway::export_internal {
namespace {

using v1::Recommendation;

std::string K8sName(const std::string& s) {
  std::string out;
  for (char c : absl::AsciiStrToLower(s)) {
    out += absl::ascii_isalnum(static_cast<unsigned char>(c)) ? c : '-';
  }
  return out.substr(0, 63);
}

std::string GpuResource(const std::string& gpu_model) {
  const std::vector<std::string> amd = ListAt({"karpenter", "amd_gpus"});
  const bool is_amd = std::find(amd.begin(), amd.end(), gpu_model) != amd.end();
  return NameAt({"karpenter", "gpu_resources", is_amd ? "amd" : "nvidia"});
}

// Weights from 100 down, spread over the pools (at most 10 apart), so that
// Karpenter tries rank 1's pool first and a pool added later can sit between.
std::vector<int> Weights(int n) {
  std::vector<int> out;
  const int step = n <= 1 ? 1 : std::max(1, std::min(10, 99 / (n - 1)));
  for (int i = 0; i < n; ++i) out.push_back(std::max(1, 100 - i * step));
  return out;
}

// A multi-node job's nodes in one zone: the zone (AWS zone id, cheapest spot
// zone first) where the catalog data lists the instance type; else the
// region's first zone by the provider's naming rule (data/exports: AWS
// "<region>a", AKS "<region>-1"), so every node the pool launches is in one
// zone whatever the pods ask; where the type is not offered there the pool
// launches nothing and Karpenter goes on to the next weight.
std::string ZoneRequirement(const Recommendation& r) {
  const auto& o = r.offer();
  if (ShapeOf(r).serving || ShapeOf(r).total_nodes() < 2) return "";
  const std::vector<std::string> zones =
      ListAt({"karpenter", "zone_ids", o.provider(), o.instance_type() + "/" + o.region()});
  if (!zones.empty()) {
    return absl::StrCat("        - key: ", Q(NameAt({"karpenter", "zone_label_aws"})),
                        "\n          operator: In\n          values: ", QList({zones.front()}),
                        "\n");
  }
  const std::string zone = absl::StrReplaceAll(NameAt({"karpenter", "first_zone", o.provider()}),
                                               {{"{region}", o.region()}});
  return absl::StrCat("        # No zone data for ", o.instance_type(), " in ", o.region(),
                      ": the region's first zone keeps the ", ShapeOf(r).total_nodes(),
                      " nodes together.\n        - key: ", Q(NameAt({"karpenter", "zone_label"})),
                      "\n          operator: In\n          values: ", QList({zone}), "\n");
}

std::string NodePool(const Recommendation& r, int weight, const std::string& group,
                     const std::string& kind, const std::string& class_name) {
  const auto& o = r.offer();
  const Shape shape = ShapeOf(r);
  const std::string gpu = GpuResource(o.gpu_model());
  std::string y = absl::StrCat("---\n# rank ", r.rank(), ": ", Summary(r), "\n");
  y += "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n";
  absl::StrAppend(
      &y, "  name: ",
      Q(K8sName(absl::StrCat("gpu-advisor-", r.rank(), "-", o.instance_type(), "-", Capacity(r)))),
      "\n");
  y += "  labels:\n    app.kubernetes.io/managed-by: gpu-advisor\n";
  y += "spec:\n";
  absl::StrAppend(&y, "  weight: ", weight, "\n");
  // The plan's cluster: no more GPUs than it priced.
  absl::StrAppend(&y, "  limits:\n    ", gpu, ": ", o.gpus_per_node() * shape.total_nodes(), "\n");
  y += "  disruption:\n    consolidationPolicy: WhenEmpty\n    consolidateAfter: 5m\n";
  y += "  template:\n    spec:\n      nodeClassRef:\n";
  absl::StrAppend(&y, "        group: ", Q(group), "\n        kind: ", Q(kind),
                  "\n        name: ", Q(class_name), "\n");
  y += "      expireAfter: Never\n";
  absl::StrAppend(&y, "      taints:\n        - key: ", Q(gpu), "\n          effect: NoSchedule\n");
  y += "      requirements:\n";
  absl::StrAppend(&y,
                  "        - key: \"node.kubernetes.io/instance-type\"\n          operator: In\n"
                  "          values: ",
                  QList({o.instance_type()}), "\n");
  absl::StrAppend(
      &y,
      "        - key: \"karpenter.sh/capacity-type\"\n          operator: In\n          values: ",
      QList({Capacity(r)}), "\n");
  y += ZoneRequirement(r);
  return y;
}

std::string Instructions(const std::string& provider, const std::string& region,
                         const std::string& kind, const std::string& class_name,
                         const std::string& gpu) {
  return absl::StrCat(
      "# For a Karpenter cluster in ", provider, " ", region, ". Apply: kubectl apply -f ",
      "nodepools.yaml.\n# Each NodePool is one planned offer; Karpenter tries the NodePool ",
      "with the highest weight first,\n# so the weights fall with the rank. Every pool ",
      "references the ", kind, " \"", class_name, "\"\n# (create it for your cluster: AMI or ",
      "image, subnets, security groups, role).\n# The pools carry the taint ", gpu,
      ":NoSchedule, so only pods that tolerate it launch them:\n", "#   tolerations: [{key: ", gpu,
      ", operator: Exists, effect: NoSchedule}]\n", "#   resources: {limits: {", gpu,
      ": <GPUs per node>}}\n",
      "# A multi-node job keeps its pods (and so the nodes Karpenter launches) in one zone\n",
      "# with a required pod affinity on ", NameAt({"karpenter", "zone_label"}), ":\n",
      "#   affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution:\n",
      "#     [{labelSelector: {matchLabels: {job-name: <job>}}, topologyKey: ",
      NameAt({"karpenter", "zone_label"}), "}]}}\n");
}

}  // namespace

absl::StatusOr<ExportFile> Karpenter(const v1::RecommendRequest& request,
                                     const v1::RecommendResponse& response) {
  ExportFile file;
  std::vector<const Recommendation*> kept;
  std::string provider, region;
  std::set<std::pair<std::string, std::string>> seen;  // instance type, capacity type
  for (const Recommendation& r : response.recommendations()) {
    const auto& o = r.offer();
    std::string why;
    if (!Has({"karpenter", "providers", o.provider()})) {
      why = absl::StrCat("no Karpenter provider for \"", o.provider(), "\"");
    } else if (r.purchase_option() == catalog::v1::PURCHASE_OPTION_RESERVED) {
      why = NameAt({"karpenter", "reserved"});
    } else if (!provider.empty() && (o.provider() != provider || o.region() != region)) {
      why = absl::StrCat("another cluster than ", provider, "/", region,
                         " (a Karpenter cluster runs in one region)");
    } else if (!seen.insert({o.instance_type(), Capacity(r)}).second) {
      why = "same instance type and capacity type as a higher rank";
    }
    if (!why.empty()) {
      file.left_out.push_back(absl::StrCat(RankName(r), ": ", why));
      continue;
    }
    if (provider.empty()) provider = o.provider(), region = o.region();
    kept.push_back(&r);
  }
  if (kept.empty()) return NothingLeft("Karpenter", response, file.left_out);
  const std::string group = NameAt({"karpenter", "providers", provider, "group"});
  const std::string kind = NameAt({"karpenter", "providers", provider, "kind"});
  const std::string class_name = NameAt({"karpenter", "providers", provider, "name"});
  std::string y = Header("Karpenter NodePools", request, response);
  y += Instructions(provider, region, kind, class_name, GpuResource(kept[0]->offer().gpu_model()));
  if (ShapeOf(*kept[0]).serving) {
    absl::StrAppend(&y, "# Serving: run the endpoint as a Deployment of ",
                    ShapeOf(*kept[0]).total_nodes(),
                    " GPU pods; each pool's limits admit that many nodes.\n");
  }
  y += LeftOutComment(file.left_out);
  const std::vector<int> weights = Weights(static_cast<int>(kept.size()));
  for (size_t i = 0; i < kept.size(); ++i) {
    y += NodePool(*kept[i], weights[i], group, kind, class_name);
  }
  file.text = std::move(y);
  return file;
}

}  // namespace gpuadvisor::gateway::export_internal
