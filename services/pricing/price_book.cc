#include "services/pricing/price_book.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/io/deterministic.h"
#include "common/io/fingerprint.h"
#include "common/status/status_macros.h"
#include "common/validation/field_ranges.h"
#include "services/pricing/billing_math.h"
#include "services/pricing/commitment.h"
#include "services/pricing/price_book_checks.h"

namespace gpuadvisor::pricing {
namespace {

namespace v1 = ::gpuadvisor::pricing::v1;
using ::gpuadvisor::catalog::v1::PurchaseOption;
using OfferEntry = ::gpuadvisor::pricing::quote_internal::OfferEntry;

constexpr char kNonRestartableWarning[] =
    "spot for a non-restartable job: a preemption loses the whole run";
constexpr char kAlwaysOnWarning[] =
    "spot for an always-on endpoint: a preemption interrupts serving until a replacement starts";

// Egress of `gb` moved out in one month under `rule`: the GB past the free
// allowance, each at the rate of the volume tier it falls in (tiers count
// from the month's first GB).
double MonthlyEgressUsd(const v1::BillingRule& rule, double gb) {
  // Within the allowance every tier adds +0 (an endpoint's quotes move none).
  if (!(gb > rule.egress_free_gb())) return 0.0;
  double usd = 0;
  double lo = 0;
  double rate = rule.egress_usd_per_gb();
  for (int i = 0; i <= rule.egress_tiers_size(); ++i) {
    const double hi = i < rule.egress_tiers_size() ? rule.egress_tiers(i).from_gb()
                                                   : std::numeric_limits<double>::infinity();
    usd += rate * std::max(0.0, std::min(gb, hi) - std::max(lo, rule.egress_free_gb()));
    if (i < rule.egress_tiers_size()) {
      lo = hi;
      rate = rule.egress_tiers(i).usd_per_gb();
    }
  }
  return usd;
}

// Egress of `gb` over a job of `hours`: providers define the allowance and
// the tiers per month, so the GB are spread evenly over the job's months
// (the book's hours_per_month each) and every month, the last partial one
// included, is billed on its own; a job of a month or less is one month.
double EgressUsd(const v1::BillingRule& rule, double gb, double hours, double hours_per_month) {
  const double months = hours / hours_per_month;
  if (!(months > 1.0) || !std::isfinite(months)) return MonthlyEgressUsd(rule, gb);
  const double full = std::floor(months);
  const double per_month = gb / months;
  return full * MonthlyEgressUsd(rule, per_month) +
         MonthlyEgressUsd(rule, per_month * (months - full));
}

// 64-bit FNV-1a over the deterministic serialization of everything but the
// version: stable across processes and builds, unlike absl::Hash.
std::string ContentHash(const v1::PriceBook& book) {
  return FingerprintHex(DeterministicBytes(book));
}

// True if `pattern` names the family of `gpu_model`: equal, or a prefix that
// ends where the model continues with a separator ("A100" vs "A100-80GB").
bool GpuFamilyMatches(absl::string_view pattern, absl::string_view gpu_model) {
  if (pattern.size() > gpu_model.size()) return false;
  if (!absl::StartsWithIgnoreCase(gpu_model, pattern)) return false;
  if (pattern.size() == gpu_model.size()) return true;
  const char next = gpu_model[pattern.size()];
  return next == '-' || next == '_' || next == ' ' || next == '.';
}

// What Quote derives once per request from the JobProfile, and the book's
// quote constants it applies (PriceBook.quote_constants).
struct JobTerms {
  double storage_gb = 0;  // the dataset and the checkpoints kept
  double checkpoint_gb = 0;
  double write_hours = 0;     // the job's checkpoint_write_minutes; 0: derived per offer
  double interval_hours = 0;  // the job's; 0: the provider's default or the optimum
  double egress_gb = 0;
  bool restartable = false;
  bool always_on = false;
  double hours_per_month = 0;
  double high_risk_rework_fraction = 0;
  double max_restarts_per_segment = 0;
  // log1p(max_restarts_per_segment): the longest segment's rate x hours,
  // taken once per request instead of per spot item.
  double max_segment_exponent = 0;
  const v1::CommitmentLimits* commitment = nullptr;  // the job's, for reserved quotes
};

absl::StatusOr<JobTerms> TermsOf(const v1::JobProfile& job, const v1::QuoteConstants& constants) {
  // The physical range of every number, from the table all services share,
  // before any arithmetic so no answer can overflow to inf or NaN.
  if (absl::Status s = validation::CheckRanges(job, "job"); !s.ok()) return s;
  JobTerms jt;
  jt.storage_gb = job.dataset_gb() + constants.checkpoints_kept() * job.checkpoint_gb();
  jt.checkpoint_gb = job.checkpoint_gb();
  jt.write_hours = job.checkpoint_write_minutes() / 60.0;
  jt.interval_hours = job.checkpoint_interval_minutes() / 60.0;
  jt.egress_gb = job.egress_gb();
  jt.restartable = job.restartable();
  jt.always_on = job.always_on();
  jt.hours_per_month = constants.hours_per_month();
  jt.high_risk_rework_fraction = constants.high_risk_rework_fraction();
  jt.max_restarts_per_segment = constants.max_restarts_per_segment();
  jt.max_segment_exponent = std::log1p(jt.max_restarts_per_segment);
  jt.commitment = &job.commitment();
  return jt;
}

absl::Status CheckItem(int i, int32_t nodes, double hours, PurchaseOption option) {
  static constexpr const validation::FieldRange& kNodes =
      validation::RangeOf("gpuadvisor.pricing.v1.QuoteItem.nodes");
  static constexpr const validation::FieldRange& kHours =
      validation::RangeOf("gpuadvisor.pricing.v1.QuoteItem.hours");
  if (!validation::InRange(kNodes, nodes)) {
    return validation::CheckValue(kNodes, nodes, absl::StrCat("items[", i, "].nodes"));
  }
  if (!validation::InRange(kHours, hours)) {
    return validation::CheckValue(kHours, hours, absl::StrCat("items[", i, "].hours"));
  }
  if (!catalog::v1::PurchaseOption_IsValid(option)) {
    return absl::InvalidArgumentError(
        absl::StrCat("items[", i, "].purchase_option: unknown value ", option));
  }
  return absl::OkStatus();
}

// The spot warnings of one cluster size and rate repeat on every regional
// copy of an offer: each text is formatted once per request.
class WarningTexts {
 public:
  template <typename Format>
  const std::string& Once(int which, int32_t nodes, double value, const Format& format) {
    auto [it, inserted] = texts_[which].try_emplace({nodes, value});
    if (inserted) it->second = format();
    return it->second;
  }

