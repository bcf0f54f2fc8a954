#include "services/catalog/provenance.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/civil_time.h"

namespace gpuadvisor::catalog {
namespace {

constexpr absl::string_view kRefreshPrefix = "refresh ";

int64_t DateStartUnix(absl::string_view as_of) {
  absl::Time t;
  std::string error;
  if (as_of.size() < 10 ||
      !absl::ParseTime("%Y-%m-%d", std::string(as_of.substr(0, 10)), &t, &error)) {
    return 0;
  }
  return absl::ToUnixSeconds(t);
}

// Writes `value` as `width` digits, zero-padded, at `p`; returns the end.
char* Digits(char* p, unsigned value, int width) {
  for (int i = width - 1; i >= 0; --i, value /= 10) p[i] = static_cast<char>('0' + value % 10);
  return p + width;
}

// "2026-11-29", the UTC date of a time: WriteTimeText's first ten
// characters, CivilDay's arithmetic outside its years.
std::string DateOf(int64_t unix_seconds) {
  char text[kTimeTextSize];
  if (WriteTimeText(unix_seconds, text) > 0) return std::string(text, 10);
  const int64_t days =
      unix_seconds >= 0 ? unix_seconds / 86400 : -((-unix_seconds + 86399) / 86400);
  const absl::CivilDay day = absl::CivilDay(1970, 1, 1) + days;
  return absl::StrCat(absl::Dec(day.year(), absl::kZeroPad4), "-",
                      absl::Dec(day.month(), absl::kZeroPad2), "-",
                      absl::Dec(day.day(), absl::kZeroPad2));
}

int64_t AgeOf(int64_t priced_at_unix_seconds, absl::Time now) {
  if (priced_at_unix_seconds <= 0) return -1;
  return std::max<int64_t>(0, absl::ToUnixSeconds(now) - priced_at_unix_seconds);
}

bool OverBudget(int64_t age_seconds, const v1::Offer& offer) {
  return age_seconds >= 0 && offer.stale_after_seconds() > 0 &&
         age_seconds > offer.stale_after_seconds();
}

// "2026-11-29" for a time at the start of a day, else "...T13:05:09Z";
// `fallback` (the file's date text) when the time is not known.
std::string TimeText(int64_t at, const std::string& fallback) {
  if (at <= 0) return fallback;
  char text[kTimeTextSize];
  if (const size_t n = WriteTimeText(at, text); n > 0) return std::string(text, n);
  if (at % 86400 == 0) return DateOf(at);
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(at), absl::UTCTimeZone());
}

}  // namespace

// The civil date of a day count: Howard Hinnant's civil_from_days (public
// domain algorithm), instead of CivilDay's normalisation or FormatTime's
// zone lookup.
size_t WriteTimeText(int64_t at, char (&buffer)[kTimeTextSize]) {
  constexpr int64_t kYear10000 = 253402300800;  // 10000-01-01T00:00:00Z
  if (at <= 0 || at >= kYear10000) return 0;
  const int64_t z = at / 86400 + 719468;  // days since 0000-03-01
  const int64_t era = z / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned day = doy - (153 * mp + 2) / 5 + 1;
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;
  const unsigned year = static_cast<unsigned>(yoe + era * 400 + (month <= 2 ? 1 : 0));
  char* p = Digits(buffer, year, 4);
  *p++ = '-';
  p = Digits(p, month, 2);
  *p++ = '-';
  p = Digits(p, day, 2);
  if (const unsigned s = static_cast<unsigned>(at % 86400); s != 0) {
    *p++ = 'T';
    p = Digits(p, s / 3600, 2);
    *p++ = ':';
    p = Digits(p, s / 60 % 60, 2);
    *p++ = ':';
    p = Digits(p, s % 60, 2);
    *p++ = 'Z';
  }
  return static_cast<size_t>(p - buffer);
}

std::string PriceSourceName(absl::string_view source) {
  source = absl::StripLeadingAsciiWhitespace(source);
  if (absl::ConsumePrefix(&source, kRefreshPrefix)) {
    return std::string(source.substr(0, source.find(' ')));
  }
  const size_t end = source.find_first_of(" ;:(,");
  return std::string(source.substr(0, end));
}

void FillPriceProvenance(v1::Offer& offer, int64_t default_stale_after_seconds) {
  if (offer.price_source().empty()) offer.set_price_source(PriceSourceName(offer.source()));
  if (offer.priced_at_unix_seconds() == 0) {
    offer.set_priced_at_unix_seconds(DateStartUnix(offer.as_of()));
  }
  if (offer.spot_priced_at_unix_seconds() == 0 && !offer.spot_as_of().empty()) {
    offer.set_spot_priced_at_unix_seconds(DateStartUnix(offer.spot_as_of()));
  }
  if (offer.stale_after_seconds() == 0 && default_stale_after_seconds > 0) {
    offer.set_stale_after_seconds(default_stale_after_seconds);
  }
}

