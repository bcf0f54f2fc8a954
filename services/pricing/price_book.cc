#include "services/pricing/price_book.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/io/text_proto.h"
#include "common/status/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"
#include "services/pricing/billing_math.h"

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

// ---------------------------------------------------------------------------
// Validation with structured field paths, so that LoadPriceBook can turn a
// path into a file line.

struct PathElement {
  std::string field;
  int index = -1;  // -1: not a repeated element
};

struct FieldError {
  std::vector<PathElement> path;
  std::string message;
};

std::string FormatPath(const std::vector<PathElement>& path, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < path.size(); ++i) {
    if (!out.empty()) out += '.';
    out += path[i].field;
    if (path[i].index >= 0) absl::StrAppend(&out, "[", path[i].index, "]");
  }
  return out;
}

std::vector<PathElement> Join(const std::vector<PathElement>& base, std::string field) {
  std::vector<PathElement> path = base;
  path.push_back({std::move(field), -1});
  return path;
}

bool FiniteNonNegative(double v) { return std::isfinite(v) && v >= 0; }

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

std::optional<FieldError> CheckAmount(const std::vector<PathElement>& base, const char* field,
                                      double value) {
  if (FiniteNonNegative(value)) return std::nullopt;
  return FieldError{Join(base, field), "must be finite and >= 0"};
}

// An hourly instance price: finite, >= 0 and plausible (kMaxUsdPerHour), so
// no total computed from it can overflow to inf or NaN.
std::optional<FieldError> CheckHourly(const std::vector<PathElement>& base, const char* field,
                                      double value) {
  if (auto e = CheckAmount(base, field, value)) return e;
  if (value <= kMaxUsdPerHour) return std::nullopt;
  return FieldError{Join(base, field), absl::StrCat("must be <= ", kMaxUsdPerHour,
                                                    " (USD per instance-hour; got ", value, ")")};
}

// The provider part of an offer id "<provider>/<instance_type>/<region>".
absl::string_view IdProvider(absl::string_view offer_id) {
  return offer_id.substr(0, std::min(offer_id.find('/'), offer_id.size()));
}

// The instance-type part of an offer id, empty if there is none.
absl::string_view IdInstanceType(absl::string_view offer_id) {
  const size_t first = offer_id.find('/');
  if (first == absl::string_view::npos) return {};
  const size_t second = offer_id.find('/', first + 1);
  return offer_id.substr(
      first + 1, second == absl::string_view::npos ? absl::string_view::npos : second - first - 1);
}

std::optional<FieldError> ValidateRule(const v1::BillingRule& rule,
                                       const std::vector<PathElement>& base, bool is_default) {
  if (!is_default) {
    absl::string_view provider = rule.provider();
    const size_t slash = provider.find('/');
    if (provider.empty()) return FieldError{Join(base, "provider"), "must not be empty"};
    if (slash == 0 || slash + 1 == provider.size() ||
        (slash != absl::string_view::npos &&
         provider.find('/', slash + 1) != absl::string_view::npos)) {
      return FieldError{Join(base, "provider"),
                        "must be \"<provider>\" or \"<provider>/<instance type prefix>\""};
    }
  }
  if (rule.granularity_seconds() < 1) {
    return FieldError{Join(base, "granularity_seconds"), "must be >= 1"};
  }
  if (rule.minimum_seconds() < 0) {
    return FieldError{Join(base, "minimum_seconds"), "must be >= 0"};
  }
  if (auto e = CheckAmount(base, "storage_usd_per_gb_month", rule.storage_usd_per_gb_month())) {
    return e;
  }
  if (auto e = CheckAmount(base, "egress_usd_per_gb", rule.egress_usd_per_gb())) return e;
  if (auto e = CheckAmount(base, "egress_free_gb", rule.egress_free_gb())) return e;
  for (int i = 0; i < rule.egress_tiers_size(); ++i) {
    const v1::EgressTier& tier = rule.egress_tiers(i);
    std::vector<PathElement> tier_path = Join(base, "egress_tiers");
    tier_path.back().index = i;
    if (auto e = CheckAmount(tier_path, "usd_per_gb", tier.usd_per_gb())) return e;
    const double previous = i == 0 ? 0 : rule.egress_tiers(i - 1).from_gb();
    if (!std::isfinite(tier.from_gb()) || !(tier.from_gb() > previous)) {
      return FieldError{Join(tier_path, "from_gb"), absl::StrCat("must be finite and > ", previous,
                                                                 " (tiers in increasing order)")};
    }
  }
  if (auto e = CheckAmount(base, "restart_minutes", rule.restart_minutes())) return e;
  if (!FiniteNonNegative(rule.reserved_discount()) || rule.reserved_discount() >= 1) {
    return FieldError{Join(base, "reserved_discount"), "must be finite, >= 0 and < 1"};
  }
  return std::nullopt;
}

