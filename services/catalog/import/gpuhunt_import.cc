#include "services/catalog/import/gpuhunt_import.h"

#include <cmath>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "services/catalog/import/csv.h"
#include "services/catalog/import/gpu_match.h"
#include "services/catalog/import/spot_statistics.h"
#include "services/catalog/skypilot_import.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Offer;

std::optional<double> Number(absl::string_view cell) {
  cell = absl::StripAsciiWhitespace(cell);
  double v = 0;
  if (cell.empty() || !absl::SimpleAtod(cell, &v) || !std::isfinite(v) || v < 0) {
    return std::nullopt;
  }
  return v;
}

// "us-central1-a" -> "us-central1" for GCP zones; other locations unchanged.
std::string Region(const std::string& provider, absl::string_view location) {
  location = absl::StripAsciiWhitespace(location);
  if (provider == "gcp" && location.size() > 2 && location[location.size() - 2] == '-' &&
      absl::ascii_islower(static_cast<unsigned char>(location.back())) &&
      absl::ascii_isdigit(static_cast<unsigned char>(location[location.size() - 3]))) {
    location.remove_suffix(2);
  }
  return std::string(location);
}

// docs/catalog.md, "Host tier and reliability": gpuhunt lists Vast hosts
// without their hosting type (community), and RunPod Secure Cloud by
// datacenter id ("EU-RO-1"), Community Cloud by country code ("CA").
v1::HostTier HostTierOf(const std::string& provider, absl::string_view location) {
  if (provider == "vast") return v1::HOST_TIER_COMMUNITY;
  if (provider == "runpod") {
    return absl::StripAsciiWhitespace(location).size() == 2 ? v1::HOST_TIER_COMMUNITY
                                                            : v1::HOST_TIER_DATACENTER;
  }
  return v1::HOST_TIER_UNSPECIFIED;
}

}  // namespace

std::string ProviderFromGpuhunt(absl::string_view gpuhunt_provider) {
  const std::string p = absl::AsciiStrToLower(absl::StripAsciiWhitespace(gpuhunt_provider));
  if (p == "lambdalabs") return "lambda";
  if (p == "vastai") return "vast";
  return p;
}

