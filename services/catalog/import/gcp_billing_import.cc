#include "services/catalog/import/gcp_billing_import.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "services/catalog/import/csv.h"
#include "services/catalog/import/json.h"
#include "services/catalog/import/offer_shape.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Offer;

enum class Term { kOnDemand, kSpot, kCommit1Yr };
enum class Part { kGpu, kCore, kRam };

// A SKU read as one component price: (term, part, name, region) -> USD/unit.
struct Component {
  Term term = Term::kOnDemand;
  Part part = Part::kGpu;
  std::string name;  // "Nvidia H100 80GB" or the family "A3Plus"
};

std::string Key(Term term, Part part, absl::string_view name, absl::string_view region) {
  return absl::StrCat(static_cast<int>(term), "|", static_cast<int>(part), "|", name, "|", region);
}

// The name a description gives the component: everything before the part's
// word ("Nvidia H100 80GB GPU running in ..." -> "Nvidia H100 80GB";
// "Spot Preemptible A3 Instance Core running in ..." -> "A3";
// "Commitment v1: A3Plus Ram in Virginia for 1 Year" -> "A3Plus").
std::optional<std::string> ComponentName(absl::string_view description, Part part) {
  absl::ConsumePrefix(&description, "Commitment v1: ");
  absl::ConsumePrefix(&description, "Spot Preemptible ");
  const char* markers[3];
  int n = 0;
  switch (part) {
    case Part::kGpu:
      markers[n++] = " GPU";
      break;
    case Part::kCore:
      markers[n++] = " Instance Core";
      markers[n++] = " Cpu";
      break;
    case Part::kRam:
      markers[n++] = " Instance Ram";
      markers[n++] = " Ram";
      break;
  }
  for (int i = 0; i < n; ++i) {
    const size_t at = description.find(markers[i]);
    if (at != absl::string_view::npos && at > 0) return std::string(description.substr(0, at));
  }
  return std::nullopt;
}

// USD per unit from pricingInfo[0]: the first tier with a non-zero price (a
// free first tier is a volume allowance), converted to USD.
std::optional<double> UsdPerUnit(const json::Value& sku, std::string* unit) {
  const json::Value* info = json::Get(sku, "pricingInfo");
  if (info == nullptr || info->kind_case() != json::Value::kListValue ||
      info->list_value().values_size() == 0) {
    return std::nullopt;
  }
  const json::Value& current = info->list_value().values(0);
  const json::Value* expression = json::Get(current, "pricingExpression");
  if (expression == nullptr) return std::nullopt;
  *unit = json::String(*expression, "usageUnit");
  const json::Value* tiers = json::Get(*expression, "tieredRates");
  if (tiers == nullptr || tiers->kind_case() != json::Value::kListValue) return std::nullopt;
  const double rate = json::Number(current, "currencyConversionRate").value_or(1.0);
  for (const json::Value& tier : tiers->list_value().values()) {
    const json::Value* price = json::Get(tier, "unitPrice");
    if (price == nullptr) continue;
    const double units = json::Number(*price, "units").value_or(0);
    const double nanos = json::Number(*price, "nanos").value_or(0);
    const double value = units + nanos * 1e-9;
    if (value <= 0) continue;
    const std::string currency = json::String(*price, "currencyCode");
    return (currency.empty() || currency == "USD" || rate <= 0) ? value : value / rate;
  }
  return std::nullopt;
}

// The SKU objects of any of the accepted shapes.
absl::Status CollectSkus(const json::Value& root, std::vector<const json::Value*>& out) {
  if (const json::Value* skus = json::Get(root, "skus")) {
    if (skus->kind_case() != json::Value::kListValue) {
      return absl::InvalidArgumentError("\"skus\" is not a list");
    }
    for (const json::Value& s : skus->list_value().values()) out.push_back(&s);
    return absl::OkStatus();
  }
  if (root.kind_case() != json::Value::kListValue) {
    return absl::InvalidArgumentError("expected {\"skus\": [...]}, a list of pages or of SKUs");
  }
  for (const json::Value& item : root.list_value().values()) {
    if (json::Get(item, "skus") != nullptr) {
      if (absl::Status s = CollectSkus(item, out); !s.ok()) return s;
    } else {
      out.push_back(&item);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<GcpSkuFamily>> ParseGcpSkuFamilies(absl::string_view text,
                                                              absl::string_view file_name) {
  absl::StatusOr<std::vector<CsvRecord>> records = ParseCsv(BlankCommentLines(text), file_name);
  if (!records.ok()) return records.status();
  if (records->empty()) return absl::InvalidArgumentError(absl::StrCat(file_name, ": empty"));
  const CsvHeader header(records->front());
  for (const char* column : {"machine_prefix", "sku_family", "gpu_skus"}) {
    if (!header.Find(column)) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_name, ":", records->front().line, ": missing column \"", column, "\""));
    }
  }
  std::vector<GcpSkuFamily> families;
  for (size_t r = 1; r < records->size(); ++r) {
    const CsvRecord& record = (*records)[r];
    GcpSkuFamily f;
    f.machine_prefix =
        std::string(absl::StripAsciiWhitespace(header.Cell(record, "machine_prefix")));
    f.sku_family = std::string(absl::StripAsciiWhitespace(header.Cell(record, "sku_family")));
    for (absl::string_view gpu : absl::StrSplit(header.Cell(record, "gpu_skus"), '|')) {
      gpu = absl::StripAsciiWhitespace(gpu);
      if (!gpu.empty()) f.gpu_skus.emplace_back(gpu);
    }
    if (f.machine_prefix.empty() || f.sku_family.empty() || f.gpu_skus.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          file_name, ":", record.line, ": machine_prefix, sku_family and gpu_skus must be set"));
    }
    families.push_back(std::move(f));
  }
  return families;
}

