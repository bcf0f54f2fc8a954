#include "services/pricing/commitment.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace gpuadvisor::pricing {
namespace {

namespace cv1 = ::gpuadvisor::catalog::v1;

constexpr double kHoursPerYear = 8760;
constexpr double kHoursPerMonth = 730;  // 8760 / 12: how providers count a month of a term

bool UpTo(const cv1::CommitmentTerm& term) { return term.bound() == cv1::PRICE_BOUND_UP_TO; }

bool Allowed(const cv1::CommitmentTerm& term, const v1::CommitmentLimits& limits) {
  if (limits.has_max_term_hours() && term.term_hours() > limits.max_term_hours()) return false;
  if (limits.upfront_size() == 0) return true;
  return std::find(limits.upfront().begin(), limits.upfront().end(), term.upfront()) !=
         limits.upfront().end();
}

// The bare reserved price (or the rule's discount) under the rule's
// reserved_price_term; false with the reason when there is no such price or
// no term for it.
bool BareTerm(const v1::OfferPrice& price, const v1::BillingRule& rule, cv1::CommitmentTerm* out,
              std::string* reason) {
  double hourly = price.reserved_usd_per_hour();
  if (hourly <= 0 && rule.reserved_discount() > 0) {
    hourly = price.on_demand_usd_per_hour() * (1.0 - rule.reserved_discount());
  }
  if (hourly <= 0) {
    *reason = "no reserved price published and no commitment discount stated";
    return false;
  }
  if (!rule.has_reserved_price_term()) {
    *reason = absl::StrFormat(
        "reserved price $%.2f/h published without its term: not quoted (the term decides what a "
        "job pays; docs/pricing.md, \"Commitment terms\")",
        hourly);
    return false;
  }
  *out = rule.reserved_price_term();
  const double term_usd = hourly * out->term_hours();
  if (out->upfront() == cv1::UPFRONT_PAYMENT_ALL) {
    out->set_upfront_usd(term_usd);
  } else {
    out->set_usd_per_hour(hourly);
  }
  return true;
}

std::string LimitsText(const v1::CommitmentLimits& limits) {
  std::vector<std::string> parts;
  if (limits.has_max_term_hours()) {
    parts.push_back(limits.max_term_hours() > 0
                        ? absl::StrCat("terms up to ", TermLengthText(limits.max_term_hours()))
                        : std::string("no commitment term"));
  }
  if (limits.upfront_size() > 0) {
    std::vector<std::string> names;
    for (int u : limits.upfront()) {
      cv1::CommitmentTerm t;
      t.set_upfront(static_cast<cv1::UpfrontPayment>(u));
      names.push_back(UpfrontText(t));
    }
    parts.push_back(absl::StrJoin(names, " or "));
  }
  return absl::StrJoin(parts, ", ");
}

// The reason when no exact term was quotable: the "up to" ceilings, or the
// limits that left every exact term out.
std::string NoTermReason(const std::vector<const cv1::CommitmentTerm*>& up_to,
                         const std::vector<const cv1::CommitmentTerm*>& outside,
                         const v1::OfferPrice& price, const v1::CommitmentLimits& limits) {
  if (!outside.empty()) {
    const cv1::CommitmentTerm& t = *outside.front();
    return absl::StrCat("reserved: no commitment term within the limits asked (",
                        LimitsText(limits), "): ", t.name(), " is ", TermLengthText(t.term_hours()),
                        ", ", UpfrontText(t));
  }
  const cv1::CommitmentTerm& t = *up_to.front();
  std::string text =
      absl::StrFormat("reserved: only an \"up to %.0f%% off\" figure is published (%s",
                      100 * t.discount_fraction(), t.name());
  if (t.term_hours() > 0) absl::StrAppend(&text, ", ", TermLengthText(t.term_hours()));
  absl::StrAppend(&text, "; ", t.source(), "): a ceiling, not a price, so not quoted");
  if (price.on_demand_usd_per_hour() > 0) {
    absl::StrAppend(&text,
                    absl::StrFormat(" (at best $%.2f/h against $%.2f/h on demand)",
                                    price.on_demand_usd_per_hour() * (1.0 - t.discount_fraction()),
                                    price.on_demand_usd_per_hour()));
  }
  return text;
}

}  // namespace

