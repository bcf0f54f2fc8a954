// Stage 6: what else the caller should know. What-ifs beside the top pick
// (other purchase options, the next GPU class, fewer or more GPUs), the
// nearest misses when nothing qualified, and the detail of each exclusion.

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/io/units.h"
#include "services/gateway/price_provenance.h"
#include "services/gateway/recommend_state.h"
#include "services/gateway/recommend_text.h"

namespace gpuadvisor::gateway::recommend {

using catalog::v1::Offer;
using catalog::v1::PurchaseOption;

void RunState::AddWhatIfs(int top_index, const std::vector<int>& survivors,
                          const pricing::v1::QuoteResponse& quotes,
                          v1::RecommendResponse& response) const {
  const Candidate& top = candidates_[top_index];
  std::vector<char> qualifies(candidates_.size(), 0);  // by candidate index
  for (int index : survivors) qualifies[index] = 1;
  const std::vector<int> order = WhatIfOrder(survivors, qualifies, quotes);
  const std::vector<OfferFacts>& facts = index_->offers();
  const int32_t top_gpu = facts[top.offer_index].gpu;
  const int top_gpus = facts[top.offer_index].gpus_per_node * top.nodes;
  // The first candidate in `order` (the top pick aside) on each axis, found
  // in one pass: the same offer and cluster at each other purchase option
  // (by option), the best of another GPU model at the same option, and the
  // same GPU model with fewer or more GPUs in total.
  constexpr int kOption0 = 0, kNextGpu = 4, kFewer = 5, kMore = 6, kAxes = 7;
  int found[kAxes] = {-1, -1, -1, -1, -1, -1, -1};
  int missing = 3;  // the GPU axes, and each option other than the top pick's
  for (int option = 1; option <= 3; ++option) missing += option != top.option ? 1 : 0;
  for (int index : order) {
    if (index == top_index) continue;
    const Candidate& c = candidates_[index];
    if (c.offer_index == top.offer_index && c.nodes == top.nodes && c.option != top.option &&
        c.option >= 1 && c.option <= 3 && found[kOption0 + static_cast<int>(c.option)] < 0) {
      found[kOption0 + static_cast<int>(c.option)] = index;
      if (--missing == 0) break;
    }
    if (c.option != top.option || c.what_if_only) continue;
    const OfferFacts& f = facts[c.offer_index];
    const int gpus = f.gpus_per_node * c.nodes;
    const int axis = f.gpu != top_gpu  ? kNextGpu
                     : gpus < top_gpus ? kFewer
                     : gpus > top_gpus ? kMore
                                       : -1;
    if (axis >= 0 && found[axis] < 0) {
      found[axis] = index;
      if (--missing == 0) break;
    }
  }
  auto add = [&](const std::string& axis, int index) {
    if (index >= 0) AddWhatIf(axis, index, top_index, qualifies[index] != 0, quotes, response);
  };
  for (PurchaseOption option :
       {catalog::v1::PURCHASE_OPTION_SPOT, catalog::v1::PURCHASE_OPTION_ON_DEMAND,
        catalog::v1::PURCHASE_OPTION_RESERVED}) {
    if (option != top.option) add(OptionName(option), found[kOption0 + static_cast<int>(option)]);
  }
  add("next GPU class", found[kNextGpu]);
  add("fewer GPUs", found[kFewer]);
  add("more GPUs", found[kMore]);
}

// Candidates in rank order: survivors first (already sorted), then the rest
// of the quoted by total cost.
std::vector<int> RunState::WhatIfOrder(const std::vector<int>& survivors,
                                       const std::vector<char>& qualifies,
                                       const pricing::v1::QuoteResponse& quotes) const {
  auto priced = [&](int index) {
    const Candidate& c = candidates_[index];
    return c.quote >= 0 && quotes.quotes(c.quote).priced() &&
           RankableQuote(quotes.quotes(c.quote), Est(c.config));  // no NaN into the sort
  };
  std::vector<int> order(survivors.begin(), survivors.end());
  std::vector<int> rest;
  // Read once per candidate, not per comparison.
  std::vector<double> total_usd(candidates_.size(), 0);
  for (int index : quoted_) {
    if (!qualifies[index] && priced(index)) {
      rest.push_back(index);
      total_usd[index] = quotes.quotes(candidates_[index].quote).cost().total_usd();
    }
  }
  std::sort(rest.begin(), rest.end(), [&](int a, int b) { return total_usd[a] < total_usd[b]; });
  order.insert(order.end(), rest.begin(), rest.end());
  return order;
}

void RunState::AddWhatIf(const std::string& axis, int index, int top_index, bool qualifies,
                         const pricing::v1::QuoteResponse& quotes,
                         v1::RecommendResponse& response) const {
  const pricing::v1::CostBreakdown& top_cost = quotes.quotes(candidates_[top_index].quote).cost();
  const Candidate& c = candidates_[index];
  const pricing::v1::Quote& q = quotes.quotes(c.quote);
  v1::WhatIf* w = response.add_what_if();
  w->set_axis(axis);
  const Offer& offer = OfferOf(c);
  *w->mutable_offer() = offer;
  w->mutable_offer()->set_nodes(c.nodes);
  w->set_purchase_option(c.option);
  w->set_total_usd(q.cost().total_usd());
  w->set_hours(q.cost().expected_hours());
  w->set_delta_usd(q.cost().total_usd() - top_cost.total_usd());
  w->set_delta_hours(q.cost().expected_hours() - top_cost.expected_hours());
  w->set_preemption_usd(q.cost().preemption_usd());
  // A what-if-only quote (reserved) was never filtered: check it here.
  const v1::Constraints& k = request_.constraints();
  w->set_qualifies(qualifies ||
                   (c.what_if_only &&
                    !(k.max_usd_per_hour() > 0 && q.cost().usd_per_hour() > k.max_usd_per_hour()) &&
                    !(k.max_total_usd() > 0 && q.cost().total_usd() > k.max_total_usd()) &&
                    !(k.deadline_hours() > 0 && q.cost().expected_hours() > k.deadline_hours())));
  const double pct = top_cost.total_usd() > 0 ? 100.0 * w->delta_usd() / top_cost.total_usd() : 0;
  std::string text =
      absl::StrCat(axis, ": ", offer.provider(), " ", offer.instance_type(), " x", c.nodes, " ",
                   OptionName(c.option), ", $", Fixed(w->total_usd(), 2), " in total (",
                   w->delta_usd() < 0 ? "-" : "+", "$", Fixed(std::abs(w->delta_usd()), 2), ", ",
                   SignedFixed(pct, 0), "%), ", Fixed(w->hours(), 1), " h (",
                   SignedFixed(w->delta_hours(), 1), " h)");
  if (c.option == catalog::v1::PURCHASE_OPTION_SPOT) {
    absl::StrAppend(&text, "; expected preemption loss $", Fixed(w->preemption_usd(), 2),
                    " included");
  }
  if (c.option == catalog::v1::PURCHASE_OPTION_RESERVED && q.has_commitment()) {
    absl::StrAppend(&text, "; commitment: ", q.commitment().name(), ", ",
                    Fixed(q.committed_hours(), 0),
                    " h per node paid for the whole term whether used or not");
  }
  if (!w->qualifies()) text += "; does not meet every constraint";
  w->set_summary(std::move(text));
}

void RunState::AddNearestMisses(v1::RecommendResponse& response) const {
  for (const auto& [key, miss] : misses_) {
    // Memory is not a constraint the caller set: the closest fit is news
    // only when nothing fit at all.
    if (key == "fit" && misses_.size() > 1) continue;
    v1::NearestMiss* m = response.add_nearest_misses();
    const Candidate* candidate = miss.candidate >= 0 ? &candidates_[miss.candidate] : nullptr;
    const sizing::v1::ConfigurationEstimate* e = miss.config >= 0 ? &Est(miss.config) : nullptr;
    const Offer& offer = catalog_->snapshot().offers(miss.offer_index);
    m->set_offer_id(offer.id());
    m->set_nodes(candidate != nullptr ? candidate->nodes
                 : e != nullptr       ? e->configuration().nodes()
                                      : 1);
    if (candidate != nullptr) m->set_purchase_option(candidate->option);
    m->set_value(miss.value);
    const std::string who =
        absl::StrCat(offer.id(), " at ", m->nodes(), m->nodes() == 1 ? " node" : " nodes");
    DescribeMiss(key, miss, who, e, m);
  }
}

void RunState::DescribeMiss(const std::string& key, const Miss& miss, const std::string& who,
                            const sizing::v1::ConfigurationEstimate* e, v1::NearestMiss* m) const {
  const v1::Constraints& c = request_.constraints();
  if (key == "total_usd") {
    m->set_reason(v1::EXCLUSION_REASON_OVER_BUDGET);
    m->set_limit(c.max_total_usd());
    m->set_summary(absl::StrFormat(
        "the cheapest that fits costs $%.2f, $%.2f over your max_total_usd of $%.2f (%s)",
        miss.value, miss.value - c.max_total_usd(), c.max_total_usd(), who));
  } else if (key == "usd_per_hour") {
    m->set_reason(v1::EXCLUSION_REASON_OVER_BUDGET);
    m->set_limit(c.max_usd_per_hour());
    m->set_summary(absl::StrFormat(
        "the lowest hourly price that fits is $%.2f/h, $%.2f/h over your max_usd_per_hour "
        "of $%.2f (%s)",
        miss.value, miss.value - c.max_usd_per_hour(), c.max_usd_per_hour(), who));
  } else if (key == "deadline") {
    m->set_reason(v1::EXCLUSION_REASON_MISSES_DEADLINE);
    m->set_limit(c.deadline_hours());
    m->set_summary(absl::StrFormat(
        "the fastest that fits takes %.1f h, %.1f h over your deadline of %.1f h (%s)", miss.value,
        miss.value - c.deadline_hours(), c.deadline_hours(), who));
  } else if (key == "tokens_per_second") {
    m->set_reason(v1::EXCLUSION_REASON_TOO_SLOW);
    m->set_limit(c.min_tokens_per_second());
    m->set_summary(absl::StrFormat(
        "the fastest that fits reaches %.0f tokens/s, %.0f short of your "
        "min_tokens_per_second of %.0f (%s)",
        miss.value, c.min_tokens_per_second() - miss.value, c.min_tokens_per_second(), who));
  } else if (key == "per_user") {
    m->set_reason(v1::EXCLUSION_REASON_TOO_SLOW);
    m->set_limit(min_user_tps_);
    m->set_summary(absl::StrFormat(
        "the fastest per user is %.1f tokens/s, %.1f short of %s of %.1f (%s)", miss.value,
        min_user_tps_ - miss.value, MinUserTpsName(), min_user_tps_, who));
  } else if (key == "ttft") {
    m->set_reason(v1::EXCLUSION_REASON_TOO_SLOW);
    m->set_limit(c.max_time_to_first_token_seconds());
    m->set_summary(
        absl::StrFormat("the quickest first token takes %.2f s, %.2f s over your "
                        "max_time_to_first_token_seconds of %.2f (%s)",
                        miss.value, miss.value - c.max_time_to_first_token_seconds(),
                        c.max_time_to_first_token_seconds(), who));
  } else if (key == "fit" && e != nullptr) {
    m->set_reason(v1::EXCLUSION_REASON_DOES_NOT_FIT);
    m->set_limit(vram_margin_);
    m->set_summary(absl::StrFormat("the closest fit needs %s per GPU on %s GPUs (%s)",
                                   FormatGb(e->memory().total_bytes()),
                                   FormatGb(e->gpu_memory_bytes()), who));
  }
}

std::string RunState::ExclusionDetail(int offer_index, v1::ExclusionReason reason, int config,
                                      int candidate,
                                      const pricing::v1::QuoteResponse& quotes) const {
  const OfferFacts& f = index_->offers()[offer_index];
  const v1::Constraints& c = request_.constraints();
  const sizing::v1::ConfigurationEstimate* e =
      config >= 0 && config < static_cast<int>(estimates_.size()) ? &Est(config) : nullptr;
  const pricing::v1::Quote* q = nullptr;
  if (candidate >= 0 && candidates_[candidate].quote >= 0 &&
      candidates_[candidate].quote < quotes.quotes_size()) {
    q = &quotes.quotes(candidates_[candidate].quote);
  }
  const int nodes = e != nullptr     ? e->configuration().nodes()
                    : candidate >= 0 ? candidates_[candidate].nodes
                                     : 1;
  const std::string at = absl::StrCat(nodes, nodes == 1 ? " node" : " nodes");
  const std::string cap = absl::StrCat(" (cluster cap: ", NodeCapText(f), ")");
  switch (reason) {
    case v1::EXCLUSION_REASON_FILTERED:
      return FilteredDetail(offer_index);
    case v1::EXCLUSION_REASON_NOT_MODELLED:
      return absl::StrCat(catalog_->snapshot().offers(offer_index).gpu_model(),
                          " is not a GPU (TPU, Trainium or Gaudi): sizing does not model its "
                          "memory, parallel plans or throughput, so it is left out");
    case v1::EXCLUSION_REASON_UNAVAILABLE:
      if (const catalog::v1::Offer& o = catalog_->snapshot().offers(offer_index);
          !SeenRecently(o, absl::Now())) {
        return NotSeenText(o, absl::Now());
      }
      return "the catalog marks it unavailable";
    case v1::EXCLUSION_REASON_SUSPECT_PRICE:
      return SuspectPriceDetail(catalog_->snapshot().offers(offer_index), options_);
    case v1::EXCLUSION_REASON_TOO_MANY_GPUS:
      return absl::StrCat(f.gpus_per_node,
                          " GPUs per node > constraints.max_gpus = ", c.max_gpus());
    case v1::EXCLUSION_REASON_NO_FABRIC:
      return "fits only across several nodes, and this offer has no inter-node fabric";
    case v1::EXCLUSION_REASON_DOES_NOT_FIT:
      if (e == nullptr) break;
      return absl::StrCat(
          "needs ", Fixed(e->memory().total_bytes() / 1e9, 1), " GB per GPU, has ",
          Fixed(e->gpu_memory_bytes() / 1e9, 1), " GB with a ", Fixed(100 * vram_margin_, 0),
          "% margin, even at ", at, cap,
          e->not_fit_reason().empty() ? "" : absl::StrCat(": ", e->not_fit_reason()));
    case v1::EXCLUSION_REASON_TOO_SLOW:
      if (e == nullptr) break;
      return TooSlowDetail(*e, at);
    case v1::EXCLUSION_REASON_MISSES_DEADLINE:
      if (q != nullptr) {
        return absl::StrFormat("%.1f h with expected preemption losses at %s > deadline %.1f h",
                               q->cost().expected_hours(), at, c.deadline_hours());
      }
      if (e == nullptr) break;
      return absl::StrFormat("%.1f h at %s > deadline %.1f h", e->estimated_hours(), at,
                             c.deadline_hours()) +
             cap;
    case v1::EXCLUSION_REASON_RUNS_TOO_LONG:
      if (e == nullptr) break;
      return absl::StrFormat("estimated %.3g h at %s, beyond the %.0e h pricing quotes",
                             e->estimated_hours(), at, kMaxQuotableHours) +
             cap;
    case v1::EXCLUSION_REASON_NOT_PRICED:
      if (q == nullptr) break;
      return absl::StrCat("pricing: ", q->unpriced_reason());
    case v1::EXCLUSION_REASON_OVER_BUDGET:
      if (q == nullptr) break;
      if (c.max_usd_per_hour() > 0 && q->cost().usd_per_hour() > c.max_usd_per_hour()) {
        return absl::StrFormat("$%.2f/h > constraints.max_usd_per_hour $%.2f",
                               q->cost().usd_per_hour(), c.max_usd_per_hour());
      }
      return absl::StrFormat("$%.2f in total > constraints.max_total_usd $%.2f",
                             q->cost().total_usd(), c.max_total_usd());
    default:
      break;
  }
  return "";
}

std::string RunState::TooSlowDetail(const sizing::v1::ConfigurationEstimate& e,
                                    const std::string& at) const {
  const v1::Constraints& c = request_.constraints();
  if (c.min_tokens_per_second() > 0 && e.tokens_per_second() < c.min_tokens_per_second()) {
    return absl::StrFormat("%.0f tokens/s at %s < constraints.min_tokens_per_second = %.0f",
                           e.tokens_per_second(), at, c.min_tokens_per_second());
  }
  const v1::ServingEstimate s = Serving(e, 0, 0);
  if (c.max_time_to_first_token_seconds() > 0 &&
      !(s.time_to_first_token_seconds() <= c.max_time_to_first_token_seconds())) {
    return absl::StrFormat(
        "first token in %.2f s at %s > constraints.max_time_to_first_token_seconds = %.2f",
        s.time_to_first_token_seconds(), at, c.max_time_to_first_token_seconds());
  }
  return absl::StrFormat("%.1f tokens/s per user at %s < %s = %.1f", s.tokens_per_second_per_user(),
                         at, MinUserTpsName(), min_user_tps_);
}

}  // namespace gpuadvisor::gateway::recommend