namespace {

using PriceMap = absl::flat_hash_map<std::string, std::pair<double, size_t>>;  // key -> (usd, sku)

// Pass 1's result: component prices by key, and per SKU its rejection (empty
// when priced) and effective date.
struct SkuPrices {
  PriceMap prices;
  std::vector<std::string> rejection;
  std::map<size_t, std::string> effective_time;
};

// The part and term of a SKU's category; the reason when not imported.
std::optional<std::string> Classify(const json::Value& category, Part& part, Term& term) {
  const std::string group = json::String(category, "resourceGroup");
  const std::string usage = json::String(category, "usageType");
  if (group == "GPU") {
    part = Part::kGpu;
  } else if (group == "CPU") {
    part = Part::kCore;
  } else if (group == "RAM") {
    part = Part::kRam;
  } else {
    return absl::StrCat("not a GPU machine component (", group, ")");
  }
  if (usage == "OnDemand") {
    term = Term::kOnDemand;
  } else if (usage == "Preemptible") {
    term = Term::kSpot;
  } else if (usage == "Commit1Yr") {
    term = Term::kCommit1Yr;
  } else {
    return absl::StrCat("usage type ", usage, " not imported");
  }
  return std::nullopt;
}

std::string EffectiveDate(const json::Value& sku) {
  std::string when = json::String(sku, "effectiveTime");
  if (when.empty()) {
    if (const json::Value* info = json::Get(sku, "pricingInfo");
        info != nullptr && info->kind_case() == json::Value::kListValue &&
        info->list_value().values_size() > 0) {
      when = json::String(info->list_value().values(0), "effectiveTime");
    }
  }
  return when.substr(0, 10);
}

// One SKU into `out.prices`, or its rejection.
std::optional<std::string> ReadSku(const json::Value& sku, size_t i,
                                   const std::set<std::string>& family_names,
                                   const std::set<std::string>& gpu_names, SkuPrices& out) {
  const json::Value* category = json::Get(sku, "category");
  if (category == nullptr) return "no category";
  Part part = Part::kGpu;
  Term term = Term::kOnDemand;
  if (std::optional<std::string> reason = Classify(*category, part, term)) return reason;
  const std::string group = json::String(*category, "resourceGroup");
  std::optional<std::string> name = ComponentName(json::String(sku, "description"), part);
  if (!name) return absl::StrCat("description not understood (", group, ")");
  if (part == Part::kGpu ? !gpu_names.count(*name) : !family_names.count(*name)) {
    return absl::StrCat("no machine family uses ", group, " SKU \"", *name, "\"");
  }
  std::string unit;
  const std::optional<double> usd = UsdPerUnit(sku, &unit);
  if (!usd) return "no price";
  if (unit != (part == Part::kRam ? "GiBy.h" : "h"))
    return absl::StrCat("unit ", unit, " for ", group);
  const json::Value* regions = json::Get(sku, "serviceRegions");
  if (regions == nullptr || regions->kind_case() != json::Value::kListValue ||
      regions->list_value().values_size() == 0) {
    return "no serviceRegions";
  }
  for (const json::Value& region : regions->list_value().values()) {
    out.prices[Key(term, part, *name, region.string_value())] = {*usd, i};
  }
  out.effective_time[i] = EffectiveDate(sku);
  return std::nullopt;
}

// Pass 1: every SKU to component prices, or a rejection.
SkuPrices ReadSkus(const std::vector<const json::Value*>& skus,
                   const std::vector<GcpSkuFamily>& families) {
  // Names the machine families use, to tell "no machine uses it" from noise.
  std::set<std::string> family_names, gpu_names;
  for (const GcpSkuFamily& f : families) {
    family_names.insert(f.sku_family);
    gpu_names.insert(f.gpu_skus.begin(), f.gpu_skus.end());
  }
  SkuPrices out;
  out.rejection.resize(skus.size());
  for (size_t i = 0; i < skus.size(); ++i) {
    if (std::optional<std::string> reason = ReadSku(*skus[i], i, family_names, gpu_names, out)) {
      out.rejection[i] = *reason;
    }
  }
  return out;
}

// The price of one term of `shape` in `region` (0 when a component is
// missing), and the SKUs that make it.
double ShapePrice(const Offer& shape, const GcpSkuFamily& family, const PriceMap& prices,
                  const std::string& region, Term term, std::vector<size_t>& parts) {
  const double ram_gib = static_cast<double>(shape.ram_bytes()) / (1024.0 * 1024.0 * 1024.0);
  const std::pair<double, size_t>* gpu = nullptr;
  for (const std::string& g : family.gpu_skus) {
    auto it = prices.find(Key(term, Part::kGpu, g, region));
    if (it != prices.end()) gpu = &it->second;
  }
  auto core = prices.find(Key(term, Part::kCore, family.sku_family, region));
  auto ram = prices.find(Key(term, Part::kRam, family.sku_family, region));
  if (gpu == nullptr || core == prices.end() || ram == prices.end()) return 0;
  parts = {gpu->second, core->second.second, ram->second.second};
  return shape.gpus_per_node() * gpu->first + shape.vcpus() * core->second.first +
         ram_gib * ram->second.first;
}

// The offer of `shape` in `region`, when any term is priced; marks the SKUs used.
void PriceShapeInRegion(const Offer& shape, const GcpSkuFamily& family, const SkuPrices& sp,
                        const std::vector<const json::Value*>& skus, const std::string& region,
                        absl::string_view file_name, std::vector<char>& used,
                        std::vector<Offer>& offers) {
  std::vector<size_t> on_demand_parts, spot_parts, commit_parts;
  const double on_demand =
      ShapePrice(shape, family, sp.prices, region, Term::kOnDemand, on_demand_parts);
  const double spot = ShapePrice(shape, family, sp.prices, region, Term::kSpot, spot_parts);
  const double commit =
      ShapePrice(shape, family, sp.prices, region, Term::kCommit1Yr, commit_parts);
  if (on_demand <= 0 && spot <= 0 && commit <= 0) return;
  // The machine only: prices, terms and dates are the SKUs'.
  Offer& offer = offers.emplace_back(MachineShapeOf(shape));
  offer.set_id(absl::StrCat("gcp/", shape.instance_type(), "/", region));
  offer.set_region(region);
  offer.set_on_demand_usd_per_hour(on_demand);
  offer.set_spot_usd_per_hour(spot);
  offer.set_reserved_usd_per_hour(commit);
  std::vector<std::string> ids;
  std::string as_of;
  for (const auto* parts : {&on_demand_parts, &spot_parts, &commit_parts}) {
    for (size_t i : *parts) {
      used[i] = 1;
      ids.push_back(json::String(*skus[i], "skuId"));
      as_of = std::max(as_of, sp.effective_time.at(i));
    }
  }
  const double ram_gib = static_cast<double>(shape.ram_bytes()) / (1024.0 * 1024.0 * 1024.0);
  offer.set_source(absl::StrFormat(
      "gcp-billing:%s: %d x GPU + %d vCPU x core + %.0f GiB x RAM SKUs (%s), effective %s",
      file_name, shape.gpus_per_node(), shape.vcpus(), ram_gib, absl::StrJoin(ids, " "), as_of));
  offer.set_as_of(as_of);
}

}  // namespace