std::optional<FieldError> ValidatePrice(const v1::OfferPrice& price,
                                        const std::vector<PathElement>& base) {
  if (price.offer_id().empty()) return FieldError{Join(base, "offer_id"), "must not be empty"};
  if (price.provider().empty() && IdProvider(price.offer_id()).empty()) {
    return FieldError{Join(base, "provider"), "must not be empty"};
  }
  if (auto e = CheckAmount(base, "on_demand_usd_per_hour", price.on_demand_usd_per_hour())) {
    return e;
  }
  if (auto e = CheckAmount(base, "spot_usd_per_hour", price.spot_usd_per_hour())) return e;
  if (auto e = CheckAmount(base, "reserved_usd_per_hour", price.reserved_usd_per_hour())) {
    return e;
  }
  return std::nullopt;
}

bool ParseAsOf(const std::string& text, absl::Time* out) {
  std::string err;
  return absl::ParseTime("%Y-%m-%d", text, absl::UTCTimeZone(), out, &err) ||
         absl::ParseTime(absl::RFC3339_full, text, absl::UTCTimeZone(), out, &err);
}

std::optional<FieldError> Validate(const v1::PriceBook& book) {
  if (!book.prices_as_of().empty()) {
    absl::Time unused;
    if (!ParseAsOf(book.prices_as_of(), &unused)) {
      return FieldError{{{"prices_as_of", -1}}, "must be an ISO date (YYYY-MM-DD) or RFC 3339"};
    }
  }
  if (auto e = ValidateRule(book.default_billing(), {{"default_billing", -1}}, true)) return e;

  absl::flat_hash_map<std::string, int> rule_keys;
  for (int i = 0; i < book.billing_size(); ++i) {
    const std::vector<PathElement> base = {{"billing", i}};
    if (auto e = ValidateRule(book.billing(i), base, false)) return e;
    auto [it, inserted] = rule_keys.emplace(absl::AsciiStrToLower(book.billing(i).provider()), i);
    if (!inserted) {
      return FieldError{Join(base, "provider"),
                        absl::StrCat("duplicate \"", book.billing(i).provider(),
                                     "\" (first at billing[", it->second, "])")};
    }
  }

  absl::flat_hash_map<std::string, int> risk_keys;
  for (int i = 0; i < book.spot_risks_size(); ++i) {
    const v1::SpotRisk& risk = book.spot_risks(i);
    const std::vector<PathElement> base = {{"spot_risks", i}};
    if (risk.provider().empty()) return FieldError{Join(base, "provider"), "must not be empty"};
    if (risk.gpu_model().empty()) {
      return FieldError{Join(base, "gpu_model"), "must not be empty (\"*\" for any)"};
    }
    if (auto e = CheckAmount(base, "interruptions_per_hour", risk.interruptions_per_hour())) {
      return e;
    }
    if (auto e = CheckAmount(base, "interruption_frequency", risk.interruption_frequency())) {
      return e;
    }
    if (risk.interruption_frequency() >= 1) {
      return FieldError{Join(base, "interruption_frequency"), "must be < 1 (a fraction)"};
    }
    if (auto e = CheckAmount(base, "instance_lifetime_hours", risk.instance_lifetime_hours())) {
      return e;
    }
    if (risk.interruption_frequency() > 0) {
      if (risk.instance_lifetime_hours() <= 0) {
        return FieldError{Join(base, "instance_lifetime_hours"),
                          "must be > 0 with interruption_frequency"};
      }
      if (risk.interruptions_per_hour() > 0) {
        return FieldError{Join(base, "interruptions_per_hour"),
                          "must be 0 with interruption_frequency (it is derived)"};
      }
    }
    if (risk.has_notice_seconds()) {
      if (auto e = CheckAmount(base, "notice_seconds", risk.notice_seconds())) return e;
    }
    if (auto e = CheckAmount(base, "capacity_restart_factor", risk.capacity_restart_factor())) {
      return e;
    }
    auto [it, inserted] =
        risk_keys.emplace(absl::StrCat(absl::AsciiStrToLower(risk.provider()), "\n",
                                       absl::AsciiStrToLower(risk.gpu_model())),
                          i);
    if (!inserted) {
      return FieldError{Join(base, "gpu_model"),
                        absl::StrCat("duplicate (\"", risk.provider(), "\", \"", risk.gpu_model(),
                                     "\") (first at spot_risks[", it->second, "])")};
    }
  }

  absl::flat_hash_map<absl::string_view, int> offer_ids;
  offer_ids.reserve(static_cast<size_t>(book.prices_size()));
  for (int i = 0; i < book.prices_size(); ++i) {
    const std::vector<PathElement> base = {{"prices", i}};
    if (auto e = ValidatePrice(book.prices(i), base)) return e;
    auto [it, inserted] = offer_ids.emplace(book.prices(i).offer_id(), i);
    if (!inserted) {
      return FieldError{Join(base, "offer_id"),
                        absl::StrCat("duplicate \"", book.prices(i).offer_id(),
                                     "\" (first at prices[", it->second, "])")};
    }
  }
  return std::nullopt;
}

