#include "services/catalog/import/azure_retail_import.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/catalog/import/json.h"
#include "services/catalog/import/offer_shape.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Offer;

constexpr double kHoursPerYear = 8760;

enum class PriceKind { kOnDemand, kSpot, kReserved };

// One kept row: which price of which (size, region) it sets.
struct AzureRow {
  std::string sku;
  std::string region;
  PriceKind kind = PriceKind::kOnDemand;
  double usd_per_hour = 0;
  std::string effective;  // effectiveStartDate, for the source
};

// The row's price kind and hourly price, or the reason it is rejected.
std::optional<std::string> Classify(const json::Value& item, double price, AzureRow& row) {
  const std::string type = json::String(item, "type");
  const std::string meter = json::String(item, "meterName");
  if (absl::EndsWith(meter, "Low Priority")) return "Low Priority meter";
  if (type == "Consumption") {
    row.kind = absl::EndsWith(meter, "Spot") ? PriceKind::kSpot : PriceKind::kOnDemand;
    row.usd_per_hour = price;
    return std::nullopt;
  }
  if (type == "Reservation") {
    const std::string term = json::String(item, "reservationTerm");
    if (term != "1 Year") return absl::StrCat("reservation term ", term.empty() ? "(none)" : term);
    row.kind = PriceKind::kReserved;
    row.usd_per_hour = price / kHoursPerYear;
    return std::nullopt;
  }
  return absl::StrCat("type ", type.empty() ? "(missing)" : type);
}

// The row checks; the reason of a rejected row.
std::optional<std::string> ReadAzureRow(
    const json::Value& item, const absl::flat_hash_map<std::string, const Offer*>& shapes,
    AzureRow& row) {
  if (item.kind_case() != json::Value::kStructValue) return "not an object";
  if (json::String(item, "serviceName") != "Virtual Machines") return "not a virtual machine";
  const std::string currency = json::String(item, "currencyCode");
  if (currency != "USD") return absl::StrCat("currency ", currency);
  const std::string unit = json::String(item, "unitOfMeasure");
  if (unit != "1 Hour") return absl::StrCat("unit ", unit);
  if (absl::StrContains(json::String(item, "productName"), "Windows")) return "Windows";
  row.sku = json::String(item, "armSkuName");
  row.region = json::String(item, "armRegionName");
  if (row.region.empty()) return "no armRegionName";
  if (!shapes.contains(row.sku)) return "size not in the catalog (GPU model unknown)";
  const std::optional<double> price = json::Number(item, "retailPrice");
  if (!price || *price <= 0) return "no price";
  row.effective = json::String(item, "effectiveStartDate").substr(0, 10);
  return Classify(item, *price, row);
}

// Sets one price of `offer`; false when that price is already set (a
// duplicate meter).
bool SetPrice(const AzureRow& row, Offer& offer) {
  switch (row.kind) {
    case PriceKind::kOnDemand:
      if (offer.on_demand_usd_per_hour() > 0) return false;
      offer.set_on_demand_usd_per_hour(row.usd_per_hour);
      return true;
    case PriceKind::kSpot:
      if (offer.spot_usd_per_hour() > 0) return false;
      offer.set_spot_usd_per_hour(row.usd_per_hour);
      return true;
    case PriceKind::kReserved:
      if (offer.reserved_usd_per_hour() > 0) return false;
      offer.set_reserved_usd_per_hour(row.usd_per_hour);
      return true;
  }
  return false;
}

// The offers of the kept rows: one per (size, region) that has an on-demand
// row; the rows of the others are rejected.
void BuildAzureOffers(const std::vector<AzureRow>& rows,
                      const absl::flat_hash_map<std::string, const Offer*>& shapes,
                      absl::string_view file_name, ImportedOffers& out) {
  std::map<std::string, Offer> by_id;
  std::map<std::string, std::vector<const AzureRow*>> rows_by_id;
  for (const AzureRow& row : rows) {
    rows_by_id[absl::StrCat("azure/", row.sku, "/", row.region)].push_back(&row);
  }
  for (const auto& [id, group] : rows_by_id) {
    // The machine only: prices, terms and dates are the retail prices'.
    Offer offer = MachineShapeOf(*shapes.at(group.front()->sku));
    offer.set_id(id);
    offer.set_region(group.front()->region);
    int kept = 0;
    std::string effective;
    for (const AzureRow* row : group) {
      if (!SetPrice(*row, offer)) {
        out.report.Reject("duplicate meter for the same size, region and price");
        continue;
      }
      ++kept;
      effective = std::max(effective, row->effective);
    }
    if (offer.on_demand_usd_per_hour() <= 0) {
      out.report.rejected_by_reason["no on-demand row for the size and region"] += kept;
      continue;
    }
    offer.set_source(absl::StrCat("azure-retail:", file_name, ": ", group.front()->sku, " in ",
                                  group.front()->region, ", prices effective ", effective));
    offer.set_as_of(effective);
    out.report.rows_kept += kept;
    out.offers.push_back(std::move(offer));
  }
}

}  // namespace

absl::StatusOr<ImportedOffers> ImportAzureRetailPrices(
    absl::string_view json_text, absl::string_view file_name,
    const google::protobuf::RepeatedPtrField<Offer>& known_offers) {
  absl::StatusOr<json::Value> root = json::Parse(json_text, file_name);
  if (!root.ok()) return root.status();
  absl::StatusOr<std::vector<const json::Value*>> items =
      json::PageItems(*root, "Items", file_name, "not a Retail Prices page");
  if (!items.ok()) return items.status();
  absl::flat_hash_map<std::string, const Offer*> shapes;
  for (const Offer& o : known_offers) {
    if (o.provider() == "azure") shapes.emplace(o.instance_type(), &o);
  }
  ImportedOffers out;
  out.report.format = "azure-retail";
  out.report.file = std::string(file_name);
  std::vector<AzureRow> rows;
  bool any_price = false;
  for (const json::Value* item : *items) {
    ++out.report.rows_read;
    any_price |= json::Number(*item, "retailPrice").has_value();
    AzureRow row;
    if (std::optional<std::string> reason = ReadAzureRow(*item, shapes, row)) {
      out.report.Reject(*reason);
      continue;
    }
    rows.push_back(std::move(row));
  }
  if (out.report.rows_read > 0 && !any_price) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": no item has a numeric \"retailPrice\" (a changed schema?)"));
  }
  BuildAzureOffers(rows, shapes, file_name, out);
  SortById(out.offers);
  return out;
}

}  // namespace gpuadvisor::catalog
