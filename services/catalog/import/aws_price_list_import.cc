#include "services/catalog/import/aws_price_list_import.h"

#include <map>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "services/catalog/import/json.h"
#include "services/catalog/import/offer_shape.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Offer;

// The hourly on-demand price of `sku`: the first price dimension of its
// first on-demand term. Sets `currency` to the price's currency key.
std::optional<double> OnDemandPrice(const json::Value& root, const std::string& sku,
                                    std::string* currency, std::string* unit) {
  const json::Value* terms = json::Path(root, {"terms", "OnDemand", sku});
  if (terms == nullptr || terms->kind_case() != json::Value::kStructValue) return std::nullopt;
  for (const auto& [code, term] : terms->struct_value().fields()) {
    const json::Value* dimensions = json::Get(term, "priceDimensions");
    if (dimensions == nullptr || dimensions->kind_case() != json::Value::kStructValue) continue;
    for (const auto& [rate, dimension] : dimensions->struct_value().fields()) {
      *unit = json::String(dimension, "unit");
      const json::Value* per_unit = json::Get(dimension, "pricePerUnit");
      if (per_unit == nullptr || per_unit->kind_case() != json::Value::kStructValue) continue;
      for (const auto& [key, value] : per_unit->struct_value().fields()) {
        *currency = key;
        return json::AsNumber(&value);
      }
    }
  }
  return std::nullopt;
}

// "1152 GiB" -> bytes; 0 when not understood.
int64_t MemoryBytes(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ' ', absl::SkipEmpty());
  double value = 0;
  if (parts.empty() || !absl::SimpleAtod(absl::StrReplaceAll(parts[0], {{",", ""}}), &value)) {
    return 0;
  }
  const double unit = parts.size() > 1 && parts[1] == "GB" ? 1e9 : 1024.0 * 1024.0 * 1024.0;
  return static_cast<int64_t>(value * unit);
}

// One product that passed the row checks.
struct AwsRow {
  const json::Value* attributes = nullptr;
  const Offer* shape = nullptr;  // the known offer of the instance type
  std::string type;
  std::string region;
  double price = 0;
};

// The attribute filters of a Linux, shared, on-demand product; the reason
// of the first one that fails.
std::optional<std::string> FilterAttributes(const json::Value& a) {
  struct Filter {
    const char* key;
    const char* want;
  };
  for (const Filter& f : {Filter{"operatingSystem", "Linux"}, Filter{"tenancy", "Shared"},
                          Filter{"capacitystatus", "Used"}, Filter{"preInstalledSw", "NA"},
                          Filter{"marketoption", "OnDemand"}}) {
    const std::string value = json::String(a, f.key);
    if (value != f.want && !(value.empty() && std::string(f.key) == "marketoption")) {
      return absl::StrCat(f.key, " ", value.empty() ? "(missing)" : value);
    }
  }
  return std::nullopt;
}

// The row checks of one product; the reason it is rejected.
std::optional<std::string> ReadAwsProduct(
    const json::Value& root, const std::string& sku, const json::Value& product,
    const absl::flat_hash_map<std::string, const Offer*>& shapes, AwsRow& row) {
  const std::string family = json::String(product, "productFamily");
  if (family != "Compute Instance") return absl::StrCat("not an instance (", family, ")");
  row.attributes = json::Get(product, "attributes");
  if (row.attributes == nullptr) return "no attributes";
  if (std::optional<std::string> reason = FilterAttributes(*row.attributes)) return reason;
  row.type = json::String(*row.attributes, "instanceType");
  row.region = json::String(*row.attributes, "regionCode");
  std::string currency, unit;
  const std::optional<double> price = OnDemandPrice(root, sku, &currency, &unit);
  if (!price) return "no on-demand term";
  if (currency != "USD") return absl::StrCat("currency ", currency);
  if (unit != "Hrs") return absl::StrCat("unit ", unit);
  if (*price <= 0) return "zero price";
  if (json::Number(*row.attributes, "gpu").value_or(0) <= 0) return "no GPU";
  auto shape = shapes.find(row.type);
  if (shape == shapes.end()) return "instance type not in the catalog (GPU model unknown)";
  if (row.region.empty()) return "no regionCode";
  row.shape = shape->second;
  row.price = *price;
  return std::nullopt;
}

Offer AwsOffer(const AwsRow& row, const std::string& sku, absl::string_view file_name,
               const std::string& version, const std::string& published) {
  Offer offer = MachineShapeOf(*row.shape);  // prices, terms and dates: the price list's
  offer.set_as_of(published);
  offer.set_id(absl::StrCat("aws/", row.type, "/", row.region));
  offer.set_region(row.region);
  if (const std::optional<double> vcpus = json::Number(*row.attributes, "vcpu")) {
    offer.set_vcpus(static_cast<int32_t>(*vcpus));
  }
  if (const int64_t ram = MemoryBytes(json::String(*row.attributes, "memory")); ram > 0) {
    offer.set_ram_bytes(ram);
  }
  offer.set_on_demand_usd_per_hour(row.price);  // no spot price in the offer file
  offer.set_source(absl::StrCat("aws-price-list:", file_name, ": sku ", sku, ", offer version ",
                                version, " (", published, ")"));
  return offer;
}

}  // namespace

absl::StatusOr<ImportedOffers> ImportAwsPriceList(
    absl::string_view json_text, absl::string_view file_name,
    const google::protobuf::RepeatedPtrField<Offer>& known_offers) {
  absl::StatusOr<json::Value> root = json::Parse(json_text, file_name);
  if (!root.ok()) return root.status();
  const json::Value* products = json::Get(*root, "products");
  if (products == nullptr || products->kind_case() != json::Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": no \"products\" object"));
  }
  absl::flat_hash_map<std::string, const Offer*> shape_by_type;
  for (const Offer& o : known_offers) {
    if (o.provider() == "aws") shape_by_type.emplace(o.instance_type(), &o);
  }
  const std::string version = json::String(*root, "version");
  const std::string published = json::String(*root, "publicationDate").substr(0, 10);

  ImportedOffers out;
  out.report.format = "aws-price-list";
  out.has_spot_prices = false;
  out.report.file = std::string(file_name);
  // Sorted for a stable order (the products object is a map).
  std::map<std::string, const json::Value*> sorted;
  for (const auto& [sku, product] : products->struct_value().fields()) sorted[sku] = &product;
  absl::flat_hash_map<std::string, size_t> index;
  for (const auto& [sku, product] : sorted) {
    ++out.report.rows_read;
    AwsRow row;
    if (std::optional<std::string> reason =
            ReadAwsProduct(*root, sku, *product, shape_by_type, row)) {
      out.report.Reject(*reason);
      continue;
    }
    Offer offer = AwsOffer(row, sku, file_name, version, published);
    if (!index.emplace(offer.id(), out.offers.size()).second) {
      out.report.Reject("duplicate product for the same instance and region");
      continue;
    }
    out.offers.push_back(std::move(offer));
    ++out.report.rows_kept;
  }
  SortById(out.offers);
  return out;
}

}  // namespace gpuadvisor::catalog
