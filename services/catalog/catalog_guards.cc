#include "services/catalog/catalog_guards.h"

#include <cmath>
#include <optional>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/io/text_proto.h"
#include "google/protobuf/text_format.h"
#include "services/catalog/located_text_proto.h"

namespace gpuadvisor::catalog {
namespace {

using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::TextFormat;
using ::gpuadvisor::catalog::v1::CatalogGuards;
using ::gpuadvisor::catalog::v1::CatalogSnapshot;
using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::catalog::v1::PriceRange;

bool FiniteNonNegative(double v) { return std::isfinite(v) && v >= 0; }

// "1.5 GiB", "2 KiB", "141 B": readable sizes for the messages.
std::string Bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return absl::StrFormat("%.4g %s", bytes, units[u]);
}

}  // namespace

absl::StatusOr<CatalogGuards> LoadCatalogGuards(const std::string& path,
                                                const GpuNameResolver& resolver) {
  CatalogGuards guards;
  if (path.empty()) return guards;
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  TextFormat::ParseInfoTree tree;
  if (absl::Status s = ParseWithLocations(*text, path, &guards, &tree); !s.ok()) return s;
  auto at = [&](const char* field, const std::string& problem) {
    const FieldDescriptor* fd = CatalogGuards::descriptor()->FindFieldByName(field);
    const TextFormat::ParseLocation where = tree.GetLocation(fd, -1);
    return absl::InvalidArgumentError(absl::StrCat(path, ":", std::max(where.line, 0) + 1, ":",
                                                   std::max(where.column, 0) + 1, ": ", field, ": ",
                                                   problem));
  };
  const std::pair<const char*, double> values[] = {
      {"max_shrink_fraction", guards.max_shrink_fraction()},
      {"min_gpu_memory_bytes", static_cast<double>(guards.min_gpu_memory_bytes())},
      {"max_gpu_memory_bytes", static_cast<double>(guards.max_gpu_memory_bytes())},
      {"min_ram_bytes", static_cast<double>(guards.min_ram_bytes())},
      {"max_ram_bytes", static_cast<double>(guards.max_ram_bytes())},
      {"warn_price_factor", guards.warn_price_factor()},
      {"reject_price_factor", guards.reject_price_factor()},
      {"min_usd_per_gpu_hour", guards.min_usd_per_gpu_hour()},
      {"max_usd_per_gpu_hour", guards.max_usd_per_gpu_hour()},
      {"warn_spot_discount", guards.warn_spot_discount()},
      {"reject_spot_discount", guards.reject_spot_discount()},
  };
  for (const auto& [field, value] : values) {
    if (!FiniteNonNegative(value))
      return at(field, absl::StrCat("must be finite and >= 0, got ", value));
  }
  for (const auto& [field, value] :
       {std::pair<const char*, double>{"max_shrink_fraction", guards.max_shrink_fraction()},
        {"warn_spot_discount", guards.warn_spot_discount()},
        {"reject_spot_discount", guards.reject_spot_discount()}}) {
    if (value > 1) return at(field, absl::StrCat("must be a fraction <= 1, got ", value));
  }
  for (const auto& [field, value] :
       {std::pair<const char*, double>{"warn_price_factor", guards.warn_price_factor()},
        {"reject_price_factor", guards.reject_price_factor()}}) {
    if (value != 0 && value < 1)
      return at(field, absl::StrCat("must be >= 1 (or 0: off), got ", value));
  }
  if (guards.max_gpu_memory_bytes() > 0 &&
      guards.min_gpu_memory_bytes() > guards.max_gpu_memory_bytes()) {
    return at("min_gpu_memory_bytes", "must be <= max_gpu_memory_bytes");
  }
  if (guards.max_ram_bytes() > 0 && guards.min_ram_bytes() > guards.max_ram_bytes()) {
    return at("min_ram_bytes", "must be <= max_ram_bytes");
  }
  const FieldDescriptor* list = CatalogGuards::descriptor()->FindFieldByName("price_ranges");
  for (int i = 0; i < guards.price_ranges_size(); ++i) {
    PriceRange& range = *guards.mutable_price_ranges(i);
    auto fail = [&](const std::string& field, const std::string& problem) {
      return Located(path, tree, list, i,
                     absl::InvalidArgumentError(absl::StrCat(field, ": ", problem)));
    };
    std::optional<std::string> canonical = resolver.Canonical(range.gpu_model());
    if (!canonical)
      return fail("gpu_model", absl::StrCat("unknown GPU \"", range.gpu_model(), "\""));
    range.set_gpu_model(*canonical);
    if (!FiniteNonNegative(range.low_usd_per_gpu_hour()) || range.low_usd_per_gpu_hour() <= 0) {
      return fail("low_usd_per_gpu_hour", "must be finite and > 0");
    }
    if (!std::isfinite(range.high_usd_per_gpu_hour()) ||
        range.high_usd_per_gpu_hour() < range.low_usd_per_gpu_hour()) {
      return fail("high_usd_per_gpu_hour", "must be finite and >= low_usd_per_gpu_hour");
    }
  }
  return guards;
}

