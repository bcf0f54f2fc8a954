#include "services/gateway/export.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/io/json_quote.h"
#include "google/protobuf/util/json_util.h"
#include "services/gateway/export_internal.h"
#include "services/gateway/orchestrators_data.h"

namespace gpuadvisor::gateway {
namespace export_internal {

using catalog::v1::PurchaseOption;
using google::protobuf::Struct;
using google::protobuf::Value;
using v1::Recommendation;

const Struct& Names() {
  static const Struct* names = [] {
    auto* root = new Struct;
    // The file is compiled in and checked by export_test; a parse failure
    // leaves it empty, which the test catches.
    (void)google::protobuf::util::JsonStringToMessage(OrchestratorsJson(), root);
    return root;
  }();
  return *names;
}

namespace {
const Value* ValueAt(std::initializer_list<absl::string_view> path) {
  const Struct* s = &Names();
  const Value* v = nullptr;
  for (absl::string_view key : path) {
    if (s == nullptr) return nullptr;
    auto it = s->fields().find(std::string(key));
    if (it == s->fields().end()) return nullptr;
    v = &it->second;
    s = v->has_struct_value() ? &v->struct_value() : nullptr;
  }
  return v;
}
}  // namespace

std::string NameAt(std::initializer_list<absl::string_view> path) {
  const Value* v = ValueAt(path);
  return v != nullptr ? v->string_value() : "";
}

const Struct& ObjectAt(std::initializer_list<absl::string_view> path) {
  const Value* v = ValueAt(path);
  return v != nullptr ? v->struct_value() : Struct::default_instance();
}

bool Has(std::initializer_list<absl::string_view> path) { return ValueAt(path) != nullptr; }

double NumberAt(std::initializer_list<absl::string_view> path) {
  const Value* v = ValueAt(path);
  return v != nullptr ? v->number_value() : 0;
}

std::vector<std::string> ListAt(std::initializer_list<absl::string_view> path) {
  std::vector<std::string> out;
  const Value* v = ValueAt(path);
  if (v == nullptr) return out;
  for (const Value& item : v->list_value().values()) out.push_back(item.string_value());
  return out;
}

std::string Q(const std::string& s) { return JsonQuote(s); }

std::string QList(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& s : items) quoted.push_back(Q(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

const char* Capacity(const Recommendation& r) {
  switch (r.purchase_option()) {
    case catalog::v1::PURCHASE_OPTION_SPOT:
      return "spot";
    case catalog::v1::PURCHASE_OPTION_RESERVED:
      return "reserved";
    default:
      return "on-demand";
  }
}

std::string Summary(const Recommendation& r) {
  const auto& o = r.offer();
  const Shape shape = ShapeOf(r);
  std::string size = o.nodes() > 1 ? absl::StrCat(" x ", o.nodes(), " nodes") : "";
  if (shape.serving) {
    size = absl::StrCat(" x ", shape.total_nodes(), shape.total_nodes() == 1 ? " node" : " nodes",
                        ", ", r.serving().replicas() + r.serving().spare_replicas(), " replicas");
  }
  return absl::StrFormat("%dx %s%s, %s, %.1f h, $%.2f/h, $%.2f total", o.gpus_per_node(),
                         o.gpu_model(), size, Capacity(r), r.estimated_hours(),
                         r.cost().usd_per_hour(), r.cost().total_usd());
}

std::string RankName(const Recommendation& r) {
  return absl::StrCat("rank ", r.rank(), " ", r.offer().provider(), "/", r.offer().instance_type(),
                      "/", r.offer().region());
}

std::string TaskSlug(const v1::RecommendRequest& request) {
  std::string task = sizing::v1::Task_Name(request.workload().task());
  if (absl::StartsWith(task, "TASK_")) task = task.substr(5);
  for (char& c : task) c = c == '_' ? '-' : absl::ascii_tolower(static_cast<unsigned char>(c));
  return task;
}

std::string Header(const char* what, const v1::RecommendRequest& request,
                   const v1::RecommendResponse& response) {
  std::string model = request.workload().model().preset();
  if (model.empty()) model = request.workload().model().name();
  return absl::StrCat(
      "# ", what, " from GPU Advisor: ", model.empty() ? "" : model + " ", TaskSlug(request),
      ", fallbacks in rank order (", v1::Objective_Name(response.objective()), ").\n", "# Catalog ",
      response.catalog_version(), ", price book ", response.price_book_version(), ", prices as of ",
      response.prices_as_of(), ". Names: ", "data/exports/orchestrators.json (as of ",
      NameAt({"as_of"}), ").\n");
}

Shape ShapeOf(const Recommendation& r) {
  Shape s;
  const int nodes = std::max(1, r.offer().nodes());
  s.nodes_per_unit = nodes;
  if (!r.has_serving() || r.serving().replicas() <= 0) return s;
  s.serving = true;
  const int replicas = r.serving().replicas();
  const int spare = std::max(0, r.serving().spare_replicas());
  if (replicas >= nodes) {
    // One or more model copies per node: each node is a replica.
    s.nodes_per_unit = 1;
    s.copies_per_node = std::max(1, replicas / nodes);
    s.units = nodes + spare / s.copies_per_node;
  } else {
    s.nodes_per_unit = std::max(1, nodes / replicas);
    s.units = replicas + spare;
  }
  return s;
}

double NodePricePerHour(const Recommendation& r) {
  const auto& o = r.offer();
  switch (r.purchase_option()) {
    case catalog::v1::PURCHASE_OPTION_SPOT:
      return o.spot_max_usd_per_hour() > 0 ? o.spot_max_usd_per_hour() : o.spot_usd_per_hour();
    case catalog::v1::PURCHASE_OPTION_RESERVED:
      return o.reserved_usd_per_hour();
    default:
      return o.on_demand_usd_per_hour();
  }
}

double CapAbove(double usd) { return std::ceil(usd * 100.0 - 1e-6) / 100.0; }

std::string LeftOutComment(const std::vector<std::string>& left_out) {
  if (left_out.empty()) return "";
  std::string out = "# Left out:\n";
  for (const std::string& s : left_out) absl::StrAppend(&out, "#   ", s, "\n");
  return out;
}

absl::Status NothingLeft(const char* orchestrator, const v1::RecommendResponse& response,
                         const std::vector<std::string>& left_out) {
  if (response.recommendations().empty()) {
    return absl::NotFoundError("recommendations: none qualified, nothing to export");
  }
  return absl::NotFoundError(absl::StrCat("recommendations: none that ", orchestrator,
                                          " can run as planned (", absl::StrJoin(left_out, "; "),
                                          ")"));
}

void AddToGroup(Alternatives& a, const std::string& key, const Recommendation* r) {
  auto it = std::find(a.keys.begin(), a.keys.end(), key);
  if (it == a.keys.end()) {
    a.keys.push_back(key);
    a.groups.push_back({r});
    return;
  }
  a.groups[it - a.keys.begin()].push_back(r);
}

std::string AlternativesComment(const Alternatives& a, int chosen, const char* format) {
  if (a.groups.size() < 2) return "";
  std::string out =
      "# This answer's fallbacks are in several files (one per shape, and per set of offers one "
      "file can hold):\n";
  for (size_t i = 0; i < a.groups.size(); ++i) {
    std::vector<std::string> ranks;
    for (const Recommendation* r : a.groups[i]) ranks.push_back(absl::StrCat(r->rank()));
    absl::StrAppend(&out, "#   ", static_cast<int>(i) + 1 == chosen ? "this file" : "         ",
                    " alternative=", i + 1, ": ", a.keys[i], " (ranks ", absl::StrJoin(ranks, ", "),
                    "): ?format=", format, "&alternative=", i + 1, " or --export=", format,
                    " --export_alternative=", i + 1, "\n");
  }
  return out;
}

}  // namespace export_internal

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

absl::StatusOr<ExportFile> ExportAnswer(ExportFormat format, const v1::RecommendRequest& request,
                                        const v1::RecommendResponse& response, int alternative) {
  if (alternative < 1) return absl::InvalidArgumentError("alternative: must be >= 1");
  switch (format) {
    case ExportFormat::kSkyPilot:
      return export_internal::SkyPilot(request, response, alternative);
    case ExportFormat::kDstack:
      return export_internal::Dstack(request, response, alternative);
    case ExportFormat::kKarpenter:
      if (alternative != 1) {
        return absl::NotFoundError("alternative: Karpenter NodePools hold every shape in one file");
      }
      return export_internal::Karpenter(request, response);
  }
  return absl::InvalidArgumentError("format: unknown");
}

std::string ExportHeaderValue(const std::vector<std::string>& left_out) {
  std::string out = absl::StrJoin(left_out, "; ");
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e) c = '?';
  }
  return out;
}

absl::StatusOr<std::string> ExportRecommendations(ExportFormat format,
                                                  const v1::RecommendRequest& request,
                                                  const v1::RecommendResponse& response) {
  absl::StatusOr<ExportFile> file = ExportAnswer(format, request, response);
  if (!file.ok()) return file.status();
  return std::move(file->text);
}

}  // namespace gpuadvisor::gateway