double TermUsd(const cv1::CommitmentTerm& term, double on_demand_usd_per_hour) {
  if (term.usd_per_hour() > 0 || term.upfront_usd() > 0) {
    return term.upfront_usd() + term.usd_per_hour() * term.term_hours();
  }
  return on_demand_usd_per_hour * (1.0 - term.discount_fraction()) * term.term_hours();
}

std::string TermLengthText(double h) {
  auto whole = [](double v) { return std::abs(v - std::round(v)) < 1e-9 && v >= 1; };
  if (whole(h / kHoursPerYear)) {
    const int n = static_cast<int>(std::round(h / kHoursPerYear));
    return absl::StrCat(n, n == 1 ? " year" : " years");
  }
  if (whole(h / kHoursPerMonth)) {
    const int n = static_cast<int>(std::round(h / kHoursPerMonth));
    return absl::StrCat(n, n == 1 ? " month" : " months");
  }
  if (whole(h / 24)) {
    const int n = static_cast<int>(std::round(h / 24));
    return absl::StrCat(n, n == 1 ? " day" : " days");
  }
  return absl::StrFormat("%.0f h", h);
}

std::string UpfrontText(const cv1::CommitmentTerm& term) {
  switch (term.upfront()) {
    case cv1::UPFRONT_PAYMENT_NONE:
      return "no upfront";
    case cv1::UPFRONT_PAYMENT_PARTIAL:
      return term.upfront_usd() > 0 ? absl::StrFormat("partial upfront ($%.2f)", term.upfront_usd())
                                    : std::string("partial upfront");
    case cv1::UPFRONT_PAYMENT_ALL:
      return term.upfront_usd() > 0 ? absl::StrFormat("all upfront ($%.2f)", term.upfront_usd())
                                    : std::string("all upfront");
    default:
      return "upfront not stated";
  }
}

std::optional<CommitmentChoice> ChooseCommitment(const v1::OfferPrice& price,
                                                 const v1::BillingRule& rule,
                                                 const v1::CommitmentLimits& limits,
                                                 double work_hours, std::string* reason) {
  const auto& terms = price.commitments_size() > 0 ? price.commitments() : rule.commitments();
  cv1::CommitmentTerm bare;
  std::vector<const cv1::CommitmentTerm*> exact, up_to, outside;
  if (terms.empty()) {
    if (!BareTerm(price, rule, &bare, reason)) return std::nullopt;
    exact.push_back(&bare);
  }
  for (const cv1::CommitmentTerm& term : terms) {
    if (UpTo(term)) {
      up_to.push_back(&term);
    } else {
      exact.push_back(&term);
    }
  }
  std::optional<CommitmentChoice> best;
  for (const cv1::CommitmentTerm* term : exact) {
    const double one = TermUsd(*term, price.on_demand_usd_per_hour());
    if (!(one > 0) || !(term->term_hours() > 0)) continue;  // no on-demand price to discount
    if (!Allowed(*term, limits)) {
      outside.push_back(term);
      continue;
    }
    const double n = std::max(1.0, std::ceil(work_hours / term->term_hours() - 1e-9));
    const double usd = n * one;
    if (best && (usd > best->usd_per_node ||
                 (usd == best->usd_per_node && term->term_hours() >= best->term.term_hours()))) {
      continue;
    }
    best = CommitmentChoice{*term, static_cast<int32_t>(n), usd, one / term->term_hours()};
  }
  if (best) return best;
  if (outside.empty() && up_to.empty()) {
    *reason = "no reserved price published and no commitment discount stated";
  } else {
    *reason = NoTermReason(up_to, outside, price, limits);
  }
  return std::nullopt;
}

