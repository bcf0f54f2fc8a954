#include "services/catalog/import/vast_import.h"

#include <cmath>
#include <optional>
#include <utility>
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

absl::StatusOr<ImportedOffers> ImportVastOffers(absl::string_view json_text,
                                                absl::string_view file_name,
                                                const GpuNameResolver& gpus,
                                                const VastImportOptions& options) {
  absl::StatusOr<json::Value> root = json::Parse(json_text, file_name);
  if (!root.ok()) return root.status();
  const json::Value* list = &*root;
  if (const json::Value* offers = json::Get(*root, "offers")) list = offers;
  if (list->kind_case() != json::Value::kListValue) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": expected a list of offers or {\"offers\": [...]}"));
  }

  ImportedOffers out;
  out.report.format = "vast";
  out.report.file = std::string(file_name);
  // (machine, gpus) -> index into out.offers, for the duplicate slices.
  absl::flat_hash_map<std::string, size_t> slice_index;
  for (const json::Value& o : list->list_value().values()) {
    ++out.report.rows_read;
    if (o.kind_case() != json::Value::kStructValue) {
      out.report.Reject("not an object");
      continue;
    }
    if (json::Bool(o, "rentable") == false) {
      out.report.Reject("not rentable");
      continue;
    }
    if (json::Bool(o, "rented") == true) {
      out.report.Reject("already rented");
      continue;
    }
    const std::string verification = json::String(o, "verification");
    if (verification == "deverified" && !options.keep_deverified) {
      out.report.Reject("deverified host");
      continue;
    }
    const std::optional<double> num_gpus = json::Number(o, "num_gpus");
    const std::optional<double> machine = json::Number(o, "machine_id");
    const std::optional<double> base = json::Number(o, "dph_base");
    const std::string gpu_name(absl::StripAsciiWhitespace(json::String(o, "gpu_name")));
    if (!num_gpus || !machine || gpu_name.empty()) {
      out.report.Reject("missing gpu_name, num_gpus or machine_id");
      continue;
    }
    if (*num_gpus < 1 || *num_gpus != std::floor(*num_gpus)) {
      out.report.Reject("fractional GPU count");
      continue;
    }
    if (!base || *base <= 0) {
      out.report.Reject("no price");
      continue;
    }
    const int64_t memory_per_gpu =
        static_cast<int64_t>(json::Number(o, "gpu_ram").value_or(0) * kMiB);
    const std::optional<std::string> matched = MatchGpu(gpus, gpu_name, memory_per_gpu);
    if (!matched) {
      out.report.Reject(absl::StrCat("unknown GPU \"", gpu_name, "\""));
      continue;
    }
    const std::string& model = *matched;
    const int count = static_cast<int>(*num_gpus);

    const std::string machine_key = absl::StrFormat("%.0f|%d", *machine, count);
    auto [it, inserted] = slice_index.emplace(machine_key, out.offers.size());
    if (!inserted) {
      out.report.Reject("duplicate slice of machine");
      Offer& kept = out.offers[it->second];
      if (*base >= kept.on_demand_usd_per_hour()) continue;
      // The cheaper listing of the same slice replaces the kept one; the
      // replaced one is the rejected duplicate.
      out.offers[it->second] = Offer();
    }
    Offer& offer = inserted ? out.offers.emplace_back() : out.offers[it->second];
    const std::string region = NormalizeRegion(json::String(o, "geolocation"), options.continents);
    const std::string instance_type = absl::StrFormat(
        "%dx-%s-m%.0f", count, absl::StrReplaceAll(gpu_name, {{" ", "_"}}), *machine);
    offer.set_id(absl::StrCat("vast/", instance_type, "/", region));
    offer.set_provider("vast");
    offer.set_instance_type(instance_type);
    offer.set_region(region);
    offer.set_gpu_model(model);
    offer.set_gpus_per_node(count);
    offer.set_nodes(1);
    offer.set_max_nodes(1);
    offer.set_fabric(v1::FABRIC_TYPE_NONE);
    offer.set_vcpus(static_cast<int32_t>(json::Number(o, "cpu_cores_effective").value_or(0)));
    offer.set_ram_bytes(static_cast<int64_t>(json::Number(o, "cpu_ram").value_or(0) * 1e6));
    offer.set_local_disk_bytes(
        static_cast<int64_t>(json::Number(o, "disk_space").value_or(0) * 1e9));
    if (const GpuNameResolver::Facts* facts = gpus.FactsOf(model)) {
      SetIntraNodeLink(*facts, count, gpu_name, offer);
    }
    offer.set_availability(v1::AVAILABILITY_LIMITED);
    offer.set_on_demand_usd_per_hour(*base);
    const double min_bid = json::Number(o, "min_bid").value_or(0);
    // A floor within 0.1% of the price (11.2 vs 11.200000000000001) is no discount.
    offer.set_spot_usd_per_hour(min_bid > 0 && min_bid < *base * 0.999 ? min_bid : 0);
    offer.set_source(absl::StrFormat(
        "vast:%s: offer %.0f, %s host; storage $%.3f/GB-month not included", file_name,
        json::Number(o, "id").value_or(0), verification.empty() ? "unknown" : verification,
        json::Number(o, "storage_cost").value_or(0)));
  }
  out.report.rows_kept = static_cast<int>(out.offers.size());
  SortById(out.offers);
  return out;
}

}  // namespace gpuadvisor::catalog
