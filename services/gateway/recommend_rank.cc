// Stage 2: pre-rank. Sizing's answers say which configurations fit and meet
// the request's speed and deadline; the fitting candidates are ranked by
// ObjectiveKey on the catalog's list prices, and the best `cap` go to the
// quote (recommend_quote.cc). The final rank (recommend_finish.cc) uses the
// same key on the quoted prices.

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/types/span.h"
#include "services/gateway/recommend_state.h"

namespace gpuadvisor::gateway::recommend {
namespace {

using catalog::v1::PurchaseOption;

// One stream per (unit, fitting cluster size, option), over the cell's
// offers by list price: the key grows along each stream (hours and
// throughput are the configuration's, the price only rises), so a heap of
// stream heads yields candidates in key order. The fastest objective's key
// is the configuration's hours alone: its streams go by offer index. A
// stream is a cell's offers (or, in part mode, a part's), with their list
// prices when the index has them in stream order, and its configuration's
// numbers that the key reads.
struct Stream {
  absl::Span<const int32_t> offers;
  const double* prices;  // nullptr: read the offer's facts
  size_t pos;
  int unit, config, step, option_pos;
  double factor;  // nodes + spare
  double hours, tokens_per_second;
};

// A stream's current candidate, kept in the heap itself (no indirection per
// comparison); ordered as Ranked.
struct Head {
  double key;
  int offer, step, option_pos;
  int stream;
  double price;
  bool operator<(const Head& o) const {
    return key != o.key       ? key < o.key
           : offer != o.offer ? offer < o.offer
           : step != o.step   ? step < o.step
                              : option_pos < o.option_pos;
  }
};

class StreamMerge {
 public:
  explicit StreamMerge(RunState& run)
      : run_(run),
        fastest_(run.objective_ == v1::OBJECTIVE_FASTEST),
        check_names_(run.name_filtered_ && !run.part_mode_) {}

  // Makes the streams; returns how many candidates they hold.
  int64_t MakeStreams() {
    int64_t total = 0;
    const std::vector<OfferCell>& cells = run_.index_->cells();
    for (int u = 0; u < static_cast<int>(run_.units_.size()); ++u) {
      const Unit& unit = run_.units_[u];
      const OfferCell& cell = cells[unit.cell];
      for (int k = unit.fitting_begin; k < unit.fitting_end; ++k) {
        const auto [step, config] = run_.fitting_[k];
        const sizing::v1::ConfigurationEstimate& e = run_.Est(config);
        for (int pos = 0; pos < static_cast<int>(run_.options_.size()); ++pos) {
          const int slot = OptionSlot(run_.options_[pos]);
          if (!cell.sold[slot]) continue;
          total += unit.count;
          Stream stream{
              {},
              nullptr,
              0,
              u,
              config,
              step,
              pos,
              static_cast<double>((int32_t{1} << step) + run_.SpareOf(run_.options_[pos])),
              e.estimated_hours(),
              e.tokens_per_second()};
          if (unit.parts_end == unit.parts_begin) {
            stream.offers = fastest_ ? absl::MakeConstSpan(cell.offers)
                                     : absl::MakeConstSpan(cell.by_price[slot]);
            stream.prices = fastest_ ? nullptr : cell.price[slot].data();
            streams_.push_back(stream);
            continue;
          }
          for (int p = unit.parts_begin; p < unit.parts_end; ++p) {
            const CellPart& part = *run_.parts_[p];
            stream.offers = fastest_ ? run_.index_->PartOffers(part, run_.parts_by_region_)
                                     : run_.index_->PartByPrice(part, slot, run_.parts_by_region_);
            streams_.push_back(stream);
          }
        }
      }
    }
    return total;
  }

  // The candidates in key order until `cap` are taken (and those that tie
  // with the last one when equal keys may hide unequal prices).
  std::vector<Ranked> Take(int cap, int64_t total) {
    // Past the cap, candidates tied with the max_results-th (within the
    // pre-rank's tie band) are taken too: the final rank may order them first.
    const size_t k = static_cast<size_t>(std::max(run_.max_results_, 1));
    const double band = run_.PreRankBand();
    double limit = -std::numeric_limits<double>::infinity();
    std::vector<Head> heap;
    heap.reserve(streams_.size());
    for (int i = 0; i < static_cast<int>(streams_.size()); ++i) {
      Head head;
      if (Settle(i, head)) heap.push_back(head);
    }
    auto later = [](const Head& a, const Head& b) { return b < a; };  // min-heap
    std::make_heap(heap.begin(), heap.end(), later);
    std::vector<Ranked> selected;
    selected.reserve(std::min<int64_t>(total, cap) + 8);
    while (!heap.empty()) {
      const Head& top = heap.front();
      // Each stream is in the full scan's order when equal keys mean equal
      // prices (then offer index breaks the tie): stop at the cap. Otherwise
      // take every candidate that ties with the last one taken, and the sort
      // below restores the full scan's order among them.
      if (static_cast<int>(selected.size()) >= cap && !(top.key <= limit) &&
          (run_.index_->distinct_price_keys() || !(top.key == selected.back().key))) {
        break;
      }
      const Stream& stream = streams_[top.stream];
      selected.push_back(
          {top.key, top.offer, top.step, top.option_pos, stream.unit, stream.config, top.price});
      if (selected.size() == k) limit = top.key + band * std::abs(top.key);
      std::pop_heap(heap.begin(), heap.end(), later);
      Head& next = heap.back();  // the popped head's slot
      ++streams_[next.stream].pos;
      if (Settle(next.stream, next)) {
        std::push_heap(heap.begin(), heap.end(), later);
      } else {
        heap.pop_back();
      }
    }
    // Streams that hold each offer's candidates in the full scan's order
    // (distinct price keys) come out of the heap in that order already.
    if (!std::is_sorted(selected.begin(), selected.end()))
      std::sort(selected.begin(), selected.end());
    run_.PreRankCut(selected, static_cast<size_t>(cap));
    return selected;
  }

 private:
  // The stream's next candidate that passes the name filters, from its
  // position on; false at its end. In part mode every offer of a part passes.
  bool Settle(int s, Head& head) {
    Stream& stream = streams_[s];
    while (stream.pos < stream.offers.size()) {
      const int offer = stream.offers[stream.pos];
      if (!check_names_ || run_.PassesNames(offer)) {
        // The fastest objective's key is the configuration's hours: no price
        // read (the candidate reads it if it is taken).
        const double price =
            fastest_ ? -1
            : stream.prices != nullptr
                ? stream.prices[stream.pos]
                : ListPrice(run_.index_->offers()[offer], run_.options_[stream.option_pos]);
        const double list = price * stream.factor;
        head = {ObjectiveKey(run_.objective_, stream.hours, stream.tokens_per_second, list,
                             list * stream.hours),
                offer,
                stream.step,
                stream.option_pos,
                s,
                price};
        return true;
      }
      ++stream.pos;
    }
    return false;
  }

  RunState& run_;
  const bool fastest_;
  const bool check_names_;
  std::vector<Stream> streams_;
};

}  // namespace

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

std::vector<Ranked> RunState::SelectCandidates(int cap, int64_t& total) {
  if (reference_ != nullptr) return reference_->Select(*this, cap, total);
  StreamMerge merge(*this);
  total = merge.MakeStreams();
  return merge.Take(cap, total);
}

}  // namespace gpuadvisor::gateway::recommend