 private:
  absl::flat_hash_map<std::pair<int32_t, double>, std::string> texts_[2];
};
constexpr int kCapacityWarning = 0;
constexpr int kFrequentWarning = 1;

// The compute part of one item's quote.
struct ItemCost {
  double checkpoint_hours = 0;  // writes, included in work_hours
  double interval_hours = 0;    // between checkpoints; 0 or inf: none written
  double work_hours = 0;        // W = H + checkpoint writes
  double expected_hours = 0;    // wall clock with the expected interruptions
  double billed_seconds = 0;    // per node, of W
  double interruptions = 0;     // expected, spot only
  double compute_usd = 0;
  double preemption_usd = 0;
};

// Checkpoint writes: C per write, every `interval` hours of work; the same
// rule for every purchase option, so the same box costs the same writes
// on demand and on spot. `optimum` is the Young/Daly interval on spot
// (+inf otherwise).
void AddCheckpoints(const JobTerms& jt, double write_hours, double default_interval_hours,
                    double optimum, double hours, ItemCost* c) {
  double interval = jt.interval_hours;
  if (!(interval > 0)) {
    interval = default_interval_hours > 0 ? std::min(default_interval_hours, optimum) : optimum;
  }
  c->interval_hours = interval;
  c->checkpoint_hours = write_hours > 0 && interval > 0 && std::isfinite(interval)
                            ? hours / interval * write_hours
                            : 0.0;
  c->work_hours = hours + c->checkpoint_hours;
  c->expected_hours = c->work_hours;
}

// Expected interruptions and wall-clock hours of W hours of work on spot
// (see the top of price_book.h): `rate` for the cluster, C per checkpoint
// write, R per restart.
// False when a segment is so long for the rate that more than the book's
// max_restarts_per_segment restarts are expected (rate x segment over
// `max_exponent`, its log1p): the job is not expected to finish on spot, and
// the item is left unpriced.
bool ExpectSpot(bool restartable, bool saved_on_notice, double rate, double write_hours,
                double restart_hours, double hours, double max_exponent, ItemCost* c) {
  const double w = c->work_hours;
  if (!(rate > 0)) return true;
  const double interval = c->interval_hours;
  if (restartable && (saved_on_notice || !(interval > 0))) {
    // Nothing but the save and the restart is lost per interruption.
    c->interruptions = rate * w;
    c->expected_hours =
        w + c->interruptions * ((saved_on_notice ? write_hours : 0) + restart_hours);
    return true;
  }
  // Segments that start over when interrupted: the whole run when the job
  // cannot restart or writes no checkpoints, else one per interval.
  double segments = 1;
  if (restartable && std::isfinite(interval)) segments = std::max(1.0, hours / interval);
  const double segment = w / segments;
  if (rate * segment > max_exponent) return false;
  const SegmentExpectation expected = ExpectSegment(rate, segment, restart_hours);
  c->interruptions = segments * expected.restarts;
  c->expected_hours = segments * expected.hours;
  return true;
}

// C: the job's write time, else its checkpoint written by every node in
// parallel at the provider's storage bandwidth.
double WriteHours(const OfferEntry& entry, const JobTerms& jt, int32_t nodes) {
  if (jt.write_hours > 0) return jt.write_hours;
  return CheckpointWriteHours(jt.checkpoint_gb, nodes, entry.checkpoint_write_gb_per_second);
}

// The price per node-hour at `option` (on demand or spot); 0 with the
// reason when not sold so.
double UnitPrice(const OfferEntry& entry, PurchaseOption option, v1::Quote* quote) {
  const v1::OfferPrice& price = *entry.price;
  double unit_price = 0;
  switch (option) {
    case catalog::v1::PURCHASE_OPTION_SPOT:
      unit_price = price.spot_usd_per_hour();
      if (unit_price <= 0) quote->set_unpriced_reason("not sold as spot");
      break;
    default:
      unit_price = price.on_demand_usd_per_hour();
      if (unit_price <= 0) quote->set_unpriced_reason("not sold on demand");
      break;
  }
  return unit_price;
}

// On demand and reserved: the run and its checkpoint writes, billed once.
void PlainCost(const OfferEntry& entry, const JobTerms& jt, int32_t nodes, double hours,
               double unit_price, ItemCost* c) {
  const v1::BillingRule& rule = *entry.billing;
  AddCheckpoints(jt, WriteHours(entry, jt, nodes), entry.default_interval_hours,
                 std::numeric_limits<double>::infinity(), hours, c);
  c->billed_seconds =
      BilledSeconds(c->work_hours * 3600.0, rule.granularity_seconds(), rule.minimum_seconds());
  c->compute_usd = nodes * unit_price * c->billed_seconds / 3600.0;
}

// Reserved: the run and its checkpoint writes under the cheapest commitment
// term allowed, every term bought paid whole (commitment.h). The effective
// price per node-hour, or 0 with the reason when no term can be quoted.
double ReservedCost(const OfferEntry& entry, const JobTerms& jt, int32_t nodes, double hours,
                    v1::Quote* quote, ItemCost* c) {
  AddCheckpoints(jt, WriteHours(entry, jt, nodes), entry.default_interval_hours,
                 std::numeric_limits<double>::infinity(), hours, c);
  std::string reason;
  std::optional<CommitmentChoice> choice =
      ChooseCommitment(*entry.price, *entry.billing, *jt.commitment, c->work_hours, &reason);
  if (!choice) {
    quote->set_unpriced_reason(std::move(reason));
    return 0;
  }
  const double committed_hours = choice->terms_bought * choice->term.term_hours();
  c->billed_seconds = committed_hours * 3600.0;
  c->compute_usd = nodes * choice->usd_per_node;
  quote->add_warnings(CommitmentText(*choice, c->work_hours));
  quote->set_terms_bought(choice->terms_bought);
  quote->set_committed_hours(committed_hours);
  *quote->mutable_commitment() = std::move(choice->term);
  return choice->unit_usd_per_hour;
}

// Spot: the same writes, then the expected interruptions, each a restart
// and a relaunch billed again (see the top of price_book.h). False when the
// job is not expected to finish (the quote says why).
bool SpotCost(const OfferEntry& entry, const JobTerms& jt, int32_t nodes, double hours,
              double unit_price, WarningTexts& texts, v1::Quote* quote, ItemCost* c) {
  const v1::BillingRule& rule = *entry.billing;
  const double rate = nodes * entry.interruptions_per_hour;  // cluster
  const double write_hours = WriteHours(entry, jt, nodes);
  const double optimal = rate > 0 ? YoungDalyIntervalHours(write_hours, 1.0 / rate) : 0.0;
  quote->set_interruptions_per_hour(rate);
  quote->set_optimal_checkpoint_interval_minutes(optimal * 60.0);
  if (entry.has_notice) quote->set_notice_seconds(entry.notice_seconds);
  // Capacity risk: after a preemption every node of the cluster must be
  // obtained again at once, which takes longer the more nodes there are.
  const double restart_hours =
      rule.restart_minutes() / 60.0 * (1.0 + entry.capacity_restart_factor * (nodes - 1));
  quote->set_restart_minutes(restart_hours * 60.0);
  if (nodes > 1 && entry.capacity_restart_factor > 0) {
    quote->add_warnings(texts.Once(kCapacityWarning, nodes, restart_hours, [&] {
      return absl::StrFormat(
          "spot on %d nodes: each preemption stops the whole job until %d spot nodes are "
          "available again at once (restart %.0f min assumed)",
          nodes, nodes, restart_hours * 60.0);
    }));
  }
  if (entry.risk == nullptr) {
    quote->add_warnings(absl::StrCat("no spot interruption rate for ", entry.price->provider(), " ",
                                     entry.price->gpu_model(), ": preemption cost not estimated"));
  }
  AddCheckpoints(jt, write_hours, entry.default_interval_hours,
                 rate > 0 ? optimal : std::numeric_limits<double>::infinity(), hours, c);
  // A notice long enough to write a checkpoint saves the work since the last
  // one: only the save and the restart are lost.
  const bool saved_on_notice =
      entry.has_notice && write_hours > 0 && entry.notice_seconds >= write_hours * 3600.0;
  if (!ExpectSpot(jt.restartable, saved_on_notice, rate, write_hours, restart_hours, hours,
                  jt.max_segment_exponent, c)) {
    quote->set_unpriced_reason(absl::StrFormat(
        "spot: at %.3g interruptions per hour on %d nodes the job is not expected to finish "
        "(over %.0f restarts expected between checkpoints)",
        rate, nodes, jt.max_restarts_per_segment));
    return false;
  }
  c->billed_seconds =
      BilledSeconds(c->work_hours * 3600.0, rule.granularity_seconds(), rule.minimum_seconds());
  c->compute_usd = nodes * unit_price * c->billed_seconds / 3600.0;
  const double billed_all =
      BilledSecondsOverLaunches(c->expected_hours * 3600.0, 1.0 + c->interruptions,
                                rule.granularity_seconds(), rule.minimum_seconds());
  c->preemption_usd = std::max(0.0, nodes * unit_price * billed_all / 3600.0 - c->compute_usd);
  quote->set_expected_interruptions(c->interruptions);
  if (c->expected_hours - c->work_hours > jt.high_risk_rework_fraction * c->work_hours) {
    quote->add_warnings(texts.Once(kFrequentWarning, nodes, rate, [&] {
      return absl::StrFormat(
          "frequent spot interruptions (every %.1f h on %d nodes): %.1f expected, adding %.0f%% "
          "to the run",
          1.0 / rate, nodes, c->interruptions,
          100.0 * (c->expected_hours - c->work_hours) / c->work_hours);
    }));
  }
  if (!jt.restartable) quote->add_warnings(kNonRestartableWarning);
  if (jt.always_on) quote->add_warnings(kAlwaysOnWarning);
  return true;
}

}  // namespace

PriceBook::PriceBook(v1::PriceBook data) : data_(std::move(data)) {}

absl::StatusOr<std::shared_ptr<const PriceBook>> PriceBook::Create(v1::PriceBook data) {
  Normalize(&data);
  if (std::optional<FieldError> error = Validate(data)) return ToStatus(*error);
  data.clear_version();
  data.set_version(ContentHash(data));
  std::shared_ptr<PriceBook> book(new PriceBook(std::move(data)));
  if (absl::Status s = book->Index(); !s.ok()) return s;
  return std::shared_ptr<const PriceBook>(std::move(book));
}

namespace {

// The book's billing rules and spot risks, looked up per offer.
class RuleIndex {
 public:
  explicit RuleIndex(const v1::PriceBook& data) : default_billing_(data.default_billing()) {
    // Billing rules: by provider, and by provider with an instance-type prefix.
    for (const v1::BillingRule& rule : data.billing()) {
      std::string key = absl::AsciiStrToLower(rule.provider());
      if (key.find('/') == std::string::npos) {
        by_provider_.emplace(std::move(key), &rule);
      } else {
        by_prefix_.emplace_back(std::move(key), &rule);
      }
    }
    // Spot risks by lower-case provider.
    for (const v1::SpotRisk& risk : data.spot_risks()) {
      risks_[absl::AsciiStrToLower(risk.provider())].push_back(&risk);
    }
  }

