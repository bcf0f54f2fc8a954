// Stage 4c: what the answer says about its choice. Each deadline and budget
// check at the answer's confidence, and the head: the cheapest, the fastest
// and the best cost x time option with their deltas against the top pick,
// and why the top pick ranks first under the objective's tie rule.

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "services/gateway/recommend_state.h"
#include "services/gateway/recommend_text.h"

namespace gpuadvisor::gateway::recommend {
namespace {

std::string Hours(double hours) { return absl::StrCat(Fixed(hours, hours < 10 ? 2 : 1), " h"); }

std::string Usd(double usd) { return absl::StrCat("$", Fixed(usd, 2)); }

std::string Signed(double value, const std::string& unit_before, const std::string& unit_after,
                   int precision) {
  return absl::StrCat(value < 0 ? "-" : "+", unit_before, Fixed(std::abs(value), precision),
                      unit_after);
}

}  // namespace

double NormalQuantile(double q) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

void RunState::AddChecks(const Candidate& candidate, const pricing::v1::Quote& quote,
                         v1::Recommendation& r) const {
  const v1::Constraints& c = request_.constraints();
  if (c.deadline_hours() <= 0 && c.max_total_usd() <= 0) return;
  const std::string p = absl::StrCat("P", Fixed(100 * confidence_, 0));
  const std::string with = absl::StrCat(Fixed(100 * confidence_, 0), "% confidence");
  const bool interval = r.has_estimated_hours_interval();
  const std::string basis = interval ? "" : "; sizing gave no interval: checked on the estimate";
  if (c.deadline_hours() > 0) {
    v1::ConstraintCheck* check = r.add_checks();
    const double hours = ExpectedHoursAt(candidate, quote, confidence_z_);
    check->set_constraint("deadline_hours");
    check->set_limit(c.deadline_hours());
    check->set_confidence(confidence_);
    check->set_value(hours);
    check->set_met(hours <= c.deadline_hours());
    check->set_text(absl::StrCat(check->met() ? "meets " : "misses ", Hours(c.deadline_hours()),
                                 check->met() ? " with " : " at ", with, " (", p, " ", Hours(hours),
                                 basis, ")"));
    r.add_reasons(absl::StrCat("deadline: ", check->text()));
  }
  if (c.max_total_usd() > 0) {
    v1::ConstraintCheck* check = r.add_checks();
    const double usd = TotalUsdAt(candidate, quote, confidence_z_);
    check->set_constraint("max_total_usd");
    check->set_limit(c.max_total_usd());
    check->set_confidence(confidence_);
    check->set_value(usd);
    check->set_met(usd <= c.max_total_usd());
    check->set_text(absl::StrCat(check->met() ? "within " : "over ", Usd(c.max_total_usd()),
                                 check->met() ? " with " : " at ", with, " (", p, " ", Usd(usd),
                                 basis, ")"));
    r.add_reasons(absl::StrCat("budget: ", check->text()));
  }
}

void RunState::AddHead(const std::vector<int>& survivors, const std::vector<int>& chosen,
                       const pricing::v1::QuoteResponse& quotes,
                       v1::RecommendResponse& response) const {
  if (survivors.empty() || chosen.empty()) return;
  auto cost = [&](int index) -> const pricing::v1::CostBreakdown& {
    return quotes.quotes(candidates_[index].quote).cost();
  };
  // The first in rank order with the smallest measure, for the three
  // measures in one pass over the survivors.
  struct Best {
    int index;
    double measure;
    void Keep(int i, double m) {
      if (m < measure) *this = {i, m};
    }
  };
  const pricing::v1::CostBreakdown& first = cost(survivors.front());
  Best cheapest{survivors.front(), first.total_usd()};
  Best fastest{survivors.front(), first.expected_hours()};
  Best cost_time{survivors.front(), first.total_usd() * first.expected_hours()};
  // The objective's own measure (ObjectiveKey): total cost and hours are
  // kept above; only best value needs a fourth.
  const bool value = objective_ == v1::OBJECTIVE_BEST_VALUE;
  auto value_key = [&](int index) {
    const pricing::v1::CostBreakdown& c = cost(index);
    return ObjectiveKey(objective_, c.expected_hours(),
                        Est(candidates_[index].config).tokens_per_second(), c.usd_per_hour(),
                        c.total_usd());
  };
  Best best_value{survivors.front(), value ? value_key(survivors.front()) : 0};
  for (int index : survivors) {
    const pricing::v1::CostBreakdown& c = cost(index);
    cheapest.Keep(index, c.total_usd());
    fastest.Keep(index, c.expected_hours());
    cost_time.Keep(index, c.total_usd() * c.expected_hours());
    if (value) best_value.Keep(index, value_key(index));
  }
  const int anchor = objective_ == v1::OBJECTIVE_FASTEST ? fastest.index
                     : value                             ? best_value.index
                                                         : cheapest.index;
  const int top = chosen.front();
  v1::AnswerHead* head = response.mutable_head();
  auto fill = [&](int index, v1::HeadOption* option) {
    const Candidate& c = candidates_[index];
    const auto it = std::find(chosen.begin(), chosen.end(), index);
    option->set_rank(it == chosen.end() ? 0 : static_cast<int32_t>(it - chosen.begin()) + 1);
    option->set_offer_id(std::string(index_->id(c.offer_index)));
    option->set_nodes(c.nodes);
    option->set_purchase_option(c.option);
    option->set_total_usd(cost(index).total_usd());
    option->set_hours(cost(index).expected_hours());
    option->set_delta_usd(cost(index).total_usd() - cost(top).total_usd());
    option->set_delta_hours(cost(index).expected_hours() - cost(top).expected_hours());
  };
  fill(cheapest.index, head->mutable_cheapest());
  fill(fastest.index, head->mutable_fastest());
  fill(cost_time.index, head->mutable_best_cost_time());
  auto describe = [&](const char* name, const v1::HeadOption& o) {
    const std::string who =
        absl::StrCat(o.rank() > 0 ? absl::StrCat("#", o.rank(), " ") : "", o.offer_id(), " x",
                     o.nodes(), " ", OptionName(o.purchase_option()));
    if (o.rank() == 1)
      return absl::StrCat(name, ": #1 itself (", Usd(o.total_usd()), ", ", Hours(o.hours()), ")");
    return absl::StrCat(name, ": ", who, ", ", Usd(o.total_usd()), ", ", Hours(o.hours()), " (",
                        Signed(o.delta_usd(), "$", "", 2), ", ",
                        Signed(o.delta_hours(), "", " h", 2), " vs #1)");
  };
  head->set_why_first(WhyFirst(top, anchor, quotes));
  head->set_summary(absl::StrCat(describe("cheapest", head->cheapest()), "; ",
                                 describe("fastest", head->fastest()), "; ",
                                 describe("best cost x time", head->best_cost_time())));
  response.mutable_recommendations(0)->add_reasons(
      absl::StrCat("ranked first: ", head->why_first()));
  response.mutable_recommendations(0)->add_reasons(head->summary());
}

// Why the top pick is first: the best measure, or a tie with the best
// broken by the next measure or by risk.
std::string RunState::WhyFirst(int top, int anchor,
                               const pricing::v1::QuoteResponse& quotes) const {
  auto quote = [&](int i) -> const pricing::v1::Quote& {
    return quotes.quotes(candidates_[i].quote);
  };
  const bool fastest = objective_ == v1::OBJECTIVE_FASTEST;
  const bool value = objective_ == v1::OBJECTIVE_BEST_VALUE;
  auto primary = [&](int i) {
    const pricing::v1::CostBreakdown& c = quote(i).cost();
    return ObjectiveKey(objective_, c.expected_hours(),
                        Est(candidates_[i].config).tokens_per_second(), c.usd_per_hour(),
                        c.total_usd());
  };
  auto show = [&](int i) {
    const pricing::v1::CostBreakdown& c = quote(i).cost();
    if (fastest) return Hours(c.expected_hours());
    if (value) return absl::StrCat(Fixed(-primary(i), 1), " tokens/s per USD/h");
    return Usd(c.total_usd());
  };
  const char* measure = fastest ? "expected hours" : value ? "value" : "total cost";
  const std::string band = absl::StrCat(
      "the ", Percent(tie_band_used_), " tie band (",
      tie_band_ >= 0 ? "your tie_band_fraction" : "the estimate's own uncertainty", ")");
  if (anchor == top || primary(anchor) == primary(top)) {
    // Under half a percent the band prints as 0%: strict in effect (a
    // reserved term's cost, for one, barely moves with the hours).
    if (tie_band_used_ < 0.005) {
      const bool none = tie_band_used_ <= 0;
      const char* why =
          tie_band_ >= 0
              ? (none ? "your tie_band_fraction is 0" : "your tie_band_fraction is under 0.5%")
              : (none ? "the estimate gives this measure no spread"
                      : "the estimate's spread of this measure is under 0.5%");
      return absl::StrCat("the best ", measure, " (", show(top), "), in a strict order (", why,
                          ")");
    }
    return absl::StrCat("the best ", measure, " (", show(top), "); options within ", band,
                        " would rank by ", fastest ? "total cost" : "expected hours",
                        ", then risk");
  }
  const double gap = std::abs(primary(top) - primary(anchor)) / std::abs(primary(anchor));
  std::string why = absl::StrCat(show(top), ", ", Percent(gap), value ? " below" : " above",
                                 " the best ", measure, " (", show(anchor), "), is within ", band);
  const pricing::v1::CostBreakdown& t = quote(top).cost();
  const pricing::v1::CostBreakdown& a = quote(anchor).cost();
  const double t2 = fastest ? t.total_usd() : t.expected_hours();
  const double a2 = fastest ? a.total_usd() : a.expected_hours();
  if (t2 < a2 && !(a2 <= t2 + tie_band_used_ * std::abs(t2))) {
    absl::StrAppend(&why, ", and it ",
                    fastest ? "costs less: " : "finishes sooner: ", fastest ? Usd(t2) : Hours(t2),
                    " vs ", fastest ? Usd(a2) : Hours(a2));
    if (!fastest) absl::StrAppend(&why, " (", Fixed(a2 / std::max(t2, 1e-9), 1), "x sooner)");
  } else {
    std::vector<std::string> risks;
    const int anchor_risk = RiskOf(candidates_[anchor], quote(anchor), &risks);
    absl::StrAppend(&why,
                    ", and it carries less risk: ", RiskOf(candidates_[top], quote(top), nullptr),
                    " risk factor(s) vs ", anchor_risk,
                    risks.empty() ? "" : absl::StrCat(" (", absl::StrJoin(risks, "; "), ")"));
  }
  return why;
}

}  // namespace gpuadvisor::gateway::recommend
