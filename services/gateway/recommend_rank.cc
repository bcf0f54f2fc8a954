// Stage 2: fitting. Sizing's answers are recorded (and cached), and say
// which configurations fit and meet the request's speed, SLOs and deadline;
// each unit keeps its fitting cluster sizes, the rest are excluded. The
// pre-rank (recommend_prerank.cc) ranks the fitting candidates by
// ObjectiveKey on the catalog's list prices.

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "services/gateway/recommend_state.h"

namespace gpuadvisor::gateway::recommend {

using catalog::v1::PurchaseOption;

absl::Status RunState::RecordEstimates(sizing::v1::EstimateResponse estimates) {
  if (estimates.estimates_size() != estimate_request_.configurations_size()) {
    return absl::InternalError(
        absl::StrCat("sizing answered ", estimates.estimates_size(), " estimates for ",
                     estimate_request_.configurations_size(), " configurations"));
  }
  if (!needs_sizing_) return absl::OkStatus();
  std::vector<EstimateCache::ConfigKey> keys;
  std::vector<EstimateCache::Estimate> sized;
  keys.reserve(missing_.size());
  sized.reserve(missing_.size());
  for (size_t i = 0; i < missing_.size(); ++i) {
    const int config = missing_[i];
    estimates_[config] = std::make_shared<const sizing::v1::ConfigurationEstimate>(
        std::move(*estimates.mutable_estimates(static_cast<int>(i))));
    keys.push_back({index_->shapes()[configs_[config].first].key, configs_[config].second});
    sized.push_back(estimates_[config]);
  }
  EstimateCache::Totals totals;
  if (sized_ == nullptr) {
    auto workload = std::make_shared<sizing::v1::EstimateResponse>();
    workload->mutable_totals()->Swap(estimates.mutable_totals());
    workload->mutable_model()->Swap(estimates.mutable_model());
    // The defaults sizing applied (stated as assumptions, workload_defaults.h).
    workload->mutable_applied_defaults()->Swap(estimates.mutable_applied_defaults());
    sized_ = totals = std::move(workload);
  }
  if (estimate_cache_ != nullptr && !workload_key_.empty()) {
    estimate_cache_->Insert(workload_key_, std::move(totals), keys, sized, absl::Now(),
                            estimates.model_fingerprint());
  }
  return absl::OkStatus();
}

void RunState::KeepFitting() {
  // GPU models that fit when spread over several nodes: an offer of one of
  // them that has no fabric was excluded for the lack of it, not for size.
  std::vector<char> fit_multi_node(index_->gpus(), 0);  // by GPU id
  for (int config = 0; config < static_cast<int>(configs_.size()); ++config) {
    const sizing::v1::ConfigurationEstimate& e = Est(config);
    if (e.configuration().nodes() > 1 && e.fits())
      fit_multi_node[index_->shapes()[configs_[config].first].gpu] = 1;
  }
  // For cost objectives without a deadline or a throughput floor, an offer's
  // larger clusters only add communication: keep the smallest cluster that
  // fits and the next sizes up (which can still win by avoiding
  // recomputation or offloading). Speed objectives keep every size.
  const v1::Constraints& c = request_.constraints();
  const bool cost_only =
      (objective_ == v1::OBJECTIVE_CHEAPEST || objective_ == v1::OBJECTIVE_BEST_VALUE) &&
      c.deadline_hours() <= 0 && c.min_tokens_per_second() <= 0;
  const std::vector<OfferCell>& cells = index_->cells();
  fitting_.reserve(units_.size() * kFittingClusterSizesKept);
  for (Unit& unit : units_) {
    const OfferCell& f = cells[unit.cell];
    int fitting_steps = 0;
    unit.fitting_begin = unit.fitting_end = static_cast<int>(fitting_.size());
    for (int step = 0; step < unit.steps; ++step) {
      const int config = ShapeConfig(f.shape, step);
      const v1::ExclusionReason reason = CheckConfiguration(unit, config, fit_multi_node);
      if (reason != v1::EXCLUSION_REASON_UNSPECIFIED) {
        ExcludeUnit(unit, reason, config);
        continue;
      }
      if (cost_only && ++fitting_steps > kFittingClusterSizesKept) break;
      fitting_.emplace_back(step, config);
      unit.fitting_end = static_cast<int>(fitting_.size());
      for (PurchaseOption option : options_)
        unit.candidates_per_offer += f.sold[OptionSlot(option)] ? 1 : 0;
    }
  }
}

v1::ExclusionReason RunState::CheckConfiguration(const Unit& unit, int config,
                                                 const std::vector<char>& fit_multi_node) {
  const v1::Constraints& c = request_.constraints();
  const OfferCell& f = index_->cells()[unit.cell];
  const sizing::v1::ConfigurationEstimate& e = Est(config);
  if (!e.fits()) {
    const bool for_lack_of_fabric = f.max_nodes == 1 && fit_multi_node[f.gpu];
    if (for_lack_of_fabric) return v1::EXCLUSION_REASON_NO_FABRIC;
    Track(misses_, "fit", {e.memory_margin(), config, -1, unit.first}, false);
    return v1::EXCLUSION_REASON_DOES_NOT_FIT;
  }
  const double min_tokens_per_second = c.min_tokens_per_second();
  if (min_tokens_per_second > 0 && e.tokens_per_second() < min_tokens_per_second) {
    Track(misses_, "tokens_per_second", {e.tokens_per_second(), config, -1, unit.first}, false);
    return v1::EXCLUSION_REASON_TOO_SLOW;
  }
  const double max_ttft = c.max_time_to_first_token_seconds();
  if (serving_ && (max_ttft > 0 || min_user_tps_ > 0)) {
    // The numbers Serving() passes on unchanged, read without building it.
    const sizing::v1::ServingEstimate& served = e.serving();
    if (max_ttft > 0 && !(served.time_to_first_token_seconds() <= max_ttft)) {
      Track(misses_, "ttft", {served.time_to_first_token_seconds(), config, -1, unit.first}, true);
      return v1::EXCLUSION_REASON_TOO_SLOW;
    }
    if (min_user_tps_ > 0 && !(served.tokens_per_second_per_user() >= min_user_tps_)) {
      Track(misses_, "per_user", {served.tokens_per_second_per_user(), config, -1, unit.first},
            false);
      return v1::EXCLUSION_REASON_TOO_SLOW;
    }
  }
  // At the answer's confidence: the quote only adds hours to the run's.
  const double deadline = c.deadline_hours();
  if (deadline > 0 && !(RunHoursAt(e, confidence_z_) <= deadline)) {
    Track(misses_, "deadline", {RunHoursAt(e, confidence_z_), config, -1, unit.first}, true);
    return v1::EXCLUSION_REASON_MISSES_DEADLINE;
  }
  // An estimate pricing cannot quote (or no one would run) is this
  // candidate's problem, never the request's.
  if (!std::isfinite(e.estimated_hours()) || e.estimated_hours() < 0 ||
      e.estimated_hours() > kMaxQuotableHours || !std::isfinite(e.tokens_per_second())) {
    return v1::EXCLUSION_REASON_RUNS_TOO_LONG;
  }
  return v1::EXCLUSION_REASON_UNSPECIFIED;
}

}  // namespace gpuadvisor::gateway::recommend
