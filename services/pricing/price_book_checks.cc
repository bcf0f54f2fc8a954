#include "services/pricing/price_book_checks.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "services/pricing/commitment.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::pricing {

std::string FormatPath(const std::vector<PathElement>& path, size_t from) {
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
  if (auto e = CheckAmount(base, "checkpoint_write_gb_per_second",
                           rule.checkpoint_write_gb_per_second())) {
    return e;
  }
  if (auto e =
          CheckAmount(base, "checkpoint_interval_minutes", rule.checkpoint_interval_minutes())) {
    return e;
  }
  if (!FiniteNonNegative(rule.reserved_discount()) || rule.reserved_discount() >= 1) {
    return FieldError{Join(base, "reserved_discount"), "must be finite, >= 0 and < 1"};
  }
  for (int i = 0; i < rule.commitments_size(); ++i) {
    std::vector<PathElement> path = base;
    path.push_back({"commitments", i});
    if (auto e = ValidateTerm(rule.commitments(i), path, /*provider_wide=*/true, false)) return e;
  }
  if (rule.has_reserved_price_term()) {
    if (auto e = ValidateTerm(rule.reserved_price_term(), Join(base, "reserved_price_term"), false,
                              /*template_term=*/true)) {
      return e;
    }
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
  for (int i = 0; i < price.commitments_size(); ++i) {
    std::vector<PathElement> path = base;
    path.push_back({"commitments", i});
    if (auto e = ValidateTerm(price.commitments(i), path, false, false)) return e;
  }
  return std::nullopt;
}

bool ParseAsOf(const std::string& text, absl::Time* out) {
  std::string err;
  return absl::ParseTime("%Y-%m-%d", text, absl::UTCTimeZone(), out, &err) ||
         absl::ParseTime(absl::RFC3339_full, text, absl::UTCTimeZone(), out, &err);
}

namespace {

// One spot risk's own fields (its uniqueness is checked by the caller).
std::optional<FieldError> ValidateRisk(const v1::SpotRisk& risk,
                                       const std::vector<PathElement>& base) {
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
  return std::nullopt;
}

// The quote rules' constants: required, each finite and in its range.
std::optional<FieldError> ValidateQuoteConstants(const v1::PriceBook& book) {
  const std::vector<PathElement> base = {{"quote_constants", -1}};
  if (!book.has_quote_constants()) {
    return FieldError{base, "must be set (the quote rules' constants, with their source)"};
  }
  const v1::QuoteConstants& q = book.quote_constants();
  if (!std::isfinite(q.hours_per_month()) || !(q.hours_per_month() > 0)) {
    return FieldError{Join(base, "hours_per_month"), "must be finite and > 0"};
  }
  if (auto e = CheckAmount(base, "checkpoints_kept", q.checkpoints_kept())) return e;
  if (!std::isfinite(q.high_risk_rework_fraction()) || !(q.high_risk_rework_fraction() > 0)) {
    return FieldError{Join(base, "high_risk_rework_fraction"), "must be finite and > 0"};
  }
  if (!std::isfinite(q.max_restarts_per_segment()) || !(q.max_restarts_per_segment() >= 1)) {
    return FieldError{Join(base, "max_restarts_per_segment"), "must be finite and >= 1"};
  }
  return std::nullopt;
}

}  // namespace

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
    if (auto e = ValidateRisk(risk, base)) return e;
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
  return ValidateQuoteConstants(book);
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
}  // namespace gpuadvisor::pricing
