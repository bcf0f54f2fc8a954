#include "services/catalog/provenance.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuadvisor::catalog {
namespace {

TEST(Provenance, SourceNameIsTheRefreshOrTheFirstKey) {
  const struct {
    const char* source;
    const char* name;
  } kCases[] = {
      {"refresh vast at 2026-12-04T00:15:00Z, stale after 3600 s (vast search.json: read 30)",
       "vast"},
      {"C-AWS; spot: PRICES.md gives only the lowest and highest zone", "C-AWS"},
      {"C-SF (Shadeform listing of crusoe)", "C-SF"},
      {"C-TPU: TPU v6e us-east5 $2.7 on demand", "C-TPU"},
      {"W3", "W3"},
      {"X1, X2", "X1"},
      {"", ""},
  };
  for (const auto& c : kCases) EXPECT_EQ(PriceSourceName(c.source), c.name) << c.source;
}

// A whole-day price time prints as its UTC date, the same text as
// absl::FormatTime gives, over leap years and centuries (1970-2200).
TEST(Provenance, WholeDayTimesPrintAsTheirUtcDate) {
  int checked = 0;
  for (int64_t day = 1; day < 84'000; day += 13) {
    v1::Offer offer;
    offer.set_priced_at_unix_seconds(day * 86400);
    ASSERT_EQ(PricedAtText(offer),
              absl::FormatTime("%Y-%m-%d", absl::FromUnixSeconds(day * 86400), absl::UTCTimeZone()))
        << day;
    ++checked;
  }
  v1::Offer leap;
  leap.set_priced_at_unix_seconds(951782400);  // 2000-02-29T00:00:00Z
  EXPECT_EQ(PricedAtText(leap), "2000-02-29");
  EXPECT_GT(checked, 6000);
}

// The allocation-free writer says what FormatTime says, over 1970-9999:
// the date at a day's start, the UTC time within a day; nothing outside.
TEST(Provenance, TimeTextIsFormatTimesUtcText) {
  std::vector<int64_t> times = {1,          59,         86399,        86400,
                                951782400,  951868800,  1709164800,   1767225599,
                                1767225600, 4107542400, 253402214400, 253402300799};
  for (int64_t day = 1; day < 2932897; day += 97) times.push_back(day * 86400);  // to 9999
  std::mt19937_64 random(7);
  for (int i = 0; i < 20000; ++i) {
    times.push_back(static_cast<int64_t>(random() % 253402300800u) + 1);
  }
  ASSERT_FALSE(times.empty());
  for (int64_t at : times) {
    char text[kTimeTextSize];
    const size_t n = WriteTimeText(at, text);
    const char* format = at % 86400 == 0 ? "%Y-%m-%d" : "%Y-%m-%dT%H:%M:%SZ";
    ASSERT_EQ(std::string(text, n),
              absl::FormatTime(format, absl::FromUnixSeconds(at), absl::UTCTimeZone()))
        << at;
  }
  char text[kTimeTextSize];
  EXPECT_EQ(WriteTimeText(0, text), 0u);
  EXPECT_EQ(WriteTimeText(-86400, text), 0u);
  EXPECT_EQ(WriteTimeText(253402300800, text), 0u);  // 10000-01-01
}

TEST(Provenance, FillsWhatTheFileLeavesUnsetAndAgesAgainstTheBudget) {
  v1::Offer offer;
  offer.set_source("C-GCPB: OnDemand SKUs");
  offer.set_as_of("2024-09-16");
  FillPriceProvenance(offer, 90 * 86400);
  EXPECT_EQ(offer.price_source(), "C-GCPB");
  EXPECT_EQ(offer.priced_at_unix_seconds(), 1726444800);  // 2024-09-16T00:00:00Z
  EXPECT_EQ(offer.stale_after_seconds(), 90 * 86400);
  EXPECT_EQ(PricedAtText(offer), "2024-09-16");
  const absl::Time at_budget = absl::FromUnixSeconds(1726444800 + 90 * 86400);
  EXPECT_EQ(PriceAgeSeconds(offer, at_budget), 90 * 86400);
  EXPECT_FALSE(PriceStale(offer, at_budget));
  EXPECT_TRUE(PriceStale(offer, at_budget + absl::Seconds(1)));

  v1::Offer refreshed;  // set fields are kept; a time of day is printed
  refreshed.set_price_source("vast");
  refreshed.set_priced_at_unix_seconds(1764807300);
  refreshed.set_stale_after_seconds(3600);
  FillPriceProvenance(refreshed, 90 * 86400);
  EXPECT_EQ(refreshed.stale_after_seconds(), 3600);
  EXPECT_EQ(PricedAtText(refreshed), "2025-12-04T00:15:00Z");

  v1::Offer unknown;  // no date: no age, never stale
  EXPECT_EQ(PriceAgeSeconds(unknown, at_budget), -1);
  EXPECT_FALSE(PriceStale(unknown, at_budget));
}

// A spot price from another source and date than the on-demand price (GCP
// us-east4: on-demand from the 2026-11-29 SkyPilot catalog, spot from the
// 2024-09-16 billing SKUs) is dated and aged by its own; without one, spot
// is the row's.
TEST(Provenance, ASpotPriceWithItsOwnDateIsAgedByIt) {
  v1::Offer offer;
  offer.set_source("C-GCP (host + GPU row); spot: C-GCPB Preemptible SKUs");
  offer.set_as_of("2026-11-29");
  offer.set_spot_usd_per_hour(48.3067);
  offer.set_spot_as_of("2024-09-16");
  offer.set_spot_price_source("C-GCPB");
  FillPriceProvenance(offer, 90 * 86400);
  EXPECT_EQ(offer.price_source(), "C-GCP");
  EXPECT_EQ(offer.priced_at_unix_seconds(), 1795910400);       // 2026-11-29T00:00:00Z
  EXPECT_EQ(offer.spot_priced_at_unix_seconds(), 1726444800);  // 2024-09-16T00:00:00Z
  ASSERT_TRUE(HasOwnSpotDate(offer));
  const absl::Time now = absl::FromUnixSeconds(1795910400 + 5 * 86400);
  EXPECT_EQ(PricedAtText(offer), "2026-11-29");
  EXPECT_EQ(PriceAgeSeconds(offer, now), 5 * 86400);
  EXPECT_FALSE(PriceStale(offer, now));
  EXPECT_EQ(SpotPriceSource(offer), "C-GCPB");
  EXPECT_EQ(SpotPricedAtText(offer), "2024-09-16");
  EXPECT_EQ(SpotPriceAgeSeconds(offer, now), 1795910400 + 5 * 86400 - 1726444800);
  EXPECT_TRUE(SpotPriceStale(offer, now));

  v1::Offer same;  // no spot date of its own: spot is the row's
  same.set_source("C-AWS; spot: median of 3 zone rows");
  same.set_as_of("2026-11-29");
  same.set_spot_usd_per_hour(5.33);
  FillPriceProvenance(same, 90 * 86400);
  EXPECT_FALSE(HasOwnSpotDate(same));
  EXPECT_EQ(same.spot_priced_at_unix_seconds(), 0);
  EXPECT_EQ(SpotPriceSource(same), "C-AWS");
  EXPECT_EQ(SpotPricedAtText(same), "2026-11-29");
  EXPECT_EQ(SpotPriceAgeSeconds(same, now), PriceAgeSeconds(same, now));
  EXPECT_FALSE(SpotPriceStale(same, now));

  EXPECT_TRUE(IsIsoDate("2024-09-16"));
  for (const char* bad : {"", "2024-9-16", "2024-09-16T00:00:00Z", "March 2026", "2024-13-01"}) {
    EXPECT_FALSE(IsIsoDate(bad)) << bad;
  }
}

TEST(Provenance, OneStatePerSourceWithTheRefreshersFirst) {
  v1::CatalogSnapshot snapshot;
  auto add = [&](const char* source, const char* as_of) {
    v1::Offer* o = snapshot.add_offers();
    o->set_source(source);
    o->set_as_of(as_of);
    FillPriceProvenance(*o, 86400);
  };
  add("C-AWS", "2026-11-29");
  add("C-AWS; spot: ...", "2026-11-01");
  add("C-TPU: v5e", "2024-12-23");
  v1::Offer* vast = snapshot.add_offers();
  vast->set_price_source("vast");
  vast->set_priced_at_unix_seconds(1764807300);
  v1::SourceState state;
  state.set_name("vast");
  state.set_result("held back");
  state.set_reason("a 10x price jump");
  state.set_last_success_unix_seconds(1764807300);
  state.set_stale_after_seconds(3600);
  state.set_offers(99);  // recounted from the snapshot
  const std::vector<v1::SourceState> states = SourceStatesOf(snapshot, {state}, 0);
  ASSERT_EQ(states.size(), 3u);
  EXPECT_EQ(states[0].name(), "C-AWS");
  EXPECT_EQ(states[0].kind(), "file");
  EXPECT_EQ(states[0].offers(), 2);
  EXPECT_EQ(states[0].oldest_as_of(), "2026-11-01");
  EXPECT_EQ(states[0].newest_as_of(), "2026-11-29");
  EXPECT_EQ(states[0].stale_after_seconds(), 86400);
  EXPECT_EQ(states[2].name(), "vast");
  EXPECT_EQ(states[2].kind(), "refresh");
  EXPECT_EQ(states[2].offers(), 1);
  EXPECT_EQ(states[2].reason(), "a 10x price jump");

  google::protobuf::RepeatedPtrField<v1::SourceState> aged(states.begin(), states.end());
  AgeSources(aged, absl::FromUnixSeconds(1764807300 + 7200));
  EXPECT_EQ(aged[2].age_seconds(), 7200);
  EXPECT_TRUE(aged[2].stale());  // 2 h over a 1 h budget
  EXPECT_TRUE(aged[1].stale());  // C-TPU, a year old
  EXPECT_EQ(aged[1].oldest_as_of(), "2024-12-23");
}

// A spot price from another source makes that source one of the snapshot's,
// with the spot price's date.
TEST(Provenance, ASpotPriceWithItsOwnSourceIsCountedForIt) {
  v1::CatalogSnapshot snapshot;
  v1::Offer* gcp = snapshot.add_offers();
  gcp->set_source("C-GCP; spot: R6");
  gcp->set_as_of("2026-11-29");
  gcp->set_spot_usd_per_hour(48.3067);
  gcp->set_spot_price_source("R6");
  gcp->set_spot_as_of("2026-03-01");
  FillPriceProvenance(*gcp, 86400);
  const std::vector<v1::SourceState> states = SourceStatesOf(snapshot, {}, 0);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].name(), "C-GCP");
  EXPECT_EQ(states[0].offers(), 1);
  EXPECT_EQ(states[0].oldest_as_of(), "2026-11-29");
  EXPECT_EQ(states[1].name(), "R6");
  EXPECT_EQ(states[1].offers(), 1);
  EXPECT_EQ(states[1].oldest_as_of(), "2026-03-01");
  EXPECT_EQ(states[1].newest_as_of(), "2026-03-01");
  EXPECT_EQ(states[1].stale_after_seconds(), 86400);
}

}  // namespace
}  // namespace gpuadvisor::catalog
