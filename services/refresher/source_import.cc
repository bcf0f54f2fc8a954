#include "services/refresher/source_import.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "services/catalog/import/price_import.h"
#include "services/catalog/provenance.h"
#include "services/catalog/skypilot_import.h"
#include "services/refresher/zip_archive.h"

namespace gpuadvisor::refresher {
namespace {

using ::gpuadvisor::catalog::v1::Offer;

void Add(const catalog::ImportReport& report, SourceRows& rows) {
  rows.read += report.rows_read;
  rows.kept += report.rows_kept;
  for (const auto& [reason, n] : report.rejected_by_reason) rows.rejected[reason] += n;
}

// Appends `offers` to `to`: the first body's vector is taken whole, later
// ones are moved into room reserved once (no regrowth of 100,000 offers).
void Append(std::vector<Offer>& offers, std::vector<Offer>& to) {
  if (to.empty()) {
    to.swap(offers);
    return;
  }
  to.reserve(to.size() + offers.size());
  for (Offer& o : offers) to.push_back(std::move(o));
}

absl::StatusOr<ImportedCopy> ImportSkyPilot(const RefreshSource& source,
                                            const std::vector<std::string>& bodies,
                                            const ImportContext& context,
                                            const catalog::ImportAsOf& as_of) {
  ImportedCopy copy;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const std::string name = absl::StrCat(source.name(), "[", i, "]");
    absl::StatusOr<catalog::SkyPilotImport> imported = catalog::ImportSkyPilotCsv(
        bodies[i], source.provider(), name, *context.gpus, nullptr, as_of);
    if (!imported.ok()) return imported.status();
    Add(imported->Report(source.provider(), name), copy.rows);
    Append(imported->offers, copy.offers);
  }
  return copy;
}

// Formats whose pages are one import: the items of every page together.
bool PagedFormat(const std::string& format) {
  return format == "gcp-billing" || format == "azure-retail" || format == "oci-price-list";
}

// A format without spot prices (AWS, OCI lists) must not clear the spot
// price the catalog has: the published offer carries the known one, with
// its own source and date (not the refresh's: it was not fetched).
void KeepKnownSpot(const ImportContext& context, std::vector<Offer>& offers) {
  if (context.known_offers == nullptr) return;
  absl::flat_hash_map<std::string, const Offer*> known;
  for (const Offer& o : *context.known_offers) known.emplace(o.id(), &o);
  for (Offer& o : offers) {
    auto it = known.find(o.id());
    if (it == known.end() || it->second->spot_usd_per_hour() <= 0) continue;
    const Offer& k = *it->second;
    o.set_spot_usd_per_hour(k.spot_usd_per_hour());
    o.set_spot_min_usd_per_hour(k.spot_min_usd_per_hour());
    o.set_spot_max_usd_per_hour(k.spot_max_usd_per_hour());
    o.set_spot_zones(k.spot_zones());
    const bool own = catalog::HasOwnSpotDate(k);
    o.set_spot_as_of(own ? k.spot_as_of() : k.as_of());
    o.set_spot_price_source(catalog::SpotPriceSource(k));
    o.set_spot_priced_at_unix_seconds(own ? k.spot_priced_at_unix_seconds()
                                          : k.priced_at_unix_seconds());
  }
}

// One body through the catalog's price importers, named "<source>[<i>]"
// in errors and in each offer's source.
absl::Status ImportFile(const RefreshSource& source, const std::string& format,
                        const std::string& provider, const std::string& body, size_t i,
                        const ImportContext& context, const catalog::ImportAsOf& as_of,
                        ImportedCopy& copy) {
  catalog::PriceImportContext price_context{context.gpus, context.continents_path,
                                            context.gcp_families_path, context.known_offers};
  catalog::PriceImportSource import{format, absl::StrCat(source.name(), "[", i, "]"), provider,
                                    as_of};
  absl::StatusOr<catalog::ImportedOffers> imported =
      catalog::ImportPriceText(import, body, price_context);
  if (!imported.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source.name(), " body ", i, ": ", imported.status().message()));
  }
  Add(imported->report, copy.rows);
  if (!imported->has_spot_prices) KeepKnownSpot(context, imported->offers);
  Append(imported->offers, copy.offers);
  return absl::OkStatus();
}

