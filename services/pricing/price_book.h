#ifndef GPUADVISOR_SERVICES_PRICING_PRICE_BOOK_H_
#define GPUADVISOR_SERVICES_PRICING_PRICE_BOOK_H_

// The quoting library (pricing_quote): an immutable, validated price book and
// the whole-job quote, versioned by kQuoteRulesVersion. Every process that
// quotes links it (the writer, its followers, the gateway); the writer's
// loader, updates and store are elsewhere (price_loader.h, price_store.h).
// Plain C++ over the gpuadvisor.pricing.v1 messages; no gRPC.
//
// Units: prices in USD per hour for the whole instance (one node), storage in
// USD per GB-month (1 month = quote_constants.hours_per_month, 730 h in the
// shipped book), egress in USD per GB, times in the unit their field names
// say. See docs/pricing.md for the rules and their sources.
//
// The numbers of the rules that are facts or judgements (hours per month,
// checkpoints kept, the high-risk warning's fraction, the restart limit) are
// the book's quote_constants (data/pricing/billing.textproto, with sources),
// not C++ constants; below they are named Mh, K_kept, F_warn and R_max.
//
// Rule lookup (done once per offer in PriceBook::Create, not per quote):
//  * Billing: a BillingRule whose `provider` is "<provider>/<prefix>" applies
//    to that provider's offers whose instance type (the second part of the
//    offer id "<provider>/<instance_type>/<region>") starts with <prefix>; the
//    longest such prefix wins (e.g. "oci/BM." for OCI bare metal with its
//    one-hour minimum). Otherwise the rule whose provider equals the offer's
//    provider, otherwise `default_billing`. Providers compare
//    case-insensitively.
//  * Spot risk: the per-node rate is interruptions_per_hour, or, when the risk
//    gives the provider's own statistic, -ln(1 - interruption_frequency) /
//    instance_lifetime_hours (InterruptionFractionToRatePerHour).
//    For the offer's provider, the SpotRisk whose gpu_model is the
//    longest case-insensitive prefix of the offer's gpu_model ending at a
//    boundary ("A100" matches "A100-80GB" and "A100", never "A1000"; "L4"
//    never matches "L40S"), else that provider's "*" entry, else the same
//    search under provider "*". No match: rate 0 and a warning on spot quotes.
//
// Whole-job quote (PriceBook::Quote), per item, with N = nodes, H = hours,
// p = price per node-hour at the purchase option:
//  * Price: on-demand -> on_demand_usd_per_hour; spot -> spot_usd_per_hour;
//    reserved -> a commitment term (commitment.h): the cheapest exact term
//    within JobProfile.commitment, its whole terms paid (compute_usd = N x
//    terms x term price, billed_hours = the hours committed, usd_per_hour =
//    N x the term's effective hourly price, expected_hours = W), with a
//    warning naming the term, its upfront rule and how much the job uses;
//    an "up to" figure is never quoted. PURCHASE_OPTION_UNSPECIFIED means
//    on-demand. An offer not sold at the
//    option (price 0) or an unknown offer id gives priced=false with
//    unpriced_reason; that is not an error.
//  * Checkpoint writes, the same for every purchase option (quote rules 2):
//      C       = checkpoint_write_minutes / 60 if given, else checkpoint_gb /
//                N / bw / 3600: every node writes its shard in parallel at
//                bw = the rule's checkpoint_write_gb_per_second (else
//                default_billing's; not stated: C = 0)
//      tau*    = sqrt(2 C / lambda) (Young/Daly) on spot, reported in minutes
//                as optimal_checkpoint_interval_minutes (0 when lambda or C
//                is 0, and on non-spot quotes); +infinity elsewhere
//      tau     = checkpoint_interval_minutes / 60 if given, else min(D, tau*)
//                with D = the rule's checkpoint_interval_minutes (else
//                default_billing's), else tau* when no D is stated
//      W       = H + (H / tau) x C   (Quote.checkpoint_hours = (H / tau) x C;
//                none when tau is 0 or infinite)
//  * On-demand and reserved: expected_hours = W (reserved bills its terms).
//  * Spot: lambda = N x per-node interruptions_per_hour (the cluster rate,
//    reported as Quote.interruptions_per_hour);
//      R       = restart_minutes / 60 x (1 + capacity_restart_factor x (N-1))
//                (multi-node capacity risk; reported as Quote.restart_minutes,
//                with a warning when N > 1)
//    Work between two checkpoints starts over when interrupted. With
//    segments of s hours, each interruption costing R before it starts
//    again, a segment takes (e^{lambda s} - 1)(1/lambda + R) hours expected,
//    with e^{lambda s} - 1 interruptions (ExpectedSegmentHours):
//      - restartable (JobProfile.restartable = true), checkpoints written:
//        n = max(1, H / tau) segments of s = W / n
//      - not restartable (the proto3 default), or restartable without
//        checkpoints: one segment s = W, i.e. (e^{lambda W} - 1) / lambda
//        with R = 0; warning "spot for a non-restartable job: a preemption
//        loses the whole run"
//      - restartable with the provider's notice_seconds >= C (the work is
//        saved at the notice) or free checkpoints (tau = 0): K = lambda W
//        interruptions, each losing only C (notice) and R
//    expected_hours = the sum over segments; Quote.expected_interruptions = K.
//    More than R_max restarts (1000) expected per segment: priced=false
//    ("not expected to finish"). A warning when the interruptions add more
//    than F_warn (a quarter) to W. always_on jobs on spot get a warning too.
//  * billed_hours   = BilledSeconds(W h, granularity, minimum) / 3600, per node
//    compute_usd    = N x billed_hours x p
//    preemption_usd = N x p x (BilledSecondsOverLaunches(expected_hours,
//                     1 + K) - BilledSeconds(W)) / 3600 on spot: every
//                     relaunch pays the granularity and the minimum charge
//                     again (0 for on-demand and reserved)
//    storage_usd    = (dataset_gb + K_kept x checkpoint_gb) x
//                     storage_usd_per_gb_month x expected_hours / Mh
//                     (shared storage, not per node; K_kept = 2, Mh = 730)
//    egress_usd     = per month of use: egress_gb spread evenly over
//                     M = expected_hours / Mh months (one month when M <= 1),
//                     each month (the last partial one too) billed
//                     max(0, its GB - egress_free_gb) x egress_usd_per_gb,
//                     with BillingRule.egress_tiers: each GB past the free
//                     allowance at the rate of the month's volume tier
//    usd_per_hour   = N x p
//    total_usd      = compute + storage + egress + preemption

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/validation/field_ranges.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"
#include "services/pricing/billing_math.h"