namespace {

// One data row that passed the checks.
struct GpuhuntRow {
  std::string instance, gpu_name, model, region, location;
  double price = 0, count = 0, cpu = 0, memory = 0;
  std::optional<double> disk;
  bool spot = false;
  int line = 0;
};

// The row checks; the reason a row is rejected.
std::optional<std::string> ReadGpuhuntRow(const CsvHeader& header, const CsvRecord& record,
                                          const std::string& provider, const GpuNameResolver& gpus,
                                          GpuhuntRow& row) {
  if (record.fields.size() > header.size()) return "more cells than columns";
  auto cell = [&](const char* name) {
    return std::string(absl::StripAsciiWhitespace(header.Cell(record, name)));
  };
  row.instance = cell("instance_name");
  const std::string location = cell("location");
  if (row.instance.empty() || location.empty() || cell("price").empty()) {
    return "required cell empty";
  }
  const std::optional<double> price = Number(cell("price")), count = Number(cell("gpu_count")),
                              cpu = Number(cell("cpu")), memory = Number(cell("memory"));
  if (!price || !count || !cpu || !memory) return "not a number";
  if (*count == 0) return "no GPU";
  if (*count != std::floor(*count)) return "fractional GPU count";
  if (*price <= 0) return "no price";
  const std::string spot_cell = absl::AsciiStrToLower(cell("spot"));
  if (spot_cell != "true" && spot_cell != "false") return "spot not True/False";
  row.gpu_name = cell("gpu_name");
  if (absl::StartsWith(row.gpu_name, "tpu-")) row.gpu_name = row.gpu_name.substr(4);  // TPUs
  if (row.gpu_name.empty()) return "no GPU";
  const int64_t memory_per_gpu = static_cast<int64_t>(Number(cell("gpu_memory")).value_or(0) * 1e9);
  const std::optional<std::string> model =
      MatchGpu(gpus, row.gpu_name, memory_per_gpu, row.instance);
  if (!model) return absl::StrCat("unknown GPU \"", row.gpu_name, "\"");
  row.model = *model;
  row.region = Region(provider, location);
  row.location = location;
  row.price = *price, row.count = *count, row.cpu = *cpu, row.memory = *memory;
  row.disk = Number(cell("disk_size"));
  row.spot = spot_cell == "true";
  row.line = record.line;
  return std::nullopt;
}

// The offer of a row's (instance, region), from its first row.
Offer GpuhuntOffer(const GpuhuntRow& row, const std::string& id, const std::string& provider,
                   absl::string_view file_name, const GpuNameResolver& gpus) {
  Offer offer;
  const int gpus_per_node = static_cast<int>(row.count);
  offer.set_id(id);
  offer.set_provider(provider);
  offer.set_instance_type(row.instance);
  offer.set_region(row.region);
  offer.set_gpu_model(row.model);
  offer.set_gpus_per_node(gpus_per_node);
  offer.set_nodes(1);
  offer.set_max_nodes(1);
  offer.set_host_tier(HostTierOf(provider, row.location));
  offer.set_vcpus(static_cast<int32_t>(row.cpu));
  offer.set_ram_bytes(static_cast<int64_t>(row.memory * 1e9));
  if (row.disk) offer.set_local_disk_bytes(static_cast<int64_t>(*row.disk * 1e9));
  if (const GpuNameResolver::Facts* facts = gpus.FactsOf(row.model)) {
    SetIntraNodeLink(*facts, gpus_per_node, absl::StrCat(row.instance, " ", row.gpu_name), offer);
  }
  if (!row.spot) offer.set_on_demand_usd_per_hour(row.price);
  offer.set_source(absl::StrCat("gpuhunt:", file_name, ":", row.line));
  return offer;
}

// Spot over the zones of a region: the median, min and max kept. One row
// is one price (gpuhunt's AWS spot row is already its cheapest zone): kept
// as the price, zones not recorded.
void SetZoneSpots(std::vector<std::vector<double>>& zone_spots, std::vector<Offer>& offers) {
  for (size_t o = 0; o < offers.size(); ++o) {
    if (zone_spots[o].size() == 1) {
      offers[o].set_spot_usd_per_hour(zone_spots[o].front());
    } else if (zone_spots[o].size() > 1) {
      SetSpotStatistics(std::move(zone_spots[o]), offers[o]);
    }
  }
}

absl::Status CheckGpuhuntHeader(const std::vector<CsvRecord>& records,
                                absl::string_view file_name) {
  if (records.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ":1: empty file, no header"));
  }
  const CsvHeader header(records.front());
  for (const char* required :
       {"instance_name", "location", "price", "cpu", "memory", "gpu_count", "spot"}) {
    if (!header.Find(required)) {
      return absl::InvalidArgumentError(absl::StrCat(file_name, ":", records.front().line,
                                                     ": missing column \"", required, "\""));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ImportedOffers> ImportGpuhuntCsv(absl::string_view csv,
                                                absl::string_view provider_name,
                                                absl::string_view file_name,
                                                const GpuNameResolver& gpus) {
  absl::StatusOr<std::vector<CsvRecord>> records = ParseCsv(csv, file_name);
  if (!records.ok()) return records.status();
  if (absl::Status s = CheckGpuhuntHeader(*records, file_name); !s.ok()) return s;
  const CsvHeader header(records->front());
  const std::string provider = ProviderFromGpuhunt(provider_name);
  ImportedOffers out;
  out.report.format = "gpuhunt";
  out.report.file = std::string(file_name);
  absl::flat_hash_map<std::string, size_t> index;
  std::vector<std::vector<double>> zone_spots;  // per out.offers index
  index.reserve(records->size());
  out.offers.reserve(records->size());
  zone_spots.reserve(records->size());
  for (size_t r = 1; r < records->size(); ++r) {
    ++out.report.rows_read;
    GpuhuntRow row;
    if (std::optional<std::string> reason =
            ReadGpuhuntRow(header, (*records)[r], provider, gpus, row)) {
      out.report.Reject(*reason);
      continue;
    }
    const std::string id = absl::StrCat(provider, "/", row.instance, "/", row.region);
    auto [it, inserted] = index.emplace(id, out.offers.size());
    ++out.report.rows_kept;
    if (inserted) {
      zone_spots.emplace_back();
      out.offers.push_back(GpuhuntOffer(row, id, provider, file_name, gpus));
    } else if (!row.spot) {
      // Another zone of the same region: the on-demand price is the region's
      // (the lowest should zones differ); spot a statistic over the zones.
      Offer& offer = out.offers[it->second];
      const double od = offer.on_demand_usd_per_hour();
      offer.set_on_demand_usd_per_hour(od <= 0 ? row.price : std::min(od, row.price));
    }
    if (row.spot) zone_spots[it->second].push_back(row.price);
  }
  SetZoneSpots(zone_spots, out.offers);
  SortById(out.offers);
  return out;
}

}  // namespace gpuadvisor::catalog
