#include "services/catalog/import/vast_import.h"

#include <cmath>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "services/catalog/import/csv.h"
#include "services/catalog/import/gpu_match.h"
#include "services/catalog/import/json.h"
#include "services/catalog/skypilot_import.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Offer;

constexpr double kMiB = 1024.0 * 1024.0;

// "Texas, US" -> "Texas, US, NA"; ", US" (no city) -> "US, NA".
std::string NormalizeRegion(const std::string& geolocation, const ContinentTable& continents) {
  const std::string place = CleanRegion(geolocation);
  const size_t comma = place.rfind(',');
  const std::string country(
      absl::StripAsciiWhitespace(comma == std::string::npos ? place : place.substr(comma + 1)));
  auto it = continents.find(absl::AsciiStrToUpper(country));
  if (it == continents.end()) return place;
  return absl::StrCat(place, ", ", it->second);
}

// hosting_type >= 1 is a datacenter host (what Vast's `datacenter=true`
// search selects); reliability is kept when it is a 0-1 figure
// (docs/catalog.md, "Host tier and reliability").
void SetHost(const json::Value& o, Offer& offer) {
  offer.set_host_tier(json::Number(o, "hosting_type").value_or(0) >= 1 ? v1::HOST_TIER_DATACENTER
                                                                       : v1::HOST_TIER_COMMUNITY);
  const std::optional<double> reliability = json::Number(o, "reliability");
  if (reliability && *reliability >= 0 && *reliability <= 1) {
    offer.set_host_reliability(*reliability);
  }
}

}  // namespace

absl::StatusOr<ContinentTable> ParseContinentTable(absl::string_view text,
                                                   absl::string_view file_name) {
  absl::StatusOr<std::vector<CsvRecord>> records = ParseCsv(BlankCommentLines(text), file_name);
  if (!records.ok()) return records.status();
  if (records->empty()) return absl::InvalidArgumentError(absl::StrCat(file_name, ": empty"));
  const CsvHeader header(records->front());
  if (!header.Find("continent") || !header.Find("countries")) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ":", records->front().line,
                                                   ": header must be continent,countries"));
  }
  ContinentTable table;
  for (size_t r = 1; r < records->size(); ++r) {
    const CsvRecord& record = (*records)[r];
    const std::string continent(absl::StripAsciiWhitespace(header.Cell(record, "continent")));
    if (continent.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_name, ":", record.line, ": continent: empty"));
    }
    for (absl::string_view country :
         absl::StrSplit(header.Cell(record, "countries"), ' ', absl::SkipEmpty())) {
      if (!table.emplace(absl::AsciiStrToUpper(country), continent).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(file_name, ":", record.line, ": countries: ", country, " listed twice"));
      }
    }
  }
  return table;
}

