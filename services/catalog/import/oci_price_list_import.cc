#include "services/catalog/import/oci_price_list_import.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "services/catalog/import/json.h"
#include "services/catalog/import/offer_shape.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Offer;

// "BM.GPU.H100.8" -> "h100", "VM.GPU.A10.1" -> "a10"; "" for shapes without
// a GPU name ("BM.GPU4.8").
std::string ShapeGpuName(const std::string& shape) {
  const size_t start = shape.find(".GPU.");
  const size_t end = shape.rfind('.');
  if (start == std::string::npos || end <= start + 5) return "";
  return absl::AsciiStrToLower(shape.substr(start + 5, end - start - 5));
}

// "Compute - GPU - H100" -> "h100", "OCI - Compute - GPU - A100 - v2" ->
// "a100-v2"; "" when the name has no "GPU - ".
std::string ItemGpuName(const std::string& display_name) {
  const size_t at = display_name.find("GPU - ");
  if (at == std::string::npos) return "";
  return absl::AsciiStrToLower(absl::StrReplaceAll(display_name.substr(at + 6), {{" ", ""}}));
}

// The item's pay-as-you-go USD price; nullopt when it has none.
std::optional<double> PayAsYouGoUsd(const json::Value& item) {
  const json::Value* locals = json::Get(item, "currencyCodeLocalizations");
  if (locals == nullptr || locals->kind_case() != json::Value::kListValue) return std::nullopt;
  for (const json::Value& local : locals->list_value().values()) {
    if (json::String(local, "currencyCode") != "USD") continue;
    const json::Value* prices = json::Get(local, "prices");
    if (prices == nullptr || prices->kind_case() != json::Value::kListValue) continue;
    for (const json::Value& p : prices->list_value().values()) {
      if (json::String(p, "model") == "PAY_AS_YOU_GO") return json::Number(p, "value");
    }
  }
  return std::nullopt;
}

// The row checks: the shapes the item prices, or the reason it is rejected.
std::optional<std::string> ReadOciItem(
    const json::Value& item, const std::map<std::string, std::vector<const Offer*>>& shapes,
    std::vector<const Offer*>& priced, double& usd_per_gpu_hour) {
  if (item.kind_case() != json::Value::kStructValue) return "not an object";
  const std::string metric = json::String(item, "metricName");
  if (metric != "GPU Per Hour") return absl::StrCat("metric ", metric.empty() ? "(none)" : metric);
  const std::optional<double> price = PayAsYouGoUsd(item);
  if (!price || *price <= 0) return "no pay-as-you-go USD price";
  const std::string name = ItemGpuName(json::String(item, "displayName"));
  auto it = shapes.find(name);
  if (name.empty() || it == shapes.end()) return "no known shape for the GPU part";
  priced = it->second;
  usd_per_gpu_hour = *price;
  return std::nullopt;
}

}  // namespace

absl::StatusOr<ImportedOffers> ImportOciPriceList(
    absl::string_view json_text, absl::string_view file_name,
    const google::protobuf::RepeatedPtrField<Offer>& known_offers) {
  absl::StatusOr<json::Value> root = json::Parse(json_text, file_name);
  if (!root.ok()) return root.status();
  absl::StatusOr<std::vector<const json::Value*>> items =
      json::PageItems(*root, "items", file_name, "not an OCI price list");
  if (!items.ok()) return items.status();
  std::map<std::string, std::vector<const Offer*>> shapes;  // GPU name -> known shapes
  for (const Offer& o : known_offers) {
    if (o.provider() != "oci") continue;
    if (std::string name = ShapeGpuName(o.instance_type()); !name.empty()) {
      shapes[name].push_back(&o);
    }
  }
  ImportedOffers out;
  out.report.format = "oci-price-list";
  out.report.file = std::string(file_name);
  out.has_spot_prices = false;
  bool any_localized = false;
  std::map<std::string, bool> seen;  // offer ids already priced
  for (const json::Value* item : *items) {
    ++out.report.rows_read;
    any_localized |= json::Get(*item, "currencyCodeLocalizations") != nullptr;
    std::vector<const Offer*> priced;
    double per_gpu = 0;
    if (std::optional<std::string> reason = ReadOciItem(*item, shapes, priced, per_gpu)) {
      out.report.Reject(*reason);
      continue;
    }
    if (seen.contains(priced.front()->id())) {
      out.report.Reject("duplicate part for the same GPU");
      continue;
    }
    ++out.report.rows_kept;
    for (const Offer* shape : priced) {
      seen[shape->id()] = true;
      // The machine only: the price is the list's (no spot price in it).
      Offer& offer = out.offers.emplace_back(MachineShapeOf(*shape));
      offer.set_id(shape->id());
      offer.set_region(shape->region());
      offer.set_on_demand_usd_per_hour(per_gpu * shape->gpus_per_node());
      offer.set_source(
          absl::StrCat("oci-price-list:", file_name, ": part ", json::String(*item, "partNumber"),
                       " \"", json::String(*item, "displayName"), "\" $", per_gpu, "/GPU-hour"));
    }
  }
  if (out.report.rows_read > 0 && !any_localized) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": no item has \"currencyCodeLocalizations\" (a changed schema?)"));
  }
  SortById(out.offers);
  return out;
}

}  // namespace gpuadvisor::catalog
