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
#include "common/status/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "services/pricing/billing_math.h"
#include "services/pricing/price_book_checks.h"

namespace gpuadvisor::pricing {
namespace {

namespace v1 = ::gpuadvisor::pricing::v1;
using ::gpuadvisor::catalog::v1::PurchaseOption;

// Checkpoints are assumed to be written at 2 GB/s when the job does not say
// how long a write takes (a conservative figure for a node's NVMe or a
// parallel file system).
constexpr double kDefaultCheckpointWriteGbPerSecond = 2.0;
// Longest run a quote accepts; far above any real job, it keeps every
// product finite.
constexpr double kMaxHours = 1e6;
// Above this expected loss per hour of work the first-order rework estimate
// is too optimistic to be trusted without saying so.
constexpr double kHighRiskReworkFraction = 0.25;

constexpr char kNonRestartableWarning[] =
    "spot for a non-restartable job: a preemption loses the whole run";
constexpr char kAlwaysOnWarning[] =
    "spot for an always-on endpoint: a preemption interrupts serving until a replacement starts";

// Egress of `gb` moved out in one month under `rule`: the GB past the free
// allowance, each at the rate of the volume tier it falls in (tiers count
// from the month's first GB).
double MonthlyEgressUsd(const v1::BillingRule& rule, double gb) {
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
// (730 h each) and every month, the last partial one included, is billed on
// its own; a job of a month or less is one month.
double EgressUsd(const v1::BillingRule& rule, double gb, double hours) {
  const double months = hours / kHoursPerMonth;
  if (!(months > 1.0) || !std::isfinite(months)) return MonthlyEgressUsd(rule, gb);
  const double full = std::floor(months);
  const double per_month = gb / months;
  return full * MonthlyEgressUsd(rule, per_month) +
         MonthlyEgressUsd(rule, per_month * (months - full));
}

// 64-bit FNV-1a over the deterministic serialization of everything but the
// version: stable across processes and builds, unlike absl::Hash.
std::string ContentHash(const v1::PriceBook& book) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    book.SerializeToCodedStream(&coded);
  }
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return hex;
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

// What Quote derives once per request from the JobProfile.
struct JobConstants {
  double storage_gb = 0;
  double checkpoint_write_hours = 0;
  double interval_hours = 0;  // 0: use the optimal interval
  double egress_gb = 0;
  bool restartable = false;
  bool always_on = false;
};

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

absl::Status PriceBook::Index() {
  if (!data_.prices_as_of().empty() && !ParseAsOf(data_.prices_as_of(), &prices_as_of_)) {
    prices_as_of_ = absl::InfinitePast();
  }

  // Billing rules: by provider, and by provider with an instance-type prefix.
  absl::flat_hash_map<std::string, const v1::BillingRule*> by_provider;
  std::vector<std::pair<std::string, const v1::BillingRule*>> by_prefix;  // "<provider>/<prefix>"
  for (const v1::BillingRule& rule : data_.billing()) {
    std::string key = absl::AsciiStrToLower(rule.provider());
    if (key.find('/') == std::string::npos) {
      by_provider.emplace(std::move(key), &rule);
    } else {
      by_prefix.emplace_back(std::move(key), &rule);
    }
  }
  // Spot risks by lower-case provider.
  absl::flat_hash_map<std::string, std::vector<const v1::SpotRisk*>> risks;
  for (const v1::SpotRisk& risk : data_.spot_risks()) {
    risks[absl::AsciiStrToLower(risk.provider())].push_back(&risk);
  }
  auto find_risk = [&](const std::string& provider,
                       absl::string_view gpu_model) -> const v1::SpotRisk* {
    auto it = risks.find(provider);
    if (it == risks.end()) return nullptr;
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
  };

  offers_.reserve(static_cast<size_t>(data_.prices_size()));
  for (int i = 0; i < data_.prices_size(); ++i) {
    const v1::OfferPrice& price = data_.prices(i);
    OfferEntry entry;
    entry.price = &price;
    entry.index = i;
    const std::string provider = absl::AsciiStrToLower(price.provider());
    const std::string type_key =
        absl::StrCat(provider, "/", absl::AsciiStrToLower(IdInstanceType(price.offer_id())));
    size_t best_len = 0;
    for (const auto& [key, rule] : by_prefix) {
      if (key.size() > best_len && absl::StartsWith(type_key, key)) {
        best_len = key.size();
        entry.billing = rule;
      }
    }
    if (entry.billing == nullptr) {
      auto it = by_provider.find(provider);
      entry.billing = it != by_provider.end() ? it->second : &data_.default_billing();
    }
    const v1::SpotRisk* risk = find_risk(provider, price.gpu_model());
    if (risk == nullptr) risk = find_risk("*", price.gpu_model());
    if (risk != nullptr) {
      entry.has_spot_risk = true;
      entry.interruptions_per_hour =
          risk->interruption_frequency() > 0
              ? InterruptionFractionToRatePerHour(risk->interruption_frequency(),
                                                  risk->instance_lifetime_hours())
              : risk->interruptions_per_hour();
      entry.has_notice = risk->has_notice_seconds();
      entry.notice_seconds = risk->notice_seconds();
      entry.capacity_restart_factor = risk->capacity_restart_factor();
    }
    if (!offers_.emplace(price.offer_id(), entry).second) {
      return absl::InternalError(absl::StrCat("duplicate offer id ", price.offer_id()));
    }
  }
  return absl::OkStatus();
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
  // Job-wide values, validated and derived once.
  const std::pair<const char*, double> job_fields[] = {
      {"dataset_gb", job.dataset_gb()},
      {"checkpoint_gb", job.checkpoint_gb()},
      {"egress_gb", job.egress_gb()},
      {"checkpoint_interval_minutes", job.checkpoint_interval_minutes()},
      {"checkpoint_write_minutes", job.checkpoint_write_minutes()},
  };
  for (const auto& [name, value] : job_fields) {
    if (!FiniteNonNegative(value)) {
      return absl::InvalidArgumentError(absl::StrCat("job.", name, ": must be finite and >= 0"));
    }
  }
  JobConstants jc;
  jc.storage_gb = job.dataset_gb() + 2.0 * job.checkpoint_gb();
  jc.checkpoint_write_hours =
      job.checkpoint_write_minutes() > 0
          ? job.checkpoint_write_minutes() / 60.0
          : job.checkpoint_gb() / kDefaultCheckpointWriteGbPerSecond / 3600.0;
  jc.interval_hours = job.checkpoint_interval_minutes() / 60.0;
  jc.egress_gb = job.egress_gb();
  jc.restartable = job.restartable();
  jc.always_on = job.always_on();

  response.set_price_book_version(data_.version());
  response.set_catalog_version(data_.catalog_version());
  response.set_quote_rules_version(kQuoteRulesVersion);
  response.set_prices_as_of(data_.prices_as_of());
  if (prices_as_of_ != absl::InfinitePast() && now > prices_as_of_) {
    response.set_price_book_age_seconds(absl::ToInt64Seconds(now - prices_as_of_));
  }
  response.mutable_quotes()->Reserve(count);
  // The spot warnings of one cluster size and rate repeat on every regional
  // copy of an offer: each text is formatted once per request.
  absl::flat_hash_map<std::pair<int32_t, double>, std::string> capacity_warnings, frequent_warnings;
  auto once = [](absl::flat_hash_map<std::pair<int32_t, double>, std::string>& texts, int32_t nodes,
                 double value, const auto& format) -> const std::string& {
    auto [it, inserted] = texts.try_emplace({nodes, value});
    if (inserted) it->second = format();
    return it->second;
  };

  for (int i = 0; i < count; ++i) {
    const Item item = items(i);
    if (item.nodes < 1) {
      return absl::InvalidArgumentError(absl::StrCat("items[", i, "].nodes: must be >= 1"));
    }
    if (!std::isfinite(item.hours) || item.hours < 0 || item.hours > kMaxHours) {
      return absl::InvalidArgumentError(
          absl::StrCat("items[", i, "].hours: must be finite, >= 0 and <= 1e6"));
    }
    if (!catalog::v1::PurchaseOption_IsValid(item.purchase_option)) {
      return absl::InvalidArgumentError(
          absl::StrCat("items[", i, "].purchase_option: unknown value ", item.purchase_option));
    }
    const PurchaseOption option = item.purchase_option == catalog::v1::PURCHASE_OPTION_UNSPECIFIED
                                      ? catalog::v1::PURCHASE_OPTION_ON_DEMAND
                                      : item.purchase_option;

    v1::Quote* quote = response.add_quotes();
    if (echo_offer_ids) quote->set_offer_id(item.offer_id.data(), item.offer_id.size());
    quote->set_purchase_option(option);

    auto found = offers_.find(item.offer_id);
    if (found == offers_.end()) {
      quote->set_unpriced_reason("unknown offer id");
      continue;
    }
    const OfferEntry& entry = found->second;
    const v1::OfferPrice& price = *entry.price;
    const v1::BillingRule& rule = *entry.billing;

    double unit_price = 0;  // USD per node-hour
    switch (option) {
      case catalog::v1::PURCHASE_OPTION_SPOT:
        unit_price = price.spot_usd_per_hour();
        if (unit_price <= 0) quote->set_unpriced_reason("not sold as spot");
        break;
      case catalog::v1::PURCHASE_OPTION_RESERVED:
        unit_price = price.reserved_usd_per_hour();
        if (unit_price <= 0 && rule.reserved_discount() > 0) {
          unit_price = price.on_demand_usd_per_hour() * (1.0 - rule.reserved_discount());
        }
        if (unit_price <= 0) {
          quote->set_unpriced_reason(
              "no reserved price published and no commitment discount stated");
        }
        break;
      default:
        unit_price = price.on_demand_usd_per_hour();
        if (unit_price <= 0) quote->set_unpriced_reason("not sold on demand");
        break;
    }
    if (unit_price <= 0) continue;

    const double nodes = item.nodes;
    const double hours = item.hours;
    double work_hours = hours;  // W: billed as compute
    double rework_hours = 0;    // restartable spot: lost work + restarts
    double expected_hours = hours;
    double preemption_usd = 0;
    double compute_usd = 0;
    double billed_seconds = 0;

    if (option == catalog::v1::PURCHASE_OPTION_SPOT) {
      const double rate = nodes * entry.interruptions_per_hour;  // cluster
      const double optimal =
          rate > 0 ? YoungDalyIntervalHours(jc.checkpoint_write_hours, 1.0 / rate) : 0.0;
      quote->set_interruptions_per_hour(rate);
      quote->set_optimal_checkpoint_interval_minutes(optimal * 60.0);
      if (entry.has_notice) quote->set_notice_seconds(entry.notice_seconds);
      // Capacity risk: after a preemption every node of the cluster must be
      // obtained again at once, which takes longer the more nodes there are.
      const double restart_hours =
          rule.restart_minutes() / 60.0 * (1.0 + entry.capacity_restart_factor * (nodes - 1));
      quote->set_restart_minutes(restart_hours * 60.0);
      if (item.nodes > 1 && entry.capacity_restart_factor > 0) {
        quote->add_warnings(once(capacity_warnings, item.nodes, restart_hours, [&] {
          return absl::StrFormat(
              "spot on %d nodes: each preemption stops the whole job until %d spot nodes are "
              "available again at once (restart %.0f min assumed)",
              item.nodes, item.nodes, restart_hours * 60.0);
        }));
      }
      if (!entry.has_spot_risk) {
        quote->add_warnings(absl::StrCat("no spot interruption rate for ", price.provider(), " ",
                                         price.gpu_model(), ": preemption cost not estimated"));
      }
      if (jc.restartable) {
        const double interval = jc.interval_hours > 0 ? jc.interval_hours : optimal;
        if (interval > 0 && std::isfinite(interval)) {
          work_hours = hours + hours / interval * jc.checkpoint_write_hours;
        }
        // A notice long enough to write a checkpoint saves the work since the
        // last one: only the save and the restart are lost. Otherwise half a
        // checkpoint interval is lost on average.
        const bool saved_on_notice = entry.has_notice && jc.checkpoint_write_hours > 0 &&
                                     entry.notice_seconds >= jc.checkpoint_write_hours * 3600.0;
        const double lost_work =
            saved_on_notice ? jc.checkpoint_write_hours : std::min(interval, work_hours) / 2.0;
        const double loss_per_interruption = lost_work + restart_hours;
        rework_hours = rate * work_hours * loss_per_interruption;
        expected_hours = work_hours + rework_hours;
        billed_seconds =
            BilledSeconds(work_hours * 3600.0, rule.granularity_seconds(), rule.minimum_seconds());
        compute_usd = nodes * unit_price * billed_seconds / 3600.0;
        const double billed_with_rework = BilledSeconds(
            expected_hours * 3600.0, rule.granularity_seconds(), rule.minimum_seconds());
        preemption_usd = nodes * unit_price * (billed_with_rework - billed_seconds) / 3600.0;
        if (rate * loss_per_interruption > kHighRiskReworkFraction) {
          quote->add_warnings(once(frequent_warnings, item.nodes, rate, [&] {
            return absl::StrFormat(
                "frequent spot interruptions (every %.1f h on %d nodes): the preemption "
                "estimate is optimistic",
                1.0 / rate, item.nodes);
          }));
        }
      } else {
        billed_seconds =
            BilledSeconds(hours * 3600.0, rule.granularity_seconds(), rule.minimum_seconds());
        compute_usd = nodes * unit_price * billed_seconds / 3600.0;
        const double p_lost = ProbabilityOfInterruption(rate, hours);
        preemption_usd = p_lost * compute_usd;
        expected_hours = hours * (1.0 + p_lost);
        quote->add_warnings(kNonRestartableWarning);
      }
      if (jc.always_on) quote->add_warnings(kAlwaysOnWarning);
    } else {
      billed_seconds =
          BilledSeconds(hours * 3600.0, rule.granularity_seconds(), rule.minimum_seconds());
      compute_usd = nodes * unit_price * billed_seconds / 3600.0;
    }

    const double storage_usd =
        jc.storage_gb * rule.storage_usd_per_gb_month() * expected_hours / kHoursPerMonth;
    const double egress_usd = EgressUsd(rule, jc.egress_gb, expected_hours);

    quote->set_priced(true);
    v1::CostBreakdown* cost = quote->mutable_cost();
    cost->set_compute_usd(compute_usd);
    cost->set_storage_usd(storage_usd);
    cost->set_egress_usd(egress_usd);
    cost->set_preemption_usd(preemption_usd);
    cost->set_total_usd(compute_usd + storage_usd + egress_usd + preemption_usd);
    cost->set_usd_per_hour(nodes * unit_price);
    cost->set_billed_hours(billed_seconds / 3600.0);
    cost->set_expected_hours(expected_hours);
  }
  return absl::OkStatus();
}

}  // namespace gpuadvisor::pricing