absl::StatusOr<ImportedOffers> ImportGcpBillingSkus(
    absl::string_view json_text, absl::string_view file_name,
    const std::vector<GcpSkuFamily>& families,
    const google::protobuf::RepeatedPtrField<Offer>& known_offers) {
  absl::StatusOr<json::Value> root = json::Parse(json_text, file_name);
  if (!root.ok()) return root.status();
  std::vector<const json::Value*> skus;
  if (absl::Status s = CollectSkus(*root, skus); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", s.message()));
  }
  ImportedOffers out;
  out.report.format = "gcp-billing";
  out.report.file = std::string(file_name);
  out.report.rows_read = static_cast<int>(skus.size());
  const SkuPrices sp = ReadSkus(skus, families);

  // Pass 2: price every known GCP machine shape in every region.
  std::set<std::string> regions;
  for (const auto& [key, value] : sp.prices) {
    regions.insert(std::string(key.substr(key.rfind('|') + 1)));
  }
  std::vector<char> used(skus.size(), 0);
  std::set<std::string> shapes_done;
  for (const Offer& shape : known_offers) {
    if (shape.provider() != "gcp" || !shapes_done.insert(shape.instance_type()).second) continue;
    const GcpSkuFamily* family = nullptr;
    for (const GcpSkuFamily& f : families) {
      if (absl::StartsWith(shape.instance_type(), f.machine_prefix)) family = &f;
    }
    if (family == nullptr || shape.gpus_per_node() < 1) continue;
    for (const std::string& region : regions) {
      PriceShapeInRegion(shape, *family, sp, skus, region, file_name, used, out.offers);
    }
  }
  for (size_t i = 0; i < skus.size(); ++i) {
    if (used[i]) {
      ++out.report.rows_kept;
    } else {
      out.report.Reject(sp.rejection[i].empty() ? "no catalog machine type in its regions"
                                                : sp.rejection[i]);
    }
  }
  SortById(out.offers);
  return out;
}

}  // namespace gpuadvisor::catalog