absl::StatusOr<ImportedCopy> ImportFiles(const RefreshSource& source,
                                         const std::vector<std::string>& bodies,
                                         const ImportContext& context,
                                         const catalog::ImportAsOf& as_of) {
  ImportedCopy copy;
  std::vector<std::string> files = bodies;
  if (PagedFormat(source.format()) && bodies.size() > 1) {
    files = {absl::StrCat("[", absl::StrJoin(bodies, ","), "]")};
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (absl::Status s = ImportFile(source, source.format(), source.provider(), files[i], i,
                                    context, as_of, copy);
        !s.ok()) {
      return s;
    }
  }
  return copy;
}

// gpuhunt's published catalog.zip: every <provider>.csv member (or only
// `provider`'s when set) through the gpuhunt importer; the member's base
// name is the provider.
absl::StatusOr<ImportedCopy> ImportGpuhuntZips(const RefreshSource& source,
                                               const std::vector<std::string>& bodies,
                                               const ImportContext& context,
                                               const catalog::ImportAsOf& as_of) {
  ImportedCopy copy;
  const int64_t limit = source.max_bytes() > 0 ? source.max_bytes() * 8 : (512ll << 20);
  size_t file = 0;
  for (size_t i = 0; i < bodies.size(); ++i) {
    absl::StatusOr<std::vector<ZipMember>> members =
        ReadZip(bodies[i], absl::StrCat(source.name(), " body ", i), limit);
    if (!members.ok()) return members.status();
    for (const ZipMember& m : *members) {
      std::string provider = std::filesystem::path(m.name).stem().string();
      if (!absl::EndsWith(m.name, ".csv")) continue;
      if (!source.provider().empty() && provider != source.provider()) continue;
      if (absl::Status s =
              ImportFile(source, "gpuhunt", provider, m.data, file++, context, as_of, copy);
          !s.ok()) {
        return s;
      }
    }
  }
  if (file == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source.name(), ": no ", source.provider().empty() ? "" : source.provider(),
                     ".csv member in the archive"));
  }
  return copy;
}

// Several bodies may describe one offer (zones, pages): the last copy of an
// id takes the place of its first. One look-up per offer and no move when
// the ids are unique already (a single CSV, 100,000 offers).
void KeepLastOfEachId(std::vector<Offer>& offers) {
  absl::flat_hash_map<absl::string_view, size_t> last;  // id -> index of its last copy
  last.reserve(offers.size());
  for (size_t i = 0; i < offers.size(); ++i) last.insert_or_assign(offers[i].id(), i);
  if (last.size() == offers.size()) return;
  std::vector<size_t> kept;  // the index of each id's last copy, in first-seen order
  kept.reserve(last.size());
  absl::flat_hash_map<absl::string_view, size_t> seen;
  seen.reserve(last.size());
  for (size_t i = 0; i < offers.size(); ++i) {
    if (seen.emplace(offers[i].id(), i).second) kept.push_back(last[offers[i].id()]);
  }
  std::vector<Offer> unique;
  unique.reserve(kept.size());
  for (size_t i : kept) unique.push_back(std::move(offers[i]));
  offers = std::move(unique);
}

}  // namespace

absl::StatusOr<ImportedCopy> ImportBodies(const RefreshSource& source,
                                          const std::vector<std::string>& bodies,
                                          const ImportContext& context,
                                          const catalog::ImportAsOf& as_of) {
  absl::StatusOr<ImportedCopy> copy;
  if (source.format() == "skypilot") {
    copy = ImportSkyPilot(source, bodies, context, as_of);
  } else if (source.format() == "gpuhunt-zip") {
    copy = ImportGpuhuntZips(source, bodies, context, as_of);
  } else if (source.format() == "vast" || source.format() == "gcp-billing" ||
             source.format() == "aws-price-list" || source.format() == "gpuhunt" ||
             source.format() == "azure-retail" || source.format() == "oci-price-list") {
    copy = ImportFiles(source, bodies, context, as_of);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(source.name(), ": format: unknown \"", source.format(), "\""));
  }
  if (!copy.ok()) return copy;
  KeepLastOfEachId(copy->offers);
  return copy;
}