absl::Status ToStatus(const FieldError& error) {
  return absl::InvalidArgumentError(absl::StrCat(FormatPath(error.path), ": ", error.message));
}

// Fills an empty provider from the offer id; providers are matched
// lower-case.
void Normalize(v1::PriceBook* book) {
  for (v1::OfferPrice& price : *book->mutable_prices()) {
    if (price.provider().empty()) {
      absl::string_view provider = IdProvider(price.offer_id());
      price.set_provider(provider.data(), provider.size());
    }
  }
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

std::vector<v1::OfferPrice> PricesFromOffers(const catalog::v1::CatalogSnapshot& catalog) {
  std::vector<v1::OfferPrice> prices;
  prices.reserve(static_cast<size_t>(catalog.offers_size()));
  for (const catalog::v1::Offer& offer : catalog.offers()) {
    v1::OfferPrice& price = prices.emplace_back();
    if (!offer.id().empty()) {
      price.set_offer_id(offer.id());
    } else {
      price.set_offer_id(absl::StrCat(absl::AsciiStrToLower(offer.provider()), "/",
                                      offer.instance_type(), "/", offer.region()));
    }
    price.set_provider(absl::AsciiStrToLower(offer.provider()));
    price.set_gpu_model(offer.gpu_model());
    price.set_on_demand_usd_per_hour(offer.on_demand_usd_per_hour());
    price.set_spot_usd_per_hour(offer.spot_usd_per_hour());
    price.set_reserved_usd_per_hour(offer.reserved_usd_per_hour());
  }
  return prices;
}

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

absl::StatusOr<std::shared_ptr<const PriceBook>> PriceBook::WithUpdates(
    const v1::UpdatePricesRequest& update) const {
  if (update.prices_size() == 0) {
    return absl::InvalidArgumentError("prices: must not be empty");
  }
  absl::flat_hash_map<absl::string_view, int> seen;
  for (int i = 0; i < update.prices_size(); ++i) {
    const v1::OfferPrice& price = update.prices(i);
    if (auto e = ValidatePrice(price, {{"prices", i}})) return ToStatus(*e);
    // Operator input: also within a plausible range.
    for (auto [field, value] :
         {std::pair<const char*, double>{"on_demand_usd_per_hour", price.on_demand_usd_per_hour()},
          {"spot_usd_per_hour", price.spot_usd_per_hour()},
          {"reserved_usd_per_hour", price.reserved_usd_per_hour()}}) {
      if (auto e = CheckHourly({{"prices", i}}, field, value)) return ToStatus(*e);
    }
    auto [it, inserted] = seen.emplace(price.offer_id(), i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat("prices[", i, "].offer_id: duplicate \"",
                                                     price.offer_id(), "\" (first at prices[",
                                                     it->second, "])"));
    }
    if (!offers_.contains(absl::string_view(price.offer_id()))) {
      return absl::InvalidArgumentError(
          absl::StrCat("prices[", i, "].offer_id: unknown offer \"", price.offer_id(),
                       "\" (updates may only reprice offers of the catalog)"));
    }
  }
  if (!update.prices_as_of().empty()) {
    absl::Time unused;
    if (!ParseAsOf(update.prices_as_of(), &unused)) {
      return absl::InvalidArgumentError(
          "prices_as_of: must be an ISO date (YYYY-MM-DD) or RFC 3339");
    }
  }

  v1::PriceBook data = data_;
  for (const v1::OfferPrice& price : update.prices()) {
    auto it = offers_.find(absl::string_view(price.offer_id()));
    if (it == offers_.end()) {
      // Checked above; kept as a guard.
      return absl::InvalidArgumentError(absl::StrCat("unknown offer \"", price.offer_id(), "\""));
    }
    // Same position as in this book: offers_ points into data_.prices().
    v1::OfferPrice* target = data.mutable_prices(it->second.index);
    std::string provider = price.provider().empty() ? target->provider() : price.provider();
    std::string gpu_model = price.gpu_model().empty() ? target->gpu_model() : price.gpu_model();
    *target = price;
    target->set_provider(std::move(provider));
    target->set_gpu_model(std::move(gpu_model));
  }
  if (!update.source().empty()) data.set_source(update.source());
  if (!update.prices_as_of().empty()) data.set_prices_as_of(update.prices_as_of());
  return Create(std::move(data));
}