std::string CommitmentText(const CommitmentChoice& choice, double work_hours) {
  const cv1::CommitmentTerm& t = choice.term;
  const double committed = choice.terms_bought * t.term_hours();
  std::string text = absl::StrCat("commitment: ", t.name(), " (", TermLengthText(t.term_hours()),
                                  ", ", UpfrontText(t));
  if (!t.source().empty()) absl::StrAppend(&text, "; ", t.source());
  if (!t.as_of().empty()) absl::StrAppend(&text, ", as of ", t.as_of());
  absl::StrAppend(
      &text,
      absl::StrFormat(") is paid whole whether used or not: %d term%s = %.0f h per node for this "
                      "job's %.1f h (%.0f%% used)",
                      choice.terms_bought, choice.terms_bought == 1 ? "" : "s", committed,
                      work_hours, committed > 0 ? 100.0 * work_hours / committed : 0.0));
  return text;
}

std::optional<FieldError> ValidateTerm(const cv1::CommitmentTerm& term,
                                       const std::vector<PathElement>& base, bool provider_wide,
                                       bool template_term) {
  if (term.name().empty()) return FieldError{Join(base, "name"), "must not be empty"};
  for (auto [field, value] : {std::pair<const char*, double>{"term_hours", term.term_hours()},
                              {"upfront_usd", term.upfront_usd()},
                              {"usd_per_hour", term.usd_per_hour()},
                              {"discount_fraction", term.discount_fraction()}}) {
    if (auto e = CheckAmount(base, field, value)) return e;
  }
  if (term.discount_fraction() >= 1) {
    return FieldError{Join(base, "discount_fraction"), "must be < 1"};
  }
  if (!term.as_of().empty()) {
    absl::Time unused;
    if (!ParseAsOf(term.as_of(), &unused)) {
      return FieldError{Join(base, "as_of"), "must be an ISO date (YYYY-MM-DD) or RFC 3339"};
    }
  }
  const bool priced = term.usd_per_hour() > 0 || term.upfront_usd() > 0;
  if (UpTo(term)) {
    if (template_term) return FieldError{Join(base, "bound"), "must not be UP_TO here"};
    if (priced || !(term.discount_fraction() > 0)) {
      return FieldError{Join(base, "discount_fraction"),
                        "an UP_TO term states only its ceiling: discount_fraction > 0, no prices"};
    }
    return std::nullopt;
  }
  if (!(term.term_hours() > 0)) return FieldError{Join(base, "term_hours"), "must be > 0"};
  if (template_term) {
    if (priced || term.discount_fraction() > 0) {
      return FieldError{Join(base, "usd_per_hour"),
                        "reserved_price_term carries no price (the offer's reserved price is it)"};
    }
    return std::nullopt;
  }
  if (provider_wide ? (priced || !(term.discount_fraction() > 0))
                    : (!priced || term.discount_fraction() > 0)) {
    return FieldError{Join(base, provider_wide ? "discount_fraction" : "usd_per_hour"),
                      provider_wide ? "a provider-wide term is priced by discount_fraction alone"
                                    : "an offer's term is priced by upfront_usd and usd_per_hour"};
  }
  if (term.upfront() == cv1::UPFRONT_PAYMENT_NONE && term.upfront_usd() > 0) {
    return FieldError{Join(base, "upfront_usd"), "must be 0 with UPFRONT_PAYMENT_NONE"};
  }
  if (term.upfront() == cv1::UPFRONT_PAYMENT_ALL && term.usd_per_hour() > 0) {
    return FieldError{Join(base, "usd_per_hour"), "must be 0 with UPFRONT_PAYMENT_ALL"};
  }
  return std::nullopt;
}

}  // namespace gpuadvisor::pricing
