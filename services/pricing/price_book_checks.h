#ifndef GPUADVISOR_SERVICES_PRICING_PRICE_BOOK_CHECKS_H_
#define GPUADVISOR_SERVICES_PRICING_PRICE_BOOK_CHECKS_H_

// Validation of a price book with structured field paths, shared by
// PriceBook::Create (every process that holds a book: the writer, its
// followers, the gateway) and the writer's loader and updates
// (price_loader.h), which turn a path into a file line. Internal to the
// pricing libraries; pure functions, thread-safe.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"

namespace gpuadvisor::pricing {

// One step of a field path: `field`, or `field[index]` for a repeated one.
struct PathElement {
  std::string field;
  int index = -1;  // -1: not a repeated element
};

struct FieldError {
  std::vector<PathElement> path;
  std::string message;
};

// "billing[1].granularity_seconds" (from the `from`-th element on).
std::string FormatPath(const std::vector<PathElement>& path, size_t from = 0);
std::vector<PathElement> Join(const std::vector<PathElement>& base, std::string field);
bool FiniteNonNegative(double v);

// "must be finite and >= 0" for a negative, NaN or infinite amount.
std::optional<FieldError> CheckAmount(const std::vector<PathElement>& base, const char* field,
                                      double value);
// An hourly instance price: finite, >= 0 and <= kMaxUsdPerHour, so no total
// computed from it can overflow to inf or NaN.
std::optional<FieldError> CheckHourly(const std::vector<PathElement>& base, const char* field,
                                      double value);

// The provider part of an offer id "<provider>/<instance_type>/<region>".
absl::string_view IdProvider(absl::string_view offer_id);
// The instance-type part of an offer id, empty if there is none.
absl::string_view IdInstanceType(absl::string_view offer_id);

std::optional<FieldError> ValidatePrice(const v1::OfferPrice& price,
                                        const std::vector<PathElement>& base);
// prices_as_of: "YYYY-MM-DD" or RFC 3339.
bool ParseAsOf(const std::string& text, absl::Time* out);
// The whole book (see PriceBook::Create for the checks); nullopt when valid.
std::optional<FieldError> Validate(const v1::PriceBook& book);
// kInvalidArgument "<path>: <message>".
absl::Status ToStatus(const FieldError& error);
// Fills an empty provider from the offer id.
void Normalize(v1::PriceBook* book);

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICE_BOOK_CHECKS_H_