  // The rule of the longest "<provider>/<prefix>" that starts `type_key`
  // ("<provider>/<instance type>", lower case), else the provider's, else
  // the default.
  const v1::BillingRule* Billing(const std::string& provider, const std::string& type_key) const {
    const v1::BillingRule* billing = nullptr;
    size_t best_len = 0;
    for (const auto& [key, rule] : by_prefix_) {
      if (key.size() > best_len && absl::StartsWith(type_key, key)) {
        best_len = key.size();
        billing = rule;
      }
    }
    if (billing != nullptr) return billing;
    auto it = by_provider_.find(provider);
    return it != by_provider_.end() ? it->second : &default_billing_;
  }

  // The provider's risk for the longest GPU family naming `gpu_model`, else
  // its "*" risk; then the same for provider "*". Null when none.
  const v1::SpotRisk* Risk(const std::string& provider, absl::string_view gpu_model) const {
    const v1::SpotRisk* risk = RiskOf(provider, gpu_model);
    return risk != nullptr ? risk : RiskOf("*", gpu_model);
  }

 private:
  const v1::SpotRisk* RiskOf(const std::string& provider, absl::string_view gpu_model) const {
    auto it = risks_.find(provider);
    if (it == risks_.end()) return nullptr;
    const v1::SpotRisk* best = nullptr;
    const v1::SpotRisk* any = nullptr;
    for (const v1::SpotRisk* risk : it->second) {
      if (risk->gpu_model() == "*") {
        any = risk;
      } else if (GpuFamilyMatches(risk->gpu_model(), gpu_model) &&
                 (best == nullptr || risk->gpu_model().size() > best->gpu_model().size())) {
        best = risk;
      }
    }
    return best != nullptr ? best : any;
  }