// ---------------------------------------------------------------------------
// LoadPriceBook

namespace {

// "<path>:<line>:<col>" of the deepest field of `path` present in `text`, or
// just "<path>" when none is (a field left at its default is not in the file).
std::string Locate(const std::string& file_path, const std::string& text,
                   const std::vector<PathElement>& path) {
  v1::PriceBook parsed;
  google::protobuf::TextFormat::Parser parser;
  google::protobuf::TextFormat::ParseInfoTree tree;
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(text, &parsed)) return file_path;
  const google::protobuf::Descriptor* descriptor = v1::PriceBook::descriptor();
  const google::protobuf::TextFormat::ParseInfoTree* node = &tree;
  google::protobuf::TextFormat::ParseLocation best;
  for (const PathElement& element : path) {
    if (node == nullptr || descriptor == nullptr) break;
    const google::protobuf::FieldDescriptor* field = descriptor->FindFieldByName(element.field);
    if (field == nullptr) break;
    const int index = field->is_repeated() ? element.index : -1;
    const google::protobuf::TextFormat::ParseLocation location = node->GetLocation(field, index);
    if (location.line < 0) break;
    best = location;
    if (field->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) break;
    node = node->GetTreeForNested(field, index);
    descriptor = field->message_type();
  }
  if (best.line < 0) return file_path;
  return absl::StrCat(file_path, ":", best.line + 1, ":", best.column + 1);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const PriceBook>> LoadPriceBook(
    const std::string& billing_path, const catalog::v1::CatalogSnapshot& catalog) {
  absl::StatusOr<std::string> text = ReadFile(billing_path);
  if (!text.ok()) return text.status();
  v1::PriceBook data;
  if (absl::Status s = ParseTextProto(*text, billing_path, &data); !s.ok()) return s;

  // The file's own prices (overrides, normally none) come first so that error
  // paths prices[i] with i < file_prices point into the file.
  const int file_prices = data.prices_size();
  absl::flat_hash_set<std::string> overridden;
  for (const v1::OfferPrice& price : data.prices()) overridden.insert(price.offer_id());
  for (v1::OfferPrice& price : PricesFromOffers(catalog)) {
    if (!overridden.contains(price.offer_id())) *data.add_prices() = std::move(price);
  }
  data.set_catalog_version(catalog.version());
  if (!catalog.prices_as_of().empty()) data.set_prices_as_of(catalog.prices_as_of());
  if (!catalog.source().empty()) {
    data.set_source(data.source().empty()
                        ? catalog.source()
                        : absl::StrCat(data.source(), "; offer prices: ", catalog.source()));
  }

  Normalize(&data);
  if (std::optional<FieldError> error = Validate(data)) {
    const bool from_catalog = !error->path.empty() && error->path[0].field == "prices" &&
                              error->path[0].index >= file_prices;
    if (from_catalog) {
      return absl::InvalidArgumentError(
          absl::StrCat("catalog offer \"", data.prices(error->path[0].index).offer_id(),
                       "\": ", FormatPath(error->path, 1), ": ", error->message));
    }
    const bool catalog_date = error->path.size() == 1 && error->path[0].field == "prices_as_of" &&
                              !catalog.prices_as_of().empty();
    if (catalog_date) {
      return absl::InvalidArgumentError(
          absl::StrCat("catalog prices_as_of \"", catalog.prices_as_of(), "\": ", error->message));
    }
    return absl::InvalidArgumentError(absl::StrCat(Locate(billing_path, *text, error->path), ": ",
                                                   FormatPath(error->path), ": ", error->message));
  }
  return PriceBook::Create(std::move(data));
}

}  // namespace gpuadvisor::pricing
