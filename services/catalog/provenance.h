#ifndef GPUADVISOR_SERVICES_CATALOG_PROVENANCE_H_
#define GPUADVISOR_SERVICES_CATALOG_PROVENANCE_H_

// Where an offer's prices come from and how old they are (docs/catalog.md,
// "Ages"): the short source name of every offer (Offer.price_source), the
// time its prices were taken (priced_at_unix_seconds), its source's budget
// (stale_after_seconds), and one SourceState per price source in the
// snapshot (CatalogSnapshot.sources) for `gpu-advisor sources`.
//
//   FillPriceProvenance(offer, list.stale_after_seconds());  // on load
//   snapshot.sources = SourceStatesOf(snapshot, refreshed_states, loaded_at);
//   AgeSources(snapshot.sources, now);                      // when answering
//
// Plain functions over values; thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"

namespace gpuadvisor::catalog {

// The short name of a `source` text: a refresher stamp ("refresh vast at
// ...") gives the refresher source's name ("vast"); a curated row its first
// key ("C-AWS; spot: ..." -> "C-AWS", "C-SF (Shadeform ...)" -> "C-SF",
// "C-TPU: ..." -> "C-TPU"). Empty for an empty text.
std::string PriceSourceName(absl::string_view source);

// Fills what an offer's file leaves unset: price_source from `source`,
// priced_at_unix_seconds from the start (UTC) of its `as_of` date,
// spot_priced_at_unix_seconds from its `spot_as_of` (when set), and
// stale_after_seconds = `default_stale_after_seconds`. Set fields are kept.
void FillPriceProvenance(v1::Offer& offer, int64_t default_stale_after_seconds);

// Whether `as_of` is an ISO date ("2026-11-29"), as Offer.spot_as_of must be.
bool IsIsoDate(absl::string_view as_of);

// Seconds since the offer's prices were taken, or -1 when not known.
int64_t PriceAgeSeconds(const v1::Offer& offer, absl::Time now);
// Whether that age passes the offer's budget (false without a budget or age).
bool PriceStale(const v1::Offer& offer, absl::Time now);
// The date (and, for refreshed prices, the UTC time) the prices were taken:
// "2026-11-29" or "2026-12-04T00:15:00Z"; the offer's as_of when not known.
std::string PricedAtText(const v1::Offer& offer);
// PricedAtText's text of a time (unix seconds) in the years 1970-9999,
// written to `buffer` without allocating (answers print one per
// recommendation): "2026-11-29" at the start of a UTC day, else
// "2026-11-29T13:05:09Z". Returns its length; 0 for a time <= 0 or past 9999.
inline constexpr size_t kTimeTextSize = 24;
size_t WriteTimeText(int64_t at, char (&buffer)[kTimeTextSize]);

// The spot price's own provenance where the row carries one
// (Offer.spot_as_of: a spot price from another source or date than the
// on-demand price); each is the row's (the functions above) otherwise.
bool HasOwnSpotDate(const v1::Offer& offer);
std::string SpotPriceSource(const v1::Offer& offer);
int64_t SpotPriceAgeSeconds(const v1::Offer& offer, absl::Time now);
bool SpotPriceStale(const v1::Offer& offer, absl::Time now);
std::string SpotPricedAtText(const v1::Offer& offer);

// One SourceState per price source of the snapshot's offers: the
// refresher's states (`refreshed`, kind "refresh") by name, then every other
// Offer.price_source as a "file" source (the catalog's data and imports;
// last attempt = `loaded_at_unix_seconds` (0 leaves it unset: a snapshot's
// content must not change with the time it was loaded), last success = its
// oldest price's time). An offer's spot price with its own source
// (Offer.spot_price_source) counts for that source too. Each gets the offers
// it prices, the dates of its oldest and newest price, and the budget of its
// offers (the largest) where it has none. Sorted by name; ages are left for
// AgeSources.
std::vector<v1::SourceState> SourceStatesOf(const v1::CatalogSnapshot& snapshot,
                                            const std::vector<v1::SourceState>& refreshed,
                                            int64_t loaded_at_unix_seconds);

// Fills age_seconds (now - last success, -1 when never) and stale (the age
// passes the budget, or a refresh source never succeeded).
void AgeSources(google::protobuf::RepeatedPtrField<v1::SourceState>& sources, absl::Time now);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_PROVENANCE_H_