namespace {

// The prices of an offer that are set, with the previous good copy's price
// of the same kind (0 when none).
struct Price {
  const char* what = "";
  double usd = 0;
  double before = 0;
};
int Prices(const Offer* before, const Offer& o, Price (&out)[2]) {
  int n = 0;
  if (o.on_demand_usd_per_hour() > 0) {
    out[n++] = {"on-demand", o.on_demand_usd_per_hour(),
                before != nullptr ? before->on_demand_usd_per_hour() : 0};
  }
  if (o.spot_usd_per_hour() > 0) {
    out[n++] = {"spot", o.spot_usd_per_hour(), before != nullptr ? before->spot_usd_per_hour() : 0};
  }
  return n;
}

void CheckOffer(const RefreshSource& source, const Offer* before, const Offer& after,
                const PriceBounds& bounds, std::vector<std::string>& findings) {
  const double ratio_limit = source.max_price_ratio() > 0 ? source.max_price_ratio() : 3.0;
  const int gpus = std::max(1, after.gpus_per_node());
  Price prices[2];
  const int n = Prices(before, after, prices);
  for (int i = 0; i < n; ++i) {
    const char* what = prices[i].what;
    const double price = prices[i].usd;
    const double per_gpu = price / gpus;
    if (!std::isfinite(per_gpu) || per_gpu < bounds.min_usd_per_gpu_hour ||
        per_gpu > bounds.max_usd_per_gpu_hour) {
      findings.push_back(absl::StrCat(after.id(), " ", what, " $", per_gpu,
                                      "/accelerator-hour outside $", bounds.min_usd_per_gpu_hour,
                                      "..$", bounds.max_usd_per_gpu_hour));
      continue;
    }
    const double old_price = prices[i].before;
    if (old_price <= 0) continue;
    const double ratio = price / old_price;
    if (ratio > ratio_limit || ratio < 1 / ratio_limit) {
      findings.push_back(absl::StrCat(after.id(), " ", what, " $", old_price, " -> $", price, " (x",
                                      ratio, ", limit x", ratio_limit,
                                      " against the previous good copy)"));
    }
  }
}

}  // namespace

absl::Status GuardCopy(const RefreshSource& source, const std::vector<Offer>& previous,
                       const std::vector<Offer>& next, const PriceBounds& bounds) {
  if (next.empty()) {
    return absl::FailedPreconditionError("the refresh has no offer (an empty page?)");
  }
  const double shrink = source.max_shrink_fraction() > 0 ? source.max_shrink_fraction() : 0.25;
  if (!previous.empty() &&
      static_cast<double>(next.size()) < (1 - shrink) * static_cast<double>(previous.size())) {
    return absl::FailedPreconditionError(absl::StrCat(next.size(), " offers after ",
                                                      previous.size(), " (shrinks more than ",
                                                      shrink * 100, "%)"));
  }
  absl::flat_hash_map<absl::string_view, const Offer*> before;
  before.reserve(previous.size());
  for (const Offer& o : previous) before.emplace(o.id(), &o);
  std::vector<std::string> findings;
  for (const Offer& o : next) {
    auto it = before.find(o.id());
    CheckOffer(source, it == before.end() ? nullptr : it->second, o, bounds, findings);
  }
  if (findings.empty()) return absl::OkStatus();
  const size_t shown = std::min<size_t>(findings.size(), 5);
  return absl::FailedPreconditionError(absl::StrCat(
      findings.size(), " price(s) out of range: ",
      absl::StrJoin(findings.begin(), findings.begin() + static_cast<long>(shown), "; "),
      findings.size() > shown ? "; ..." : ""));
}

}  // namespace gpuadvisor::refresher
