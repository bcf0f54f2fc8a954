#include "services/gateway/recommend_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuadvisor::gateway::recommend {

using catalog::v1::FabricType;
using catalog::v1::LinkType;
using catalog::v1::PurchaseOption;

namespace {

// Fixed() without to_chars when the answer is certain from the product
// value x 10^precision: below 2^40 that product is off from the exact one by
// at most 2^-13, so unless its fraction is within 1e-3 of one half it rounds
// to the same integer as the exact value does, and the digits are that
// integer's. Writes them to the end of `buffer` and returns where they
// start; near a half (and for large or non-finite values) nullptr: the
// caller asks to_chars, which rounds the exact binary value.
constexpr size_t kProductBuffer = 32;  // 13 digits, a point, a sign, 6 decimals
// "00" "01" ... "99": two digits per division.
constexpr char kDigitPairs[] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546"
    "4748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293"
    "949596979899";
char* FixedFromProduct(double value, int precision, char* end) {
  static constexpr double kPow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
  if (precision < 0 || precision > 6) return nullptr;
  const double scaled = std::abs(value) * kPow10[precision];
  if (!(scaled < 0x1p40)) return nullptr;
  // Truncation is the floor here (0 <= scaled < 2^40).
  const uint64_t whole = static_cast<uint64_t>(scaled);
  const double fraction = scaled - static_cast<double>(whole);
  if (std::abs(fraction - 0.5) < 1e-3) return nullptr;
  uint64_t digits = whole + (fraction > 0.5 ? 1 : 0);
  char* p = end;
  auto pair = [&] {
    p -= 2;
    const size_t at = 2 * static_cast<size_t>(digits % 100);
    p[0] = kDigitPairs[at];
    p[1] = kDigitPairs[at + 1];
    digits /= 100;
  };
  int decimals = precision;
  for (; decimals >= 2; decimals -= 2) pair();
  if (decimals == 1) {
    *--p = static_cast<char>('0' + digits % 10);
    digits /= 10;
  }
  if (precision > 0) *--p = '.';
  while (digits >= 100) pair();
  if (digits >= 10) {
    pair();
  } else {
    *--p = static_cast<char>('0' + digits);
  }
  if (std::signbit(value)) *--p = '-';
  return p;
}

}  // namespace

std::string Fixed(double value, int precision) {
  char product[kProductBuffer];
  char* const product_end = product + sizeof(product);
  if (char* start = FixedFromProduct(value, precision, product_end)) {
    return std::string(start, product_end);
  }
  char buffer[48];
  const std::to_chars_result out =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed, precision);
  if (out.ec != std::errc()) return absl::StrFormat("%.*f", precision, value);
  return std::string(buffer, out.ptr);
}

std::string General(double value) {
  if (std::abs(value) < 1e6 && value == std::trunc(value) && !(value == 0 && std::signbit(value))) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return absl::StrFormat("%g", value);
}

std::string SignedFixed(double value, int precision) {
  std::string text = Fixed(value, precision);
  if (text.empty() || text[0] != '-') text.insert(text.begin(), '+');
  return text;
}

std::string Percent(double fraction) { return absl::StrCat(Fixed(100 * fraction, 0), "%"); }

std::string LinkName(LinkType link) {
  switch (link) {
    case catalog::v1::LINK_TYPE_NVLINK:
      return "NVLink";
    case catalog::v1::LINK_TYPE_PCIE:
      return "PCIe";
    case catalog::v1::LINK_TYPE_INFINITY_FABRIC:
      return "Infinity Fabric";
    default:
      return "no link";
  }
}

std::string FabricName(FabricType fabric) {
  switch (fabric) {
    case catalog::v1::FABRIC_TYPE_INFINIBAND:
      return "InfiniBand";
    case catalog::v1::FABRIC_TYPE_EFA:
      return "EFA";
    case catalog::v1::FABRIC_TYPE_ROCE:
      return "RoCE";
    case catalog::v1::FABRIC_TYPE_ETHERNET:
      return "Ethernet";
    default:
      return "no fabric";
  }
}

std::string Gigabytes(double gb) { return Fixed(gb, gb < 100 ? 1 : 0); }

const char* OptionName(PurchaseOption option) {
  switch (option) {
    case catalog::v1::PURCHASE_OPTION_SPOT:
      return "spot";
    case catalog::v1::PURCHASE_OPTION_RESERVED:
      return "reserved";
    default:
      return "on-demand";
  }
}

}  // namespace gpuadvisor::gateway::recommend