namespace gpuadvisor::pricing {

// The most an instance-hour may cost in any price (on-demand, spot,
// reserved) set through UpdatePrices. The dearest offers in data/ are about
// 114 USD per instance-hour (8-GPU nodes); 10,000 leaves two orders of
// magnitude while keeping
// every whole-job total (hours <= 1e6, nodes) far from overflow. A sanity
// bound on operator input, not a fact about the market.
inline constexpr double kMaxUsdPerHour = validation::kMaxUsdPerHour;

// The largest dataset, checkpoint or egress a quote accepts, GB (an exabyte):
// the physical range of JobProfile's sizes, which callers that fill a
// JobProfile from their own input check too (the gateway's workload.egress_gb).
inline constexpr double kMaxJobGb = validation::kMaxJobGb;

// The version of the quote rules below (the formulas of Quote and the
// meaning of the book's fields for them). Bump it with every change that can
// make Quote price the same book differently: a process quoting in place from
// a copy of the writer's book (the gateway) does so only while the book's
// quote_rules_version equals this, and calls the writer's Quote otherwise.
// 3: the rules' constants are read from the book (quote_constants); a build
// of rules 2 would quote with its compiled copies of them.
// 4: reserved is priced by commitment terms (commitment.h): whole terms
// paid whatever the job's hours; rules 3 priced the job's hours only.
inline constexpr char kQuoteRulesVersion[] = "4";

namespace quote_internal {
// Everything Quote needs about one offer, resolved once in PriceBook::Create.
struct OfferEntry {
  const gpuadvisor::pricing::v1::OfferPrice* price = nullptr;
  int index = 0;  // position in data().prices()
  const gpuadvisor::pricing::v1::BillingRule* billing = nullptr;
  const gpuadvisor::pricing::v1::SpotRisk* risk = nullptr;  // null: none; its numbers below
  double interruptions_per_hour = 0;                        // per node
  bool has_notice = false;
  double notice_seconds = 0;
  double capacity_restart_factor = 0;
  // The rule's, else default_billing's (0: not stated).
  double checkpoint_write_gb_per_second = 0;
  double default_interval_hours = 0;
};
}  // namespace quote_internal

// An immutable, validated price book. All methods are const and thread-safe;
// share it through std::shared_ptr<const PriceBook>.
class PriceBook {
 public:
  // Validates `data` whole and indexes it. kInvalidArgument naming the field
  // path on the first problem, e.g.
  //   "prices[3].spot_usd_per_hour: must be finite and >= 0"
  //   "billing[1].granularity_seconds: must be >= 1"
  // Checks: every number finite and >= 0; granularity_seconds >= 1 (billing
  // and default_billing); reserved_discount < 1; non-empty and unique billing
  // providers, (provider, gpu_model) spot risks and offer ids; prices_as_of
  // empty, "YYYY-MM-DD" or RFC 3339. An empty price provider is taken from the
  // offer id. `version` is always replaced by a content hash of the rest.
  static absl::StatusOr<std::shared_ptr<const PriceBook>> Create(
      gpuadvisor::pricing::v1::PriceBook data);

  PriceBook(const PriceBook&) = delete;
  PriceBook& operator=(const PriceBook&) = delete;

  // The validated data, version included.
  const gpuadvisor::pricing::v1::PriceBook& data() const { return data_; }
  const std::string& version() const { return data_.version(); }

