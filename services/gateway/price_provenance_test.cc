#include "services/gateway/price_provenance.h"

#include <cstdint>
#include <random>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "services/catalog/provenance.h"

namespace gpuadvisor::gateway {
namespace {

// ExplainPrice writes the price's date by day arithmetic; it must say what
// the catalog's PricedAtText says, for dates and for times within a day.
TEST(PriceProvenanceTest, AsOfIsTheCatalogsPricedAtText) {
  std::vector<int64_t> times = {
      1,          59,         86399,      86400,        951782400,    951868800,    1709164800,
      1767225599, 1767225600, 4107542400, 253402214400, 253402300799, 253402300800, 253402387200};
  for (int64_t day = 0; day < 2932897; day += 97) times.push_back(day * 86400);  // to 9999
  std::mt19937_64 random(7);
  for (int i = 0; i < 20000; ++i) {
    times.push_back(static_cast<int64_t>(random() % 253402300800u) + 1);
  }
  ASSERT_FALSE(times.empty());
  const absl::Time now = absl::FromUnixSeconds(1780000000);
  for (int64_t at : times) {
    v1::Recommendation r;
    r.mutable_offer()->set_priced_at_unix_seconds(at);
    r.mutable_offer()->set_as_of("2026-01-01");
    ExplainPrice(now, r);
    ASSERT_EQ(r.price().as_of(), catalog::PricedAtText(r.offer())) << at;
  }
}

TEST(PriceProvenanceTest, NoTimeKeepsTheRowsDate) {
  v1::Recommendation r;
  r.mutable_offer()->set_as_of("2025-06-30");
  ExplainPrice(absl::FromUnixSeconds(1780000000), r);
  EXPECT_EQ(r.price().as_of(), "2025-06-30");
  EXPECT_EQ(r.price().age_seconds(), -1);
  ASSERT_FALSE(r.notes().empty());
  EXPECT_EQ(r.notes(0), "price: source not stated, as of 2025-06-30");
}

TEST(PriceProvenanceTest, AgeText) {
  EXPECT_EQ(AgeText(-1), "unknown");
  EXPECT_EQ(AgeText(0), "0 s");
  EXPECT_EQ(AgeText(119), "119 s");
  EXPECT_EQ(AgeText(120), "2 min");
  EXPECT_EQ(AgeText(7199), "119 min");
  EXPECT_EQ(AgeText(7200), "2 h");
  EXPECT_EQ(AgeText(172799), "47 h");
  EXPECT_EQ(AgeText(172800), "2 days");
}

TEST(PriceProvenanceTest, TheNoteStatesAgeAndLastSeen) {
  v1::Recommendation r;
  catalog::v1::Offer& offer = *r.mutable_offer();
  offer.set_price_source("vast");
  offer.set_priced_at_unix_seconds(1780000000 - 3 * 3600 - 5);
  offer.set_last_seen_available_unix_seconds(1780000000 - 90);
  ExplainPrice(absl::FromUnixSeconds(1780000000), r);
  ASSERT_FALSE(r.notes().empty());
  EXPECT_EQ(r.notes(0), "price: vast, as of " + catalog::PricedAtText(offer) +
                            " (3 h old); last seen available 90 s ago");
  EXPECT_EQ(r.price().last_seen_available_seconds(), 90);
}

}  // namespace
}  // namespace gpuadvisor::gateway