  const v1::BillingRule& default_billing_;
  absl::flat_hash_map<std::string, const v1::BillingRule*> by_provider_;
  std::vector<std::pair<std::string, const v1::BillingRule*>> by_prefix_;
  absl::flat_hash_map<std::string, std::vector<const v1::SpotRisk*>> risks_;
};

// Checkpoint writes: the offer's rule, else the default rule (0: not stated).
void FillCheckpoint(const v1::BillingRule& fallback, quote_internal::OfferEntry* entry) {
  const v1::BillingRule& rule = *entry->billing;
  entry->checkpoint_write_gb_per_second = rule.checkpoint_write_gb_per_second() > 0
                                              ? rule.checkpoint_write_gb_per_second()
                                              : fallback.checkpoint_write_gb_per_second();
  entry->default_interval_hours =
      (rule.checkpoint_interval_minutes() > 0 ? rule.checkpoint_interval_minutes()
                                              : fallback.checkpoint_interval_minutes()) /
      60.0;
}

void FillSpotRisk(const v1::SpotRisk& risk, quote_internal::OfferEntry* entry) {
  entry->risk = &risk;
  entry->interruptions_per_hour =
      risk.interruption_frequency() > 0
          ? InterruptionFractionToRatePerHour(risk.interruption_frequency(),
                                              risk.instance_lifetime_hours())
          : risk.interruptions_per_hour();
  entry->has_notice = risk.has_notice_seconds();
  entry->notice_seconds = risk.notice_seconds();
  entry->capacity_restart_factor = risk.capacity_restart_factor();
}

}  // namespace

absl::Status PriceBook::Index() {
  if (!data_.prices_as_of().empty() && !ParseAsOf(data_.prices_as_of(), &prices_as_of_)) {
    prices_as_of_ = absl::InfinitePast();
  }
  const RuleIndex rules(data_);
  offers_.reserve(static_cast<size_t>(data_.prices_size()));
  for (int i = 0; i < data_.prices_size(); ++i) {
    const v1::OfferPrice& price = data_.prices(i);
    OfferEntry entry;
    entry.price = &price;
    entry.index = i;
    const std::string provider = absl::AsciiStrToLower(price.provider());
    entry.billing = rules.Billing(
        provider,
        absl::StrCat(provider, "/", absl::AsciiStrToLower(IdInstanceType(price.offer_id()))));
    FillCheckpoint(data_.default_billing(), &entry);
    if (const v1::SpotRisk* risk = rules.Risk(provider, price.gpu_model()); risk != nullptr) {
      FillSpotRisk(*risk, &entry);
    }
    if (!offers_.emplace(price.offer_id(), entry).second) {
      return absl::InternalError(absl::StrCat("duplicate offer id ", price.offer_id()));
    }
  }
  by_position_.resize(offers_.size());
  for (const auto& [id, entry] : offers_) by_position_[entry.index] = &entry;
  return absl::OkStatus();
}

const quote_internal::OfferEntry* PriceBook::EntryOf(const Item& item) const {
  if (item.book_index >= 0 && static_cast<size_t>(item.book_index) < by_position_.size()) {
    const OfferEntry* entry = by_position_[item.book_index];
    if (entry->price->offer_id() == item.offer_id) return entry;
  }
  auto found = offers_.find(item.offer_id);
  return found == offers_.end() ? nullptr : &found->second;
}

PriceBook::Rules PriceBook::RulesOf(const Item& item) const {
  const OfferEntry* entry = EntryOf(item);
  return entry == nullptr ? Rules{} : Rules{entry->billing, entry->risk};
}

const v1::OfferPrice* PriceBook::PriceOf(const Item& item) const {
  const OfferEntry* entry = EntryOf(item);
  return entry == nullptr ? nullptr : entry->price;
}

absl::StatusOr<v1::QuoteResponse> PriceBook::Quote(const v1::QuoteRequest& request,
                                                   absl::Time now) const {
  v1::QuoteResponse response;
  RETURN_IF_ERROR(Quote(request, now, &response));
  return response;
}

absl::Status PriceBook::Quote(const v1::QuoteRequest& request, absl::Time now,
                              v1::QuoteResponse* response) const {
  return QuoteItems(
      request.items_size(),
      [&request](int i) {
        const v1::QuoteItem& item = request.items(i);
        return Item{item.offer_id(), item.nodes(), item.hours(), item.purchase_option()};
      },
      request.job(), now, /*echo_offer_ids=*/true, response);
}

absl::Status PriceBook::Quote(absl::Span<const Item> items, const v1::JobProfile& job,
                              absl::Time now, v1::QuoteResponse* response) const {
  return QuoteItems(
      static_cast<int>(items.size()), [items](int i) { return items[i]; }, job, now,
      /*echo_offer_ids=*/false, response);
}

absl::Status PriceBook::QuoteItems(int count, absl::FunctionRef<Item(int)> items,
                                   const v1::JobProfile& job, absl::Time now, bool echo_offer_ids,
                                   v1::QuoteResponse* response_out) const {
  v1::QuoteResponse& response = *response_out;
  response.Clear();
  ASSIGN_OR_RETURN(const JobTerms jt, TermsOf(job, data_.quote_constants()));
  response.set_price_book_version(data_.version());
  response.set_catalog_version(data_.catalog_version());
  response.set_quote_rules_version(kQuoteRulesVersion);
  response.set_prices_as_of(data_.prices_as_of());
  if (prices_as_of_ != absl::InfinitePast() && now > prices_as_of_) {
    response.set_price_book_age_seconds(absl::ToInt64Seconds(now - prices_as_of_));
  }
  response.mutable_quotes()->Reserve(count);
  WarningTexts texts;
  for (int i = 0; i < count; ++i) {
    const Item item = items(i);
    RETURN_IF_ERROR(CheckItem(i, item.nodes, item.hours, item.purchase_option));
    const PurchaseOption option = item.purchase_option == catalog::v1::PURCHASE_OPTION_UNSPECIFIED
                                      ? catalog::v1::PURCHASE_OPTION_ON_DEMAND
                                      : item.purchase_option;
    v1::Quote* quote = response.add_quotes();
    if (echo_offer_ids) quote->set_offer_id(item.offer_id.data(), item.offer_id.size());
    quote->set_purchase_option(option);
    const OfferEntry* found = EntryOf(item);
    if (found == nullptr) {
      quote->set_unpriced_reason("unknown offer id");
      continue;
    }
    const OfferEntry& entry = *found;
    ItemCost c;
    const double unit_price =  // USD per node-hour
        option == catalog::v1::PURCHASE_OPTION_RESERVED
            ? ReservedCost(entry, jt, item.nodes, item.hours, quote, &c)
            : UnitPrice(entry, option, quote);
    if (unit_price <= 0) continue;
    if (option == catalog::v1::PURCHASE_OPTION_SPOT) {
      if (!SpotCost(entry, jt, item.nodes, item.hours, unit_price, texts, quote, &c)) {
        quote->clear_warnings();
        continue;
      }
    } else if (option != catalog::v1::PURCHASE_OPTION_RESERVED) {  // reserved: ReservedCost
      PlainCost(entry, jt, item.nodes, item.hours, unit_price, &c);
    }
    const v1::BillingRule& rule = *entry.billing;
    const double storage_usd =
        jt.storage_gb * rule.storage_usd_per_gb_month() * c.expected_hours / jt.hours_per_month;
    const double egress_usd = EgressUsd(rule, jt.egress_gb, c.expected_hours, jt.hours_per_month);
    quote->set_priced(true);
    quote->set_checkpoint_hours(c.checkpoint_hours);
    quote->set_checkpoint_interval_minutes(c.checkpoint_hours > 0 ? c.interval_hours * 60.0 : 0.0);
    v1::CostBreakdown* cost = quote->mutable_cost();
    cost->set_compute_usd(c.compute_usd);
    cost->set_storage_usd(storage_usd);
    cost->set_egress_usd(egress_usd);
    cost->set_preemption_usd(c.preemption_usd);
    cost->set_total_usd(c.compute_usd + storage_usd + egress_usd + c.preemption_usd);
    cost->set_usd_per_hour(item.nodes * unit_price);
    cost->set_billed_hours(c.billed_seconds / 3600.0);
    cost->set_expected_hours(c.expected_hours);
  }
  return absl::OkStatus();
}

}  // namespace gpuadvisor::pricing