  // Prices every item of `request` for the whole job (see the top of this
  // file); quotes come back in item order. kInvalidArgument, naming the
  // field, for items[i].nodes < 1, items[i].hours negative, NaN, infinite or
  // above 1e6, an unknown purchase_option value, or a job field that is
  // negative or not finite ("job.checkpoint_gb: must be finite and >= 0").
  // price_book_age_seconds = now - prices_as_of (0 if unknown or in the
  // future). Cost: one hash lookup and no string formatting per item, except
  // for warnings and unpriced reasons.
  absl::StatusOr<gpuadvisor::pricing::v1::QuoteResponse> Quote(
      const gpuadvisor::pricing::v1::QuoteRequest& request, absl::Time now) const;
  // The same, written into `response` (cleared first; possibly arena-allocated
  // by the caller). On error `response` holds a partial answer: discard it.
  absl::Status Quote(const gpuadvisor::pricing::v1::QuoteRequest& request, absl::Time now,
                     gpuadvisor::pricing::v1::QuoteResponse* response) const;

  // One item of an in-process quote: a QuoteItem without the copies.
  struct Item {
    absl::string_view offer_id;  // viewed, not copied; must outlive the call
    int32_t nodes = 1;
    double hours = 0;
    gpuadvisor::catalog::v1::PurchaseOption purchase_option =
        gpuadvisor::catalog::v1::PURCHASE_OPTION_UNSPECIFIED;
    // Where the caller expects the offer in data().prices() (-1: unknown): a
    // book made from a catalog snapshot lists its offers in the snapshot's
    // order, so the gateway passes the offer's index there. Used only when
    // that price's offer_id is `offer_id`; else the id is looked up.
    int32_t book_index = -1;
  };
  // The quotes Quote(request) gives for these items and job, for a caller in
  // the same process (the gateway, from its copy of the book): the same
  // checks and errors ("items[i]..."), except that Quote.offer_id is left
  // empty (the caller holds the items, in the same order).
  absl::Status Quote(absl::Span<const Item> items, const gpuadvisor::pricing::v1::JobProfile& job,
                     absl::Time now, gpuadvisor::pricing::v1::QuoteResponse* response) const;

  // The rules an item's quote follows besides its offer's own prices: the
  // billing rule and the spot risk (null: none) Quote applies to it. Two
  // offers with the same rules quote the same hours, warnings (by count)
  // and interruptions for the same nodes, hours and option, their costs
  // differing only through their prices (reserved aside: its terms are the
  // offer's). Both null when the book does not list the offer.
  struct Rules {
    const gpuadvisor::pricing::v1::BillingRule* billing = nullptr;
    const gpuadvisor::pricing::v1::SpotRisk* risk = nullptr;
  };
  Rules RulesOf(const Item& item) const;
  // The item's offer's prices in data().prices(), found as Quote finds them
  // (book_index, else the id); null when the book does not list the offer.
  const gpuadvisor::pricing::v1::OfferPrice* PriceOf(const Item& item) const;

  // Number of priced offers.
  int size() const { return data_.prices_size(); }

  // When the prices were taken (prices_as_of); InfinitePast if unknown.
  absl::Time prices_as_of() const { return prices_as_of_; }

  // Whether the book prices `offer_id`, and its position in data().prices()
  // (-1 when it does not).
  bool HasOffer(absl::string_view offer_id) const { return offers_.contains(offer_id); }
  int OfferIndex(absl::string_view offer_id) const {
    auto it = offers_.find(offer_id);
    return it == offers_.end() ? -1 : it->second.index;
  }

  // The quote rules the writer priced this book by (data().quote_rules_version,
  // stamped by LoadPriceBook), and whether they are the rules this build's
  // Quote applies: only then does an in-process quote from a copy of the book
  // give the writer's answer.
  const std::string& quote_rules_version() const { return data_.quote_rules_version(); }
  bool QuotesLikeThisBuild() const { return quote_rules_version() == kQuoteRulesVersion; }

 private:
  using OfferEntry = quote_internal::OfferEntry;

  explicit PriceBook(gpuadvisor::pricing::v1::PriceBook data);
  absl::Status Index();
  // Both Quote overloads: items(i) for i < count; Quote.offer_id set when
  // `echo_offer_ids`.
  absl::Status QuoteItems(int count, absl::FunctionRef<Item(int)> items,
                          const gpuadvisor::pricing::v1::JobProfile& job, absl::Time now,
                          bool echo_offer_ids,
                          gpuadvisor::pricing::v1::QuoteResponse* response) const;

  // The item's offer: at its book_index when that price has its id, else by
  // id; null when the book does not price it.
  const OfferEntry* EntryOf(const Item& item) const;

  gpuadvisor::pricing::v1::PriceBook data_;
  absl::Time prices_as_of_ = absl::InfinitePast();  // InfinitePast: unknown
  // Keys view the offer ids stored in data_, which never changes.
  absl::flat_hash_map<absl::string_view, OfferEntry> offers_;
  // The entries of offers_ by position in data().prices() (offers_ is not
  // changed after Index(), so they stay where they are).
  std::vector<const OfferEntry*> by_position_;
};

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICE_BOOK_H_
