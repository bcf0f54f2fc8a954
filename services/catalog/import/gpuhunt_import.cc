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

absl::StatusOr<ImportedOffers> ImportGpuhuntCsv(absl::string_view csv,
                                                absl::string_view provider_name,
                                                absl::string_view file_name,
                                                const GpuNameResolver& gpus) {
  absl::StatusOr<std::vector<CsvRecord>> records = ParseCsv(csv, file_name);
  if (!records.ok()) return records.status();
  if (records->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ":1: empty file, no header"));
  }
  const CsvHeader header(records->front());
  for (const char* required :
       {"instance_name", "location", "price", "cpu", "memory", "gpu_count", "spot"}) {
    if (!header.Find(required)) {
      return absl::InvalidArgumentError(absl::StrCat(file_name, ":", records->front().line,
                                                     ": missing column \"", required, "\""));
    }
  }
  const std::string provider = ProviderFromGpuhunt(provider_name);
  ImportedOffers out;
  out.report.format = "gpuhunt";
  out.report.file = std::string(file_name);
  absl::flat_hash_map<std::string, size_t> index;
  std::vector<std::vector<double>> zone_spots;  // per out.offers index
  for (size_t r = 1; r < records->size(); ++r) {
    const CsvRecord& row = (*records)[r];
    ++out.report.rows_read;
    if (row.fields.size() > header.size()) {
      out.report.Reject("more cells than columns");
      continue;
    }
    auto cell = [&](const char* name) {
      return std::string(absl::StripAsciiWhitespace(header.Cell(row, name)));
    };
    const std::string instance = cell("instance_name"), location = cell("location");
    if (instance.empty() || location.empty() || cell("price").empty()) {
      out.report.Reject("required cell empty");
      continue;
    }
    const std::optional<double> price = Number(cell("price"));
    const std::optional<double> count = Number(cell("gpu_count"));
    const std::optional<double> cpu = Number(cell("cpu"));
    const std::optional<double> memory = Number(cell("memory"));
    if (!price || !count || !cpu || !memory) {
      out.report.Reject("not a number");
      continue;
    }
    if (*count == 0) {
      out.report.Reject("no GPU");
      continue;
    }
    if (*count != std::floor(*count)) {
      out.report.Reject("fractional GPU count");
      continue;
    }
    if (*price <= 0) {
      out.report.Reject("no price");
      continue;
    }
    const std::string spot_cell = absl::AsciiStrToLower(cell("spot"));
    if (spot_cell != "true" && spot_cell != "false") {
      out.report.Reject("spot not True/False");
      continue;
    }
    const bool spot = spot_cell == "true";
    std::string gpu_name = cell("gpu_name");
    if (absl::StartsWith(gpu_name, "tpu-")) gpu_name = gpu_name.substr(4);  // historical TPUs
    if (gpu_name.empty()) {
      out.report.Reject("no GPU");
      continue;
    }
    const int64_t memory_per_gpu =
        static_cast<int64_t>(Number(cell("gpu_memory")).value_or(0) * 1e9);
    const std::optional<std::string> model = MatchGpu(gpus, gpu_name, memory_per_gpu, instance);
    if (!model) {
      out.report.Reject(absl::StrCat("unknown GPU \"", gpu_name, "\""));
      continue;
    }
    const std::string region = Region(provider, location);
    const std::string id = absl::StrCat(provider, "/", instance, "/", region);
    auto [it, inserted] = index.emplace(id, out.offers.size());
    ++out.report.rows_kept;
    auto lowest = [](double a, double b) { return a <= 0 ? b : std::min(a, b); };
    if (inserted) zone_spots.emplace_back();
    if (spot) zone_spots[it->second].push_back(*price);
    if (!inserted) {
      // The other purchase option, or another zone of the same region: the
      // on-demand price is the region's (the lowest should zones differ),
      // spot a statistic over the zones (below).
      Offer& offer = out.offers[it->second];
      if (spot) {
        // Set below.
      } else {
        offer.set_on_demand_usd_per_hour(lowest(offer.on_demand_usd_per_hour(), *price));
      }
      continue;
    }
    Offer& offer = out.offers.emplace_back();
    const int gpus_per_node = static_cast<int>(*count);
    offer.set_id(id);
    offer.set_provider(provider);
    offer.set_instance_type(instance);
    offer.set_region(region);
    offer.set_gpu_model(*model);
    offer.set_gpus_per_node(gpus_per_node);
    offer.set_nodes(1);
    offer.set_max_nodes(1);
    offer.set_host_tier(HostTierOf(provider, location));
    offer.set_vcpus(static_cast<int32_t>(*cpu));
    offer.set_ram_bytes(static_cast<int64_t>(*memory * 1e9));
    if (const std::optional<double> disk = Number(cell("disk_size"))) {
      offer.set_local_disk_bytes(static_cast<int64_t>(*disk * 1e9));
    }
    if (const GpuNameResolver::Facts* facts = gpus.FactsOf(*model)) {
      SetIntraNodeLink(*facts, gpus_per_node, absl::StrCat(instance, " ", gpu_name), offer);
    }
    if (!spot) offer.set_on_demand_usd_per_hour(*price);
    offer.set_source(absl::StrCat("gpuhunt:", file_name, ":", row.line));
  }
  // Spot over the zones of a region: the median, min and max kept. One row
  // is one price (gpuhunt's AWS spot row is already its cheapest zone): kept
  // as the price, zones not recorded.
  for (size_t o = 0; o < out.offers.size(); ++o) {
    if (zone_spots[o].size() == 1) {
      out.offers[o].set_spot_usd_per_hour(zone_spots[o].front());
    } else if (zone_spots[o].size() > 1) {
      SetSpotStatistics(std::move(zone_spots[o]), out.offers[o]);
    }
  }
  SortById(out.offers);
  return out;
}

}  // namespace gpuadvisor::catalog
