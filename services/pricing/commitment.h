#ifndef GPUADVISOR_SERVICES_PRICING_COMMITMENT_H_
#define GPUADVISOR_SERVICES_PRICING_COMMITMENT_H_

// Commitment terms (part of pricing_quote): which term a reserved quote
// prices and what the whole job pays under it. Plain C++, thread-safe.
//
// The commitment rule (docs/pricing.md, "Commitment terms"): a term of T
// hours costs upfront_usd + usd_per_hour x T per node (a provider-wide term:
// on_demand x (1 - discount_fraction) x T), paid whether used or not. A job
// of W work hours buys n = max(1, ceil(W / T)) terms: a job shorter than the
// term pays for the whole term. Among the offer's exact terms within the
// job's CommitmentLimits the one with the lowest n x term cost is quoted
// (ties: the shorter term). An "up to" figure (PRICE_BOUND_UP_TO) is never a
// price: an offer with only such terms is unpriced, and the reason names the
// ceiling and the best hourly price it would allow.
//
// Where the terms come from, in order: the offer's own (OfferPrice.commitments,
// from catalog Offer.commitments); else the provider's
// (BillingRule.commitments); else a bare reserved_usd_per_hour (or the
// rule's reserved_discount) under the rule's reserved_price_term; no term
// there: unpriced ("published without its term").

#include <optional>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"
#include "services/pricing/price_book_checks.h"

namespace gpuadvisor::pricing {

// One term's price per node, USD (upfront + hourly x term; a discount term
// at `on_demand_usd_per_hour`).
double TermUsd(const catalog::v1::CommitmentTerm& term, double on_demand_usd_per_hour);

// "1 year", "3 years", "6 months", "1 day", "90 h".
std::string TermLengthText(double term_hours);
// "no upfront", "partial upfront ($X)", "all upfront ($X)", "upfront not stated".
std::string UpfrontText(const catalog::v1::CommitmentTerm& term);

struct CommitmentChoice {
  // The term priced; a bare reserved price's term is filled in with it.
  catalog::v1::CommitmentTerm term;
  int32_t terms_bought = 0;
  double usd_per_node = 0;       // terms_bought x TermUsd
  double unit_usd_per_hour = 0;  // TermUsd / term_hours: the effective hourly price
};

// The cheapest exact term for `work_hours` within `limits` (see the top of
// this file); nullopt with `reason` set when none can be quoted.
std::optional<CommitmentChoice> ChooseCommitment(const v1::OfferPrice& price,
                                                 const v1::BillingRule& rule,
                                                 const v1::CommitmentLimits& limits,
                                                 double work_hours, std::string* reason);

// "commitment: 1-year committed use (1 year, no upfront; C-GCPB, as of
// 2024-09-16) is paid whole whether used or not: 1 term = 8760 h per node
// for this job's 120.0 h (1% used)".
std::string CommitmentText(const CommitmentChoice& choice, double work_hours);

// A term's own fields. `provider_wide`: a BillingRule's term, priced by
// discount_fraction only. `template_term`: BillingRule.reserved_price_term,
// which carries no price.
std::optional<FieldError> ValidateTerm(const catalog::v1::CommitmentTerm& term,
                                       const std::vector<PathElement>& base, bool provider_wide,
                                       bool template_term);

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_COMMITMENT_H_
