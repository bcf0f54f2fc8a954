#include "services/gateway/price_provenance.h"

#include <algorithm>
#include <cstddef>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "services/catalog/provenance.h"

namespace gpuadvisor::gateway {
namespace {

// AgeText, appended to `out` (it runs for every recommendation).
void AppendAge(std::string& out, int64_t seconds) {
  if (seconds < 0) {
    out.append("unknown");
  } else if (seconds < 120) {
    absl::StrAppend(&out, seconds, " s");
  } else if (seconds < 2 * 3600) {
    absl::StrAppend(&out, seconds / 60, " min");
  } else if (seconds < 2 * 86400) {
    absl::StrAppend(&out, seconds / 3600, " h");
  } else {
    absl::StrAppend(&out, seconds / 86400, " days");
  }
}

}  // namespace

std::string AgeText(int64_t seconds) {
  std::string text;
  AppendAge(text, seconds);
  return text;
}

bool SeenRecently(const catalog::v1::Offer& offer, absl::Time now) {
  const int64_t seen = offer.last_seen_available_unix_seconds();
  if (seen <= 0 || offer.stale_after_seconds() <= 0) return true;
  return absl::ToUnixSeconds(now) - seen <= offer.stale_after_seconds();
}

std::string NotSeenText(const catalog::v1::Offer& offer, absl::Time now) {
  return absl::StrCat("not seen available for ",
                      AgeText(absl::ToUnixSeconds(now) - offer.last_seen_available_unix_seconds()),
                      ", over the ", AgeText(offer.stale_after_seconds()), " budget of its source ",
                      offer.price_source());
}

void ExplainPrice(absl::Time now, v1::Recommendation& r) {
  const catalog::v1::Offer& offer = r.offer();
  v1::PriceProvenance& p = *r.mutable_price();
  p.set_source(offer.price_source());
  char date[catalog::kTimeTextSize];
  if (const size_t n = catalog::WriteTimeText(offer.priced_at_unix_seconds(), date); n > 0) {
    p.set_as_of(date, n);
  } else {
    p.set_as_of(catalog::PricedAtText(offer));
  }
  p.set_age_seconds(catalog::PriceAgeSeconds(offer, now));
  p.set_stale_after_seconds(offer.stale_after_seconds());
  p.set_stale(catalog::PriceStale(offer, now));
  // A reserved price is the commitment term's, with its own date (the AWS
  // Capacity Block rates predate the row's on-demand price by two years).
  absl::Time term_as_of;
  if (r.has_commitment() && !r.commitment().as_of().empty() &&
      absl::ParseTime("%Y-%m-%d", r.commitment().as_of(), absl::UTCTimeZone(), &term_as_of,
                      nullptr)) {
    p.set_as_of(r.commitment().as_of());
    p.set_age_seconds(std::max<int64_t>(0, absl::ToInt64Seconds(now - term_as_of)));
    p.set_stale(offer.stale_after_seconds() > 0 && p.age_seconds() > offer.stale_after_seconds());
  }
  // A spot price from another source or date than the row's on-demand price
  // is named with its own (GCP us-east4 spot: the 2024-09-16 billing SKUs).
  if (r.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT && catalog::HasOwnSpotDate(offer)) {
    p.set_source(catalog::SpotPriceSource(offer));
    p.set_as_of(catalog::SpotPricedAtText(offer));
    p.set_age_seconds(catalog::SpotPriceAgeSeconds(offer, now));
    p.set_stale(catalog::SpotPriceStale(offer, now));
  }
  for (const catalog::v1::PriceFlag& flag : offer.price_flags()) {
    p.add_flags(absl::StrFormat("%s $%.2f/h: %s",
                                flag.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? "spot"
                                : flag.purchase_option() == catalog::v1::PURCHASE_OPTION_RESERVED
                                    ? "reserved"
                                    : "on-demand",
                                flag.listed_usd_per_hour(), flag.reason()));
  }
  // Written in place, in the answer (on its arena): no temporary copies.
  std::string& note = *r.add_notes();
  note.reserve(112);
  absl::StrAppend(&note, "price: ", p.source().empty() ? "source not stated" : p.source(),
                  ", as of ", p.as_of().empty() ? "an unknown date" : p.as_of());
  if (p.age_seconds() >= 0) {
    note.append(" (");
    AppendAge(note, p.age_seconds());
    note.append(" old)");
  }
  if (offer.last_seen_available_unix_seconds() > 0) {
    const int64_t seen = absl::ToUnixSeconds(now) - offer.last_seen_available_unix_seconds();
    p.set_last_seen_available_seconds(std::max<int64_t>(0, seen));
    note.append("; last seen available ");
    AppendAge(note, p.last_seen_available_seconds());
    note.append(" ago");
  }
  if (p.stale()) {
    r.add_warnings(absl::StrCat("stale price: ", p.source(), " priced this offer ",
                                AgeText(p.age_seconds()), " ago (", p.as_of(), "), over its ",
                                AgeText(p.stale_after_seconds()),
                                " budget: check the current price before renting"));
  }
  if (!SeenRecently(offer, now)) {
    r.add_warnings(absl::StrCat("availability: ", NotSeenText(offer, now)));
  }
  for (const std::string& flag : p.flags()) {
    r.add_notes(absl::StrCat("flagged price, not ranked on: ", flag));
  }
}

std::string SuspectPriceDetail(const catalog::v1::Offer& offer,
                               const std::vector<catalog::v1::PurchaseOption>& options) {
  for (const catalog::v1::PriceFlag& flag : offer.price_flags()) {
    if (std::find(options.begin(), options.end(), flag.purchase_option()) == options.end()) {
      continue;
    }
    const char* what = flag.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? "spot"
                       : flag.purchase_option() == catalog::v1::PURCHASE_OPTION_RESERVED
                           ? "reserved"
                           : "on-demand";
    return absl::StrFormat(
        "%s price $%.2f/h flagged by the catalog's load guards (%s): never ranked on it", what,
        flag.listed_usd_per_hour(), flag.reason());
  }
  return "a flagged price: never ranked on it";
}

void StatePriceSpan(absl::Time /*now*/, v1::RecommendResponse& response) {
  const v1::Recommendation* oldest = nullptr;
  const v1::Recommendation* newest = nullptr;
  // Each recommendation's own price age (ExplainPrice): a reserved price's
  // is its term's.
  for (const v1::Recommendation& r : response.recommendations()) {
    const int64_t age = r.price().age_seconds();
    if (age < 0) continue;
    if (oldest == nullptr || age > oldest->price().age_seconds()) oldest = &r;
    if (newest == nullptr || age < newest->price().age_seconds()) newest = &r;
  }
  if (oldest == nullptr) return;
  response.set_oldest_price_as_of(oldest->price().as_of());
  response.set_newest_price_as_of(newest->price().as_of());
  response.set_oldest_price_age_seconds(oldest->price().age_seconds());
  response.set_newest_price_age_seconds(newest->price().age_seconds());
}

}  // namespace gpuadvisor::gateway
