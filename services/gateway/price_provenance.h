#ifndef GPUADVISOR_SERVICES_GATEWAY_PRICE_PROVENANCE_H_
#define GPUADVISOR_SERVICES_GATEWAY_PRICE_PROVENANCE_H_

// What an answer says about its prices (docs/gateway.md, "Price ages"):
// where each recommendation's price comes from and how old it is, a warning
// when that passes its source's budget, when a marketplace last saw the
// offer available, the catalog's flags on the offer's prices, and the
// oldest and newest price the answer uses. Plain functions; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"

namespace gpuadvisor::gateway {

// "45 s", "12 min", "5 h", "3 days": an age for people.
std::string AgeText(int64_t seconds);

// Fills r.price from r.offer() (catalog Offer.price_source,
// priced_at_unix_seconds, stale_after_seconds,
// last_seen_available_unix_seconds, price_flags), adds the "price:" note and
// a warning when the price is older than its source's budget or the offer
// was not seen available within it. A reserved price is dated by its
// commitment term, a spot price by the offer's spot_as_of /
// spot_price_source where the row carries them.
void ExplainPrice(absl::Time now, v1::Recommendation& r);

// Whether the offer was seen available within its source's budget, or its
// source does not report availability. An offer for which this is false is
// never rank 1.
bool SeenRecently(const catalog::v1::Offer& offer, absl::Time now);

// "not seen available for 3 h, over the 1 h budget of its source vast".
std::string NotSeenText(const catalog::v1::Offer& offer, absl::Time now);

// The detail of EXCLUSION_REASON_SUSPECT_PRICE for `offer`: its first flag
// at one of `options`.
std::string SuspectPriceDetail(const catalog::v1::Offer& offer,
                               const std::vector<catalog::v1::PurchaseOption>& options);

// RecommendResponse.oldest/newest_price_as_of and their ages, from the
// recommendations' prices (left empty when none has a known time).
void StatePriceSpan(absl::Time now, v1::RecommendResponse& response);

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_PRICE_PROVENANCE_H_
