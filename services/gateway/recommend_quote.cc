// Stage 3: the quote plan. The pre-ranked candidates become quote items (with
// the provider's overhead hours), the job profile carries what pricing needs
// beyond the hardware (dataset, checkpoints, restartability, egress), and a
// few reserved what-ifs are quoted beside them.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "services/gateway/recommend_state.h"
#include "services/gateway/recommend_text.h"
#include "services/gateway/small_table.h"
#include "services/gateway/workload_defaults.h"

namespace gpuadvisor::gateway::recommend {

using catalog::v1::PurchaseOption;

absl::StatusOr<RecommendationRun::QuotePlan> RunState::PlanQuote(
    sizing::v1::EstimateResponse estimates, const QuoteClasses* quote_classes) {
  RETURN_IF_ERROR(RecordEstimates(std::move(estimates)));
  quote_classes_ = quote_classes;
  AddSizedAssumptions(request_.workload(), *sized_, assumptions_);
  KeepFitting();
  // Pre-rank by list price so one Quote stays small even for a huge catalog.
  const int cap = std::max(kMinQuotedCandidates, kQuotedPerResult * max_results_);
  int64_t total = 0;
  std::vector<Ranked> ranked = SelectCandidates(cap, total);
  AddCheaperInBook(ranked);
  MakeCandidates(ranked);

  RecommendationRun::QuotePlan plan;
  PlanJob(plan.job);
  quoted_.resize(candidates_.size());
  for (int i = 0; i < static_cast<int>(quoted_.size()); ++i) quoted_[i] = i;
  AddReservedWhatIfs();
  plan.items.reserve(quoted_.size());
  std::vector<int> quotable;
  quotable.reserve(quoted_.size());
  for (int candidate_index : quoted_) {
    Candidate& candidate = candidates_[candidate_index];
    candidate.overhead_hours =
        overheads_ != nullptr ? overheads_->TotalHours(OverheadRuleOf(candidate), RunOf(candidate))
                              : 0;
    const double hours = Est(candidate.config).estimated_hours() + candidate.overhead_hours;
    // The provider's overheads (moving a huge dataset in) can carry a run past
    // what pricing quotes: this candidate's problem, never the request's.
    if (!(hours <= kMaxQuotableHours)) {
      if (!candidate.what_if_only) {
        ExcludeQuoted(candidate, candidate_index, v1::EXCLUSION_REASON_RUNS_TOO_LONG);
      }
      continue;
    }
    candidate.quote = static_cast<int>(plan.items.size());
    plan.items.push_back({.offer_id = index_->id(candidate.offer_index),
                          .nodes = candidate.nodes + candidate.spare_nodes,
                          .hours = hours,
                          .purchase_option = candidate.option,
                          .book_index = candidate.offer_index});
    quotable.push_back(candidate_index);
  }
  quoted_ = std::move(quotable);
  return plan;
}

void RunState::MakeCandidates(const std::vector<Ranked>& ranked) {
  candidates_.reserve(ranked.size() + 4);
  quoted_offers_.reserve(ranked.size());
  // Offer index -> its place in quoted_offers_ (-1: none yet).
  struct Place {
    int index = -1;
  };
  SmallTable<Place, int32_t> places(ranked.size());
  for (const Ranked& r : ranked) {
    const PurchaseOption option = options_[r.option_pos];
    const int32_t nodes = int32_t{1} << r.step;
    const int32_t spare = SpareOf(option);
    const double list_price = ListPriceOf(r);
    // Made in place, field by field: a candidate is 64 bytes, copied once per
    // candidate otherwise (and clang does not build an aggregate from
    // emplace_back's arguments).
    Candidate& candidate = candidates_.emplace_back();
    candidate.offer_index = r.offer;
    candidate.unit = r.unit;
    candidate.nodes = nodes;
    candidate.option = option;
    candidate.config = r.config;
    candidate.list_usd_per_hour = list_price * (nodes + spare);
    candidate.spare_nodes = spare;
    int& place = places[r.offer].index;
    if (place < 0) {
      // An offer's pre-pricing exclusion is its unit's.
      const Unit& unit = units_[r.unit];
      place = static_cast<int>(quoted_offers_.size());
      quoted_offers_.push_back(
          {.offer = r.offer, .unit = r.unit, .reason = unit.reason, .config = unit.config});
    }
    candidate.quoted_offer = place;
    ++quoted_offers_[place].quoted;
  }
}

void RunState::PlanJob(pricing::v1::JobProfile& job) {
  const sizing::v1::Workload& w = request_.workload();
  const sizing::v1::WorkloadTotals& totals = sized_->totals();
  job.set_dataset_gb(w.dataset_gb());
  job.set_checkpoint_gb(training_ ? totals.checkpoint_bytes() / 1e9 : 0);
  job.set_checkpoint_interval_minutes(w.checkpoint_interval_minutes());
  // An endpoint is always on: priced for its serving hours whatever the
  // option. On spot (asked for explicitly) it runs with a spare node, so a
  // preemption costs a replacement's start-up, not the run: pricing's
  // restartable model, without its non-restartable and endpoint warnings
  // (the gateway states the spare instead).
  job.set_restartable(always_on_ ? true : restartable_);
  job.set_always_on(false);
  job.set_egress_gb(PlanEgressGb());
  egress_gb_ = job.egress_gb();
  // Commitment terms for reserved quotes (asked for or what-ifs): up to the
  // years asked, 1 year when unset (stated in ChoosePurchaseOptions); a
  // year is 8,760 h (365 days, as providers count a 1-year term).
  const v1::Constraints& c = request_.constraints();
  pricing::v1::CommitmentLimits& limits = *job.mutable_commitment();
  limits.set_max_term_hours((c.has_max_commitment_years() ? c.max_commitment_years() : 1) * 8760);
  for (int u : c.upfront_payments())
    limits.add_upfront(static_cast<catalog::v1::UpfrontPayment>(u));
}

// What leaves the cloud, priced with the provider's egress rule: the
// caller's figure, else trained weights (16-bit; the adapter for LoRA) or
// the generated text of a batch job (~4 bytes a token), stated.
double RunState::PlanEgressGb() {
  const sizing::v1::Workload& w = request_.workload();
  if (w.has_egress_gb()) return w.egress_gb();
  double derived = 0;
  std::string what =
      "an endpoint's responses leave through its own serving traffic: not priced here";
  if (training_) {
    derived = sized_->totals().trainable_params() * 2 / 1e9;
    what = "the trained weights at 16 bits (the adapter for LoRA/QLoRA), downloaded once";
  } else if (w.task() == sizing::v1::TASK_BATCH_INFERENCE) {
    derived = w.requests() * std::max(w.output_tokens(), 1) * 4 / 1e9;
    what = "the generated text, about 4 bytes per output token";
  }
  assumptions_.push_back(MakeAssumption(
      "workload.egress_gb", Gigabytes(derived),
      absl::StrCat(what,
                   "; priced at each provider's egress rate after its free allowance "
                   "(set workload.egress_gb, --egress_gb, to say what moves out)")));
  return derived;
}

// What-if: reserved prices for the best few (offer, nodes) by list price,
// when the caller did not ask for reserved; quoted, never ranked.
void RunState::AddReservedWhatIfs() {
  if (std::find(options_.begin(), options_.end(), catalog::v1::PURCHASE_OPTION_RESERVED) !=
      options_.end()) {
    return;
  }
  constexpr int kReservedWhatIfs = 3;
  std::vector<std::pair<int, int32_t>> seen;
  const size_t n = quoted_.size();
  for (size_t i = 0; i < n && static_cast<int>(seen.size()) < kReservedWhatIfs; ++i) {
    const Candidate base = candidates_[quoted_[i]];
    if (base.spare_nodes > 0) continue;
    if (std::find(seen.begin(), seen.end(), std::make_pair(base.offer_index, base.nodes)) !=
        seen.end())
      continue;
    seen.emplace_back(base.offer_index, base.nodes);
    Candidate reserved = base;
    reserved.option = catalog::v1::PURCHASE_OPTION_RESERVED;
    reserved.what_if_only = true;
    quoted_.push_back(static_cast<int>(candidates_.size()));
    candidates_.push_back(reserved);
  }
}

RunData RunState::RunOf(const Candidate& candidate) const {
  const sizing::v1::Workload& w = request_.workload();
  const sizing::v1::WorkloadTotals& totals = sized_->totals();
  RunData run;
  run.run_hours = Est(candidate.config).estimated_hours();
  run.weights_gb = totals.weights_bytes() / 1e9;
  run.dataset_gb = w.dataset_gb();
  run.network_gbps = index_->offers()[candidate.offer_index].network_gbps;
  return run;
}

}  // namespace gpuadvisor::gateway::recommend
