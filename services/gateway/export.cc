#include "services/gateway/export.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/io/json_quote.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "services/gateway/orchestrators_data.h"

namespace gpuadvisor::gateway {
namespace {

using catalog::v1::PurchaseOption;
using v1::Recommendation;

// data/exports/orchestrators.json, parsed once.
struct OrchestratorNames {
  std::map<std::string, std::string> skypilot_clouds;   // provider -> SkyPilot cloud
  std::map<std::string, std::string> dstack_backends;   // provider -> dstack backend
  std::map<std::string, std::string> dstack_gpu_names;  // Gpu.name -> dstack GPU name
  std::map<std::string, std::pair<std::string, std::string>> karpenter_node_classes;  // group, kind
  std::string as_of;
};

std::map<std::string, std::string> StringMap(const google::protobuf::Struct& root,
                                             const char* key) {
  std::map<std::string, std::string> out;
  auto it = root.fields().find(key);
  if (it == root.fields().end()) return out;
  for (const auto& [k, v] : it->second.struct_value().fields()) out[k] = v.string_value();
  return out;
}

const OrchestratorNames& Names() {
  static const OrchestratorNames* names = [] {
    auto* n = new OrchestratorNames;
    google::protobuf::Struct root;
    // The file is compiled in and checked by export_test; a parse failure
    // leaves every map empty, which the test catches.
    (void)google::protobuf::util::JsonStringToMessage(OrchestratorsJson(), &root);
    n->skypilot_clouds = StringMap(root, "skypilot_clouds");
    n->dstack_backends = StringMap(root, "dstack_backends");
    n->dstack_gpu_names = StringMap(root, "dstack_gpu_names");
    auto it = root.fields().find("karpenter_node_classes");
    if (it != root.fields().end()) {
      for (const auto& [provider, v] : it->second.struct_value().fields()) {
        const auto& f = v.struct_value().fields();
        n->karpenter_node_classes[provider] = {f.at("group").string_value(),
                                               f.at("kind").string_value()};
      }
    }
    if (auto d = root.fields().find("as_of"); d != root.fields().end())
      n->as_of = d->second.string_value();
    return n;
  }();
  return *names;
}

// A YAML double-quoted scalar (a JSON string literal is one).
std::string Q(const std::string& s) { return JsonQuote(s); }

std::string QList(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& s : items) quoted.push_back(Q(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

// "8x H100-SXM x 2 nodes, spot, 3.2 h, $41.50/h, $133.20 total"
std::string Summary(const Recommendation& r) {
  const auto& o = r.offer();
  std::string purchase = r.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? "spot"
                         : r.purchase_option() == catalog::v1::PURCHASE_OPTION_RESERVED
                             ? "reserved"
                             : "on-demand";
  return absl::StrFormat("%dx %s%s, %s, %.1f h, $%.2f/h, $%.2f total", o.gpus_per_node(),
                         o.gpu_model(),
                         o.nodes() > 1 ? absl::StrCat(" x ", o.nodes(), " nodes") : "", purchase,
                         r.estimated_hours(), r.cost().usd_per_hour(), r.cost().total_usd());
}

std::string TaskSlug(const v1::RecommendRequest& request) {
  std::string task = sizing::v1::Task_Name(request.workload().task());
  return absl::StartsWith(task, "TASK_") ? task.substr(5) : task;
}

std::string Header(const char* what, const v1::RecommendRequest& request,
                   const v1::RecommendResponse& response) {
  std::string model = request.workload().model().preset();
  if (model.empty()) model = request.workload().model().name();
  return absl::StrCat("# ", what, " from GPU Advisor: ", model.empty() ? "" : model + " ",
                      absl::AsciiStrToLower(TaskSlug(request)), ", offers in rank order (",
                      v1::Objective_Name(response.objective()), ").\n", "# Catalog ",
                      response.catalog_version(), ", price book ", response.price_book_version(),
                      ", prices as of ", response.prices_as_of(), ".\n");
}

std::string SkippedComment(const std::vector<std::string>& skipped) {
  if (skipped.empty()) return "";
  std::string out = "# Left out:\n";
  for (const std::string& s : skipped) absl::StrAppend(&out, "#   ", s, "\n");
  return out;
}

absl::Status NothingLeft(const char* orchestrator, const v1::RecommendResponse& response,
                         const std::vector<std::string>& skipped) {
  if (response.recommendations().empty()) {
    return absl::NotFoundError("recommendations: none qualified, nothing to export");
  }
  return absl::NotFoundError(absl::StrCat("recommendations: none that ", orchestrator, " can run (",
                                          absl::StrJoin(skipped, "; "), ")"));
}

std::string Nodes(int n) { return n == 1 ? "1 node" : absl::StrCat(n, " nodes"); }

std::string Rank(const Recommendation& r) {
  return absl::StrCat("rank ", r.rank(), " ", r.offer().provider(), "/", r.offer().instance_type(),
                      "/", r.offer().region());
}

// The recommendations one orchestrator task can fall back over, in rank
// order: a provider the orchestrator knows (`missing` words the skip reason
// for one it does not), on the node count of the first one kept.
struct TaskChoices {
  std::vector<const Recommendation*> kept;
  std::vector<std::string> skipped;  // "rank N: why"
  int nodes = 0;
};

TaskChoices OneTask(const v1::RecommendResponse& response, absl::string_view missing,
                    const std::function<bool(const std::string&)>& knows_provider) {
  TaskChoices out;
  for (const Recommendation& r : response.recommendations()) {
    if (!knows_provider(r.offer().provider())) {
      out.skipped.push_back(
          absl::StrCat(Rank(r), ": ", missing, " \"", r.offer().provider(), "\""));
      continue;
    }
    const int n = std::max(1, r.offer().nodes());
    if (out.nodes == 0) out.nodes = n;
    if (n != out.nodes) {
      out.skipped.push_back(absl::StrCat(Rank(r), ": ", Nodes(n), "; this task has ", out.nodes));
      continue;
    }
    out.kept.push_back(&r);
  }
  return out;
}

absl::StatusOr<std::string> SkyPilot(const v1::RecommendRequest& request,
                                     const v1::RecommendResponse& response) {
  const OrchestratorNames& names = Names();
  auto [kept, skipped, nodes] =
      OneTask(response, "SkyPilot has no cloud",
              [&](const std::string& p) { return names.skypilot_clouds.count(p) > 0; });
  if (kept.empty()) return NothingLeft("SkyPilot", response, skipped);
  std::string y = Header("SkyPilot task", request, response);
  y += "# Launch: sky launch -c gpu-advisor task.yaml (add your setup/run).\n";
  y += SkippedComment(skipped);
  absl::StrAppend(
      &y, "name: ",
      Q(absl::StrCat("gpu-advisor-",
                     absl::StrReplaceAll(absl::AsciiStrToLower(TaskSlug(request)), {{"_", "-"}}))),
      "\n");
  absl::StrAppend(&y, "num_nodes: ", nodes, "\n");
  y += "resources:\n  ordered:\n";
  for (const Recommendation* r : kept) {
    const auto& o = r->offer();
    absl::StrAppend(&y, "    # rank ", r->rank(), ": ", Summary(*r), "\n");
    absl::StrAppend(&y, "    - infra: ",
                    Q(absl::StrCat(names.skypilot_clouds.at(o.provider()), "/", o.region())), "\n");
    absl::StrAppend(&y, "      instance_type: ", Q(o.instance_type()), "\n");
    absl::StrAppend(&y, "      use_spot: ",
                    r->purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? "true" : "false",
                    "\n");
  }
  return y;
}

absl::StatusOr<std::string> Dstack(const v1::RecommendRequest& request,
                                   const v1::RecommendResponse& response) {
  const OrchestratorNames& names = Names();
  auto [kept, skipped, nodes] =
      OneTask(response, "dstack has no backend",
              [&](const std::string& p) { return names.dstack_backends.count(p) > 0; });
  if (kept.empty()) return NothingLeft("dstack", response, skipped);
  // Lists in rank order, without repeats.
  std::vector<std::string> backends, regions, instance_types, gpu_names;
  auto add = [](std::vector<std::string>& list, const std::string& v) {
    if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
  };
  int min_gpus = 1 << 30, max_gpus = 0;
  int64_t min_memory = INT64_MAX;
  double max_price = 0;
  bool spot = false, on_demand = false;
  for (const Recommendation* r : kept) {
    const auto& o = r->offer();
    add(backends, names.dstack_backends.at(o.provider()));
    add(regions, o.region());
    add(instance_types, o.instance_type());
    auto gpu = names.dstack_gpu_names.find(o.gpu_model());
    add(gpu_names, gpu == names.dstack_gpu_names.end() ? o.gpu_model() : gpu->second);
    min_gpus = std::min(min_gpus, o.gpus_per_node());
    max_gpus = std::max(max_gpus, o.gpus_per_node());
    if (r->gpu_memory_bytes() > 0) min_memory = std::min(min_memory, r->gpu_memory_bytes());
    // dstack's max_price is per instance (node) and hour.
    max_price = std::max(max_price, r->cost().usd_per_hour() / std::max(1, o.nodes()));
    (r->purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? spot : on_demand) = true;
  }
  std::string y = Header("dstack task", request, response);
  y += "# Apply: dstack apply -f task.dstack.yml (add your commands). Ranked offers:\n";
  for (const Recommendation* r : kept) {
    absl::StrAppend(&y, "#   ", r->rank(), ". ", r->offer().provider(), " ",
                    r->offer().instance_type(), " ", r->offer().region(), ": ", Summary(*r), "\n");
  }
  y += SkippedComment(skipped);
  y += "type: task\n";
  absl::StrAppend(
      &y, "name: ",
      Q(absl::StrCat("gpu-advisor-",
                     absl::StrReplaceAll(absl::AsciiStrToLower(TaskSlug(request)), {{"_", "-"}}))),
      "\n");
  absl::StrAppend(&y, "nodes: ", nodes, "\n");
  y += "commands:\n  - echo \"replace with your job\"\n";
  y += "resources:\n  gpu:\n";
  absl::StrAppend(&y, "    name: ", QList(gpu_names), "\n");
  absl::StrAppend(
      &y, "    count: ",
      min_gpus == max_gpus ? absl::StrCat(min_gpus) : Q(absl::StrCat(min_gpus, "..", max_gpus)),
      "\n");
  if (min_memory != INT64_MAX) {
    absl::StrAppend(&y, "    memory: ", Q(absl::StrCat(min_memory / 1000000000, "GB..")), "\n");
  }
  absl::StrAppend(&y, "backends: ", QList(backends), "\n");
  absl::StrAppend(&y, "regions: ", QList(regions), "\n");
  absl::StrAppend(&y, "instance_types: ", QList(instance_types), "\n");
  absl::StrAppend(&y, "spot_policy: ",
                  spot && on_demand ? "auto"
                  : spot            ? "spot"
                                    : "on-demand",
                  "\n");
  absl::StrAppend(&y, "max_price: ", absl::StrFormat("%.4f", max_price), "\n");
  return y;
}

std::string K8sName(const std::string& s) {
  std::string out;
  for (char c : absl::AsciiStrToLower(s)) {
    out += absl::ascii_isalnum(static_cast<unsigned char>(c)) ? c : '-';
  }
  return out.substr(0, 63);
}

absl::StatusOr<std::string> Karpenter(const v1::RecommendRequest& request,
                                      const v1::RecommendResponse& response) {
  const OrchestratorNames& names = Names();
  std::vector<const Recommendation*> kept;
  std::vector<std::string> skipped;
  std::string provider, region;
  std::set<std::pair<std::string, int>> seen;  // instance type, purchase option
  for (const Recommendation& r : response.recommendations()) {
    const auto& o = r.offer();
    if (names.karpenter_node_classes.count(o.provider()) == 0) {
      skipped.push_back(
          absl::StrCat(Rank(r), ": Karpenter has no node class for \"", o.provider(), "\""));
      continue;
    }
    if (provider.empty()) provider = o.provider(), region = o.region();
    if (o.provider() != provider || o.region() != region) {
      skipped.push_back(absl::StrCat(Rank(r), ": another cluster than ", provider, "/", region));
      continue;
    }
    if (!seen.insert({o.instance_type(), r.purchase_option()}).second) {
      skipped.push_back(
          absl::StrCat(Rank(r), ": same instance type and capacity type as a higher rank"));
      continue;
    }
    kept.push_back(&r);
  }
  if (kept.empty()) return NothingLeft("Karpenter", response, skipped);
  const auto& [group, kind] = names.karpenter_node_classes.at(provider);
  std::string y = Header("Karpenter NodePools", request, response);
  absl::StrAppend(&y, "# For a cluster in ", provider, " ", region,
                  ". Karpenter prefers the NodePool with the highest weight, so the weights\n"
                  "# follow the rank. nodeClassRef names the ",
                  kind, " \"default\": adjust it.\n");
  y += SkippedComment(skipped);
  int weight = 100;
  for (const Recommendation* r : kept) {
    const auto& o = r->offer();
    const char* capacity = r->purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? "spot"
                           : r->purchase_option() == catalog::v1::PURCHASE_OPTION_RESERVED
                               ? "reserved"
                               : "on-demand";
    absl::StrAppend(&y, "---\n# rank ", r->rank(), ": ", Summary(*r), "\n");
    y += "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n";
    absl::StrAppend(
        &y, "  name: ",
        Q(K8sName(absl::StrCat("gpu-advisor-", r->rank(), "-", o.instance_type(), "-", capacity))),
        "\n");
    y += "  labels:\n    app.kubernetes.io/managed-by: gpu-advisor\n";
    y += "spec:\n";
    absl::StrAppend(&y, "  weight: ", std::max(1, weight--), "\n");
    y += "  template:\n    spec:\n      nodeClassRef:\n";
    absl::StrAppend(&y, "        group: ", Q(group), "\n        kind: ", Q(kind),
                    "\n        name: \"default\"\n");
    y += "      requirements:\n";
    absl::StrAppend(&y,
                    "        - key: \"node.kubernetes.io/instance-type\"\n          operator: In\n "
                    "         values: ",
                    QList({o.instance_type()}), "\n");
    absl::StrAppend(
        &y,
        "        - key: \"karpenter.sh/capacity-type\"\n          operator: In\n          values: ",
        QList({capacity}), "\n");
  }
  return y;
}

}  // namespace

const std::vector<std::string>& ExportFormatNames() {
  static const std::vector<std::string> names = {"skypilot", "dstack", "karpenter"};
  return names;
}

absl::StatusOr<ExportFormat> ParseExportFormat(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "skypilot") return ExportFormat::kSkyPilot;
  if (lower == "dstack") return ExportFormat::kDstack;
  if (lower == "karpenter") return ExportFormat::kKarpenter;
  return absl::InvalidArgumentError(absl::StrCat("format: \"", name, "\" is not one of json, ",
                                                 absl::StrJoin(ExportFormatNames(), ", ")));
}

absl::StatusOr<std::string> ExportRecommendations(ExportFormat format,
                                                  const v1::RecommendRequest& request,
                                                  const v1::RecommendResponse& response) {
  switch (format) {
    case ExportFormat::kSkyPilot:
      return SkyPilot(request, response);
    case ExportFormat::kDstack:
      return Dstack(request, response);
    case ExportFormat::kKarpenter:
      return Karpenter(request, response);
  }
  return absl::InvalidArgumentError("format: unknown");
}

}  // namespace gpuadvisor::gateway
