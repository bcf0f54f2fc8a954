// Stage 4: finish. Pricing's quotes filter the candidates by the budget and
// the deadline (at the answer's confidence), the survivors are ranked by
// ObjectiveKey on the quoted prices with its tie band (recommend_decide.cc),
// max_results are kept spread across providers and regions, each is
// explained (recommend_explain.cc), and every offer without a survivor is
// counted under the furthest stage it reached.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "services/gateway/price_provenance.h"
#include "services/gateway/recommend_state.h"

namespace gpuadvisor::gateway::recommend {
namespace {

// How far a candidate got; an excluded offer is reported with the furthest
// stage any of its candidates reached.
int Stage(v1::ExclusionReason reason) {
  switch (reason) {
    case v1::EXCLUSION_REASON_FILTERED:
      return 0;
    case v1::EXCLUSION_REASON_UNAVAILABLE:
    case v1::EXCLUSION_REASON_NOT_MODELLED:
      return 1;
    case v1::EXCLUSION_REASON_TOO_MANY_GPUS:
      return 2;
    case v1::EXCLUSION_REASON_NO_FABRIC:
      return 3;
    case v1::EXCLUSION_REASON_DOES_NOT_FIT:
      return 3;
    case v1::EXCLUSION_REASON_TOO_SLOW:
      return 4;
    case v1::EXCLUSION_REASON_NOT_PRICED:
      return 5;
    case v1::EXCLUSION_REASON_RUNS_TOO_LONG:
      return 5;
    case v1::EXCLUSION_REASON_OVER_BUDGET:
      return 6;
    case v1::EXCLUSION_REASON_MISSES_DEADLINE:
      return 7;
    default:
      return -1;
  }
}

}  // namespace

bool RankableQuote(const pricing::v1::Quote& q, const sizing::v1::ConfigurationEstimate& estimate) {
  const pricing::v1::CostBreakdown& c = q.cost();
  for (double v :
       {c.total_usd(), c.usd_per_hour(), c.expected_hours(), c.compute_usd(), c.storage_usd(),
        c.egress_usd(), c.preemption_usd(), estimate.tokens_per_second()}) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

absl::Status RunState::Finish(const pricing::v1::QuoteResponse& quotes,
                              v1::RecommendResponse& response) {
  if (quotes.quotes_size() != static_cast<int>(quoted_.size())) {
    return absl::InternalError(absl::StrCat("pricing answered ", quotes.quotes_size(),
                                            " quotes for ", quoted_.size(), " items"));
  }
  std::vector<int> survivors = Survivors(quotes);
  RankTied(survivors, quotes);
  const absl::Time now = absl::Now();
  PreferSeenAvailable(survivors, now);
  const std::vector<int> chosen = ChooseSpread(GroupRegions(survivors, quotes));

  for (int index : chosen) {
    v1::Recommendation* r = response.add_recommendations();
    Explain(candidates_[index], quotes.quotes(candidates_[index].quote), *r);
    ExplainChoice(index, *r);
    ExplainPrice(now, *r);
    r->set_rank(response.recommendations_size());
  }
  StatePriceSpan(now, response);
  AddExclusions(survivors, quotes, response);
  response.set_candidates_considered(candidates_considered_);
  response.set_catalog_version(catalog_->snapshot().version());
  response.set_price_book_version(quotes.price_book_version());
  response.set_prices_as_of(quotes.prices_as_of());
  response.set_price_book_age_seconds(quotes.price_book_age_seconds());
  *response.mutable_totals() = sized_->totals();
  response.set_objective(objective_);
  response.set_tie_band_fraction(tie_band_used_);
  response.set_confidence(confidence_);
  for (const v1::Assumption& a : assumptions_) *response.add_assumptions() = a;
  if (!chosen.empty()) {
    AddHead(survivors, chosen, quotes, response);
    AddWhatIfs(chosen.front(), survivors, quotes, response);
  } else {
    AddNearestMisses(response);
  }
  return absl::OkStatus();
}

// The quoted candidates that meet the budget and the deadline (what-ifs
// aside); the others are excluded, the nearest misses tracked.
std::vector<int> RunState::Survivors(const pricing::v1::QuoteResponse& quotes) {
  // The limits read once: the loop writes the run's state, so each would be
  // read again from the request per candidate.
  const v1::Constraints& c = request_.constraints();
  const double max_hourly = c.max_usd_per_hour(), max_total = c.max_total_usd(),
               deadline = c.deadline_hours();
  std::vector<int> survivors;
  survivors.reserve(quoted_.size());
  for (int candidate_index : quoted_) {
    const Candidate& candidate = candidates_[candidate_index];
    if (candidate.what_if_only) continue;
    const pricing::v1::Quote& q = quotes.quotes(candidate.quote);
    if (!q.priced() || !RankableQuote(q, Est(candidate.config))) {
      // A non-finite figure would break the sort's ordering: never ranked.
      ExcludeQuoted(candidate, candidate_index, v1::EXCLUSION_REASON_NOT_PRICED);
      continue;
    }
    const double usd_per_hour = q.cost().usd_per_hour();
    const bool over_hourly = max_hourly > 0 && usd_per_hour > max_hourly;
    // Budget and deadline at the answer's confidence (P80 unless asked).
    const double total_at = max_total > 0 ? TotalUsdAt(candidate, q, confidence_z_) : 0;
    const bool over_total = max_total > 0 && !(total_at <= max_total);
    if (over_hourly || over_total) {
      if (over_hourly)
        Track(misses_, "usd_per_hour", {usd_per_hour, -1, candidate_index, candidate.offer_index},
              true);
      if (over_total)
        Track(misses_, "total_usd", {total_at, -1, candidate_index, candidate.offer_index}, true);
      ExcludeQuoted(candidate, candidate_index, v1::EXCLUSION_REASON_OVER_BUDGET);
      continue;
    }
    if (deadline > 0) {
      const double hours_at = ExpectedHoursAt(candidate, q, confidence_z_);
      if (!(hours_at <= deadline)) {
        Track(misses_, "deadline", {hours_at, -1, candidate_index, candidate.offer_index}, true);
        ExcludeQuoted(candidate, candidate_index, v1::EXCLUSION_REASON_MISSES_DEADLINE);
        continue;
      }
    }
    survivors.push_back(candidate_index);
  }
  return survivors;
}

// Offers seen available within their source's budget (or whose source does
// not report availability) keep their rank; the others follow them, so one
// is never rank 1, and when nothing else qualifies they are left out as
// unavailable.
void RunState::PreferSeenAvailable(std::vector<int>& survivors, absl::Time now) {
  auto seen = [&](int index) { return SeenRecently(OfferOf(candidates_[index]), now); };
  // Usually every survivor was seen: then the order stands, with no partition's buffer.
  const auto unseen = std::find_if_not(survivors.begin(), survivors.end(), seen);
  if (unseen == survivors.end()) return;
  std::stable_partition(unseen, survivors.end(), seen);
  if (survivors.empty() || seen(survivors.front())) return;
  for (int index : survivors) {
    ExcludeQuoted(candidates_[index], index, v1::EXCLUSION_REASON_UNAVAILABLE);
  }
  survivors.clear();
}

// A fallback list for autoscalers: first the best candidate of each
// (provider, region), then the rest in rank order; shown in rank order.
std::vector<int> RunState::ChooseSpread(const std::vector<int>& survivors) const {
  std::vector<size_t> picks;                                // positions in survivors
  absl::flat_hash_set<std::pair<int32_t, int32_t>> places;  // (provider, region) ids
  std::vector<bool> taken(survivors.size(), false);
  for (size_t i = 0; i < survivors.size() && static_cast<int>(picks.size()) < max_results_; ++i) {
    const OfferFacts& offer = index_->offers()[candidates_[survivors[i]].offer_index];
    if (places.insert({offer.provider, offer.region}).second) {
      picks.push_back(i);
      taken[i] = true;
    }
  }
  for (size_t i = 0; i < survivors.size() && static_cast<int>(picks.size()) < max_results_; ++i) {
    if (!taken[i]) picks.push_back(i);
  }
  std::sort(picks.begin(), picks.end());
  std::vector<int> chosen;
  chosen.reserve(picks.size());
  for (size_t i : picks) chosen.push_back(survivors[i]);
  return chosen;
}

// Offers with no surviving candidate, by the furthest stage they reached;
// an offer with a candidate outranked before pricing is not excluded. The
// example is the excluded offer that comes first in the snapshot.
void RunState::AddExclusions(const std::vector<int>& survivors,
                             const pricing::v1::QuoteResponse& quotes,
                             v1::RecommendResponse& response) {
  // Offers with a surviving candidate, by place in quoted_offers_.
  std::vector<char> survived(quoted_offers_.size(), 0);
  for (int index : survivors) survived[candidates_[index].quoted_offer] = 1;
  struct Tally {
    int64_t count = 0;
    int example = -1, config = -1, candidate = -1;
  };
  // By reason (a small enum; in its order, as the answer lists them before
  // sorting by count).
  std::array<Tally, v1::ExclusionReason_ARRAYSIZE> tally;
  auto add = [&](v1::ExclusionReason reason, int64_t count, int example, int config,
                 int candidate) {
    if (count <= 0 || reason == v1::EXCLUSION_REASON_UNSPECIFIED) return;
    Tally& t = tally[reason];
    t.count += count;
    if (t.example < 0 || example < t.example) t = {t.count, example, config, candidate};
  };
  add(v1::EXCLUSION_REASON_FILTERED, filtered_by_name_, first_filtered_by_name_, -1, -1);
  for (const Unit& unit : units_) {
    if (unit.candidates_per_offer == 0) add(unit.reason, unit.count, unit.first, unit.config, -1);
  }
  // Prices the catalog flags, at an option asked for: never ranked on.
  std::array<bool, catalog::v1::PurchaseOption_ARRAYSIZE> asked{};
  for (catalog::v1::PurchaseOption option : options_) asked[option] = true;
  const bool names = name_filtered_ || host_filtered_ || !provider_ok_.empty() ||
                     !region_ok_.empty() || !gpu_ok_.empty();
  for (const FlaggedPrice& flagged : index_->flagged_prices()) {
    const size_t option = static_cast<size_t>(flagged.option);
    if (option >= asked.size() || !asked[option] || (names && !PassesNames(flagged.offer))) {
      continue;
    }
    add(v1::EXCLUSION_REASON_SUSPECT_PRICE, 1, flagged.offer, -1, -1);
  }
  for (size_t i = 0; i < quoted_offers_.size(); ++i) {
    const Quoted& q = quoted_offers_[i];
    if (survived[i] || q.quoted < units_[q.unit].candidates_per_offer) continue;
    add(q.reason, 1, q.offer, q.config, q.candidate);
  }
  const auto& offers = catalog_->snapshot().offers();
  for (int r = 0; r < static_cast<int>(tally.size()); ++r) {
    const Tally& t = tally[r];
    if (t.count == 0) continue;
    const auto reason = static_cast<v1::ExclusionReason>(r);
    v1::Exclusion* exclusion = response.add_excluded();
    exclusion->set_reason(reason);
    exclusion->set_count(static_cast<int32_t>(t.count));
    exclusion->set_example(offers.Get(t.example).id());
    exclusion->set_detail(ExclusionDetail(t.example, reason, t.config, t.candidate, quotes));
  }
  std::stable_sort(
      response.mutable_excluded()->begin(), response.mutable_excluded()->end(),
      [](const v1::Exclusion& a, const v1::Exclusion& b) { return a.count() > b.count(); });
}

void RunState::Exclude(v1::ExclusionReason& current, int& current_config, int* current_candidate,
                       v1::ExclusionReason reason, int config, int candidate) {
  // A later candidate at the same stage is a larger cluster or a later
  // option: its numbers explain the exclusion best.
  if (Stage(reason) >= Stage(current)) {
    current = reason;
    current_config = config;
    if (current_candidate != nullptr) *current_candidate = candidate;
  }
}

void RunState::ExcludeQuoted(const Candidate& candidate, int candidate_index,
                             v1::ExclusionReason reason) {
  Quoted& q = quoted_offers_[candidate.quoted_offer];
  Exclude(q.reason, q.config, &q.candidate, reason, -1, candidate_index);
}

void RunState::Track(std::map<std::string, Miss>& misses, const std::string& key, Miss miss,
                     bool lower) {
  if (!std::isfinite(miss.value)) return;
  auto [it, inserted] = misses.try_emplace(key, miss);
  if (!inserted && (lower ? miss.value < it->second.value : miss.value > it->second.value))
    it->second = miss;
}

}  // namespace gpuadvisor::gateway::recommend