namespace {

void CheckGpuMemory(const CatalogGuards& guards, const CatalogSnapshot& candidate,
                    const SnapshotOrigins& origins, GuardReport& report) {
  for (int i = 0; i < candidate.gpus_size(); ++i) {
    const v1::Gpu& gpu = candidate.gpus(i);
    const std::string where = absl::StrCat(
        static_cast<size_t>(i) < origins.gpus.size() && !origins.gpus[i].empty() ? origins.gpus[i]
                                                                                 : "gpus",
        ": gpus[", i, "] \"", gpu.name(), "\"");
    const double memory = static_cast<double>(gpu.memory_bytes());
    if ((guards.min_gpu_memory_bytes() > 0 && gpu.memory_bytes() < guards.min_gpu_memory_bytes()) ||
        (guards.max_gpu_memory_bytes() > 0 && gpu.memory_bytes() > guards.max_gpu_memory_bytes())) {
      report.errors.push_back(
          absl::StrCat(where, ": memory_bytes ", gpu.memory_bytes(), " (", Bytes(memory),
                       ") outside the physical range ",
                       Bytes(static_cast<double>(guards.min_gpu_memory_bytes())), " .. ",
                       Bytes(static_cast<double>(guards.max_gpu_memory_bytes()))));
    }
  }
}

// The findings about one offer, located: warnings ride on the offer too.
struct OfferFindings {
  Offer& offer;
  std::string where;
  GuardReport& report;
  // A kept outlier flags the price it is about (Offer.price_flags):
  // answers never rank the offer on it.
  void Warn(const std::string& message, v1::PurchaseOption option = v1::PURCHASE_OPTION_UNSPECIFIED,
            double price = 0) {
    offer.add_warnings(message);
    report.warnings.push_back(absl::StrCat(where, ": ", message));
    if (option == v1::PURCHASE_OPTION_UNSPECIFIED) return;
    v1::PriceFlag* flag = offer.add_price_flags();
    flag->set_purchase_option(option);
    flag->set_listed_usd_per_hour(price);
    flag->set_reason(message);
  }
  void Error(const std::string& message) {
    report.errors.push_back(absl::StrCat(where, ": ", message));
  }
};

void CheckRam(const CatalogGuards& guards, OfferFindings& f) {
  const Offer& offer = f.offer;
  if (offer.ram_bytes() > 0 &&
      ((guards.min_ram_bytes() > 0 && offer.ram_bytes() < guards.min_ram_bytes()) ||
       (guards.max_ram_bytes() > 0 && offer.ram_bytes() > guards.max_ram_bytes()))) {
    f.Error(absl::StrCat(
        "ram_bytes ", offer.ram_bytes(), " (", Bytes(static_cast<double>(offer.ram_bytes())),
        ") outside the physical range ", Bytes(static_cast<double>(guards.min_ram_bytes())), " .. ",
        Bytes(static_cast<double>(guards.max_ram_bytes()))));
  }
}

// One price per accelerator-hour against the GPU's sourced market range, or
// the physical bounds when the GPU has none.
void CheckPrice(const CatalogGuards& guards, const PriceRange* range, const char* field,
                double price, OfferFindings& f) {
  const Offer& offer = f.offer;
  const double per_gpu = price / std::max(1, offer.gpus_per_node());
  if (range != nullptr) {
    const double reject = guards.reject_price_factor();
    const double warn_f = guards.warn_price_factor();
    const std::string what = absl::StrFormat(
        "%s %.4g = $%.4g per %s-hour, sourced range $%.4g .. $%.4g", field, price, per_gpu,
        offer.gpu_model(), range->low_usd_per_gpu_hour(), range->high_usd_per_gpu_hour());
    if (reject > 0 && (per_gpu < range->low_usd_per_gpu_hour() / reject ||
                       per_gpu > range->high_usd_per_gpu_hour() * reject)) {
      f.Error(absl::StrCat(what, ": more than ", reject, "x outside the market range"));
    } else if (warn_f > 0 && (per_gpu < range->low_usd_per_gpu_hour() / warn_f ||
                              per_gpu > range->high_usd_per_gpu_hour() * warn_f)) {
      const std::string_view name(field);
      f.Warn(absl::StrCat(what, ": outside the market range, check the source"),
             name == "spot_usd_per_hour"       ? v1::PURCHASE_OPTION_SPOT
             : name == "reserved_usd_per_hour" ? v1::PURCHASE_OPTION_RESERVED
                                               : v1::PURCHASE_OPTION_ON_DEMAND,
             price);
    }
  } else if ((guards.min_usd_per_gpu_hour() > 0 && per_gpu < guards.min_usd_per_gpu_hour()) ||
             (guards.max_usd_per_gpu_hour() > 0 && per_gpu > guards.max_usd_per_gpu_hour())) {
    f.Error(absl::StrFormat("%s %.4g = $%.4g per accelerator-hour, outside $%.4g .. $%.4g", field,
                            price, per_gpu, guards.min_usd_per_gpu_hour(),
                            guards.max_usd_per_gpu_hour()));
  }
}

void CheckPrices(const CatalogGuards& guards, const PriceRange* range, OfferFindings& f) {
  const Offer& offer = f.offer;
  for (const auto& [field, price] :
       {std::pair<const char*, double>{"on_demand_usd_per_hour", offer.on_demand_usd_per_hour()},
        {"spot_usd_per_hour", offer.spot_usd_per_hour()},
        {"reserved_usd_per_hour", offer.reserved_usd_per_hour()}}) {
    if (price <= 0) continue;
    // Spot is judged against on-demand (the discount rule below) when the
    // offer has one: marketplace bids sit far below list prices.
    if (std::string_view(field) == "spot_usd_per_hour" && offer.on_demand_usd_per_hour() > 0) {
      continue;
    }
    CheckPrice(guards, range, field, price, f);
  }
}

void CheckSpotDiscount(const CatalogGuards& guards, OfferFindings& f) {
  const Offer& offer = f.offer;
  if (offer.spot_usd_per_hour() <= 0 || offer.on_demand_usd_per_hour() <= 0) return;
  const double discount = 1 - offer.spot_usd_per_hour() / offer.on_demand_usd_per_hour();
  const std::string text =
      absl::StrFormat("spot price %.0f%% below on-demand", std::round(discount * 100));
  if (guards.reject_spot_discount() > 0 && discount > guards.reject_spot_discount()) {
    f.Error(absl::StrCat(text, ": more than ", std::round(guards.reject_spot_discount() * 100),
                         "% off is not a market price"));
  } else if (guards.warn_spot_discount() > 0 && discount > guards.warn_spot_discount()) {
    f.Warn(absl::StrCat(text, ": likely stale"), v1::PURCHASE_OPTION_SPOT,
           offer.spot_usd_per_hour());
  } else if (discount < 0) {
    f.Warn(absl::StrFormat("spot price %.0f%% above on-demand: likely stale",
                           std::round(-discount * 100)),
           v1::PURCHASE_OPTION_SPOT, offer.spot_usd_per_hour());
  }
}

void CheckShrink(const CatalogGuards& guards, const CatalogSnapshot& candidate,
                 const CatalogSnapshot* current, GuardReport& report) {
  if (current == nullptr || guards.max_shrink_fraction() <= 0 || current->offers_size() == 0) {
    return;
  }
  const double floor = current->offers_size() * (1 - guards.max_shrink_fraction());
  if (candidate.offers_size() < floor) {
    report.errors.push_back(absl::StrFormat(
        "%s: the reload has %d offers where %d are serving: it drops %.0f%%, more than the "
        "%.0f%% a reload may drop (a file cut short?)",
        "catalog", candidate.offers_size(), current->offers_size(),
        100.0 * (1 - static_cast<double>(candidate.offers_size()) / current->offers_size()),
        100.0 * guards.max_shrink_fraction()));
  }
}

}  // namespace

GuardReport CheckCatalogGuards(const CatalogGuards& guards, CatalogSnapshot& candidate,
                               const SnapshotOrigins& origins, const CatalogSnapshot* current) {
  GuardReport report;
  CheckGpuMemory(guards, candidate, origins, report);
  absl::flat_hash_map<std::string, const PriceRange*> range_of;
  for (const PriceRange& range : guards.price_ranges()) range_of.emplace(range.gpu_model(), &range);
  for (int i = 0; i < candidate.offers_size(); ++i) {
    Offer& offer = *candidate.mutable_offers(i);
    const std::string origin =
        static_cast<size_t>(i) < origins.offers.size() && !origins.offers[i].empty()
            ? origins.offers[i]
            : offer.source();
    OfferFindings findings{offer, absl::StrCat(origin, ": offers[", i, "] \"", offer.id(), "\""),
                           report};
    CheckRam(guards, findings);
    auto it = range_of.find(offer.gpu_model());
    CheckPrices(guards, it == range_of.end() ? nullptr : it->second, findings);
    CheckSpotDiscount(guards, findings);
  }
  CheckShrink(guards, candidate, current, report);
  return report;
}

}  // namespace gpuadvisor::catalog