namespace {

// One listing that passed the row checks.
struct VastRow {
  const json::Value* json = nullptr;
  std::string gpu_name;
  std::string model;  // canonical
  int count = 0;
  double machine = 0;
  double base = 0;  // dph_base
  std::string verification;
};

// The listing's fields, or the reason it is rejected.
std::variant<VastRow, std::string> ReadVastRow(const json::Value& o, const GpuNameResolver& gpus,
                                               const VastImportOptions& options) {
  if (o.kind_case() != json::Value::kStructValue) return std::string("not an object");
  if (json::Bool(o, "rentable") == false) return std::string("not rentable");
  if (json::Bool(o, "rented") == true) return std::string("already rented");
  VastRow row;
  row.json = &o;
  row.verification = json::String(o, "verification");
  if (row.verification == "deverified" && !options.keep_deverified) {
    return std::string("deverified host");
  }
  const std::optional<double> num_gpus = json::Number(o, "num_gpus");
  const std::optional<double> machine = json::Number(o, "machine_id");
  const std::optional<double> base = json::Number(o, "dph_base");
  row.gpu_name = std::string(absl::StripAsciiWhitespace(json::String(o, "gpu_name")));
  if (!num_gpus || !machine || row.gpu_name.empty()) {
    return std::string("missing gpu_name, num_gpus or machine_id");
  }
  if (*num_gpus < 1 || *num_gpus != std::floor(*num_gpus)) {
    return std::string("fractional GPU count");
  }
  if (!base || *base <= 0) return std::string("no price");
  const int64_t memory_per_gpu =
      static_cast<int64_t>(json::Number(o, "gpu_ram").value_or(0) * kMiB);
  const std::optional<std::string> matched = MatchGpu(gpus, row.gpu_name, memory_per_gpu);
  if (!matched) return absl::StrCat("unknown GPU \"", row.gpu_name, "\"");
  row.model = *matched;
  row.count = static_cast<int>(*num_gpus);
  row.machine = *machine;
  row.base = *base;
  return row;
}

// The offer of one slice (machine, GPU count) from its cheapest listing.
void FillVastOffer(const VastRow& row, absl::string_view file_name, const GpuNameResolver& gpus,
                   const VastImportOptions& options, Offer& offer) {
  const json::Value& o = *row.json;
  const std::string region = NormalizeRegion(json::String(o, "geolocation"), options.continents);
  const std::string instance_type = absl::StrFormat(
      "%dx-%s-m%.0f", row.count, absl::StrReplaceAll(row.gpu_name, {{" ", "_"}}), row.machine);
  offer.set_id(absl::StrCat("vast/", instance_type, "/", region));
  offer.set_provider("vast");
  offer.set_instance_type(instance_type);
  offer.set_region(region);
  offer.set_gpu_model(row.model);
  offer.set_gpus_per_node(row.count);
  offer.set_nodes(1);
  offer.set_max_nodes(1);
  offer.set_fabric(v1::FABRIC_TYPE_NONE);
  offer.set_vcpus(static_cast<int32_t>(json::Number(o, "cpu_cores_effective").value_or(0)));
  offer.set_ram_bytes(static_cast<int64_t>(json::Number(o, "cpu_ram").value_or(0) * 1e6));
  offer.set_local_disk_bytes(static_cast<int64_t>(json::Number(o, "disk_space").value_or(0) * 1e9));
  if (const GpuNameResolver::Facts* facts = gpus.FactsOf(row.model)) {
    SetIntraNodeLink(*facts, row.count, row.gpu_name, offer);
  }
  offer.set_availability(v1::AVAILABILITY_LIMITED);
  SetHost(o, offer);
  offer.set_on_demand_usd_per_hour(row.base);
  const double min_bid = json::Number(o, "min_bid").value_or(0);
  // A floor within 0.1% of the price (11.2 vs 11.200000000000001) is no discount.
  offer.set_spot_usd_per_hour(min_bid > 0 && min_bid < row.base * 0.999 ? min_bid : 0);
  offer.set_source(absl::StrFormat(
      "vast:%s: offer %.0f, %s host; storage $%.3f/GB-month not included", file_name,
      json::Number(o, "id").value_or(0), row.verification.empty() ? "unknown" : row.verification,
      json::Number(o, "storage_cost").value_or(0)));
}

// The list of listings: the document itself or its "offers".
absl::StatusOr<const json::Value*> VastList(const json::Value& root, absl::string_view file_name) {
  const json::Value* list = &root;
  if (const json::Value* offers = json::Get(root, "offers")) list = offers;
  if (list->kind_case() != json::Value::kListValue) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": expected a list of offers or {\"offers\": [...]}"));
  }
  return list;
}

}  // namespace

absl::StatusOr<ImportedOffers> ImportVastOffers(absl::string_view json_text,
                                                absl::string_view file_name,
                                                const GpuNameResolver& gpus,
                                                const VastImportOptions& options) {
  absl::StatusOr<json::Value> root = json::Parse(json_text, file_name);
  if (!root.ok()) return root.status();
  absl::StatusOr<const json::Value*> list = VastList(*root, file_name);
  if (!list.ok()) return list.status();

  ImportedOffers out;
  out.report.format = "vast";
  out.report.file = std::string(file_name);
  // (machine, gpus) -> index into out.offers, for the duplicate slices.
  absl::flat_hash_map<std::string, size_t> slice_index;
  for (const json::Value& o : (*list)->list_value().values()) {
    ++out.report.rows_read;
    std::variant<VastRow, std::string> read = ReadVastRow(o, gpus, options);
    if (const std::string* reason = std::get_if<std::string>(&read)) {
      out.report.Reject(*reason);
      continue;
    }
    const VastRow& row = std::get<VastRow>(read);
    const std::string machine_key = absl::StrFormat("%.0f|%d", row.machine, row.count);
    auto [it, inserted] = slice_index.emplace(machine_key, out.offers.size());
    if (!inserted) {
      out.report.Reject("duplicate slice of machine");
      Offer& kept = out.offers[it->second];
      if (row.base >= kept.on_demand_usd_per_hour()) continue;
      // The cheaper listing of the same slice replaces the kept one; the
      // replaced one is the rejected duplicate.
      out.offers[it->second] = Offer();
    }
    Offer& offer = inserted ? out.offers.emplace_back() : out.offers[it->second];
    FillVastOffer(row, file_name, gpus, options, offer);
  }
  out.report.rows_kept = static_cast<int>(out.offers.size());
  SortById(out.offers);
  return out;
}

}  // namespace gpuadvisor::catalog