bool IsIsoDate(absl::string_view as_of) { return as_of.size() == 10 && DateStartUnix(as_of) != 0; }

int64_t PriceAgeSeconds(const v1::Offer& offer, absl::Time now) {
  return AgeOf(offer.priced_at_unix_seconds(), now);
}

bool PriceStale(const v1::Offer& offer, absl::Time now) {
  return OverBudget(PriceAgeSeconds(offer, now), offer);
}

std::string PricedAtText(const v1::Offer& offer) {
  return TimeText(offer.priced_at_unix_seconds(), offer.as_of());
}

bool HasOwnSpotDate(const v1::Offer& offer) { return offer.spot_priced_at_unix_seconds() > 0; }

std::string SpotPriceSource(const v1::Offer& offer) {
  return HasOwnSpotDate(offer) && !offer.spot_price_source().empty() ? offer.spot_price_source()
                                                                     : offer.price_source();
}

int64_t SpotPriceAgeSeconds(const v1::Offer& offer, absl::Time now) {
  if (!HasOwnSpotDate(offer)) return PriceAgeSeconds(offer, now);
  return AgeOf(offer.spot_priced_at_unix_seconds(), now);
}

bool SpotPriceStale(const v1::Offer& offer, absl::Time now) {
  return OverBudget(SpotPriceAgeSeconds(offer, now), offer);
}

std::string SpotPricedAtText(const v1::Offer& offer) {
  if (!HasOwnSpotDate(offer)) return PricedAtText(offer);
  return TimeText(offer.spot_priced_at_unix_seconds(), offer.spot_as_of());
}

std::vector<v1::SourceState> SourceStatesOf(const v1::CatalogSnapshot& snapshot,
                                            const std::vector<v1::SourceState>& refreshed,
                                            int64_t loaded_at_unix_seconds) {
  std::map<std::string, v1::SourceState> by_name;
  for (const v1::SourceState& s : refreshed) {
    v1::SourceState& state = by_name[s.name()];
    state = s;
    state.set_kind("refresh");
    state.clear_offers();
  }
  std::map<std::string, std::pair<int64_t, int64_t>> span;  // oldest, newest priced_at
  // One offer priced by source `name` at `at`.
  auto count = [&](const v1::Offer& offer, const std::string& name, int64_t at) {
    auto [it, inserted] = by_name.try_emplace(name);
    v1::SourceState& state = it->second;
    if (inserted) {
      state.set_name(name);
      state.set_kind("file");
      state.set_result("ok");
      state.set_last_attempt_unix_seconds(loaded_at_unix_seconds);
    }
    state.set_offers(state.offers() + 1);
    if (state.kind() == "file") {
      state.set_stale_after_seconds(
          std::max(state.stale_after_seconds(), offer.stale_after_seconds()));
    }
    if (at <= 0) return;
    auto [s, first] = span.try_emplace(name, at, at);
    if (!first) s->second = {std::min(s->second.first, at), std::max(s->second.second, at)};
  };
  for (const v1::Offer& offer : snapshot.offers()) {
    if (!offer.price_source().empty()) {
      count(offer, offer.price_source(), offer.priced_at_unix_seconds());
    }
    // A spot price from another source counts for that source too.
    if (HasOwnSpotDate(offer) && !offer.spot_price_source().empty() &&
        offer.spot_price_source() != offer.price_source()) {
      count(offer, offer.spot_price_source(), offer.spot_priced_at_unix_seconds());
    }
  }
  std::vector<v1::SourceState> out;
  for (auto& [name, state] : by_name) {
    auto s = span.find(name);
    if (s != span.end()) {
      state.set_oldest_as_of(DateOf(s->second.first));
      state.set_newest_as_of(DateOf(s->second.second));
      if (state.kind() == "file") state.set_last_success_unix_seconds(s->second.first);
    }
    out.push_back(std::move(state));
  }
  return out;
}

void AgeSources(google::protobuf::RepeatedPtrField<v1::SourceState>& sources, absl::Time now) {
  for (v1::SourceState& s : sources) {
    const int64_t age =
        s.last_success_unix_seconds() > 0
            ? std::max<int64_t>(0, absl::ToUnixSeconds(now) - s.last_success_unix_seconds())
            : -1;
    s.set_age_seconds(age);
    s.set_stale((age < 0 && s.kind() == "refresh") ||
                (age >= 0 && s.stale_after_seconds() > 0 && age > s.stale_after_seconds()));
  }
}

}  // namespace gpuadvisor::catalog
