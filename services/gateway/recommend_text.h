#ifndef GPUADVISOR_SERVICES_GATEWAY_RECOMMEND_TEXT_H_
#define GPUADVISOR_SERVICES_GATEWAY_RECOMMEND_TEXT_H_

// Number and name formatting for the answer texts (internal to the
// recommender's stage files).

#include <string>

#include "gpuadvisor/catalog/v1/catalog.pb.h"

namespace gpuadvisor::gateway::recommend {

// printf's "%.<precision>f" of `value`, without parsing a format: the
// per-recommendation texts hold a dozen numbers each. std::to_chars prints
// the exactly rounded value as printf does in the "C" locale; a value too
// long for the buffer takes the format path.
std::string Fixed(double value, int precision);
// printf's "%g" (six significant digits, no trailing zeros); a whole number
// below 10^6 is printed without parsing a format.
std::string General(double value);
// printf's "%+.<precision>f": the sign always.
std::string SignedFixed(double value, int precision);
// A fraction as a whole percent: 0.256 -> "26%".
std::string Percent(double fraction);
// "16.1", "2000": GB without exponents.
std::string Gigabytes(double gb);
std::string LinkName(catalog::v1::LinkType link);
std::string FabricName(catalog::v1::FabricType fabric);
const char* OptionName(catalog::v1::PurchaseOption option);

}  // namespace gpuadvisor::gateway::recommend

#endif  // GPUADVISOR_SERVICES_GATEWAY_RECOMMEND_TEXT_H_
