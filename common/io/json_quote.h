#ifndef GPUADVISOR_COMMON_IO_JSON_QUOTE_H_
#define GPUADVISOR_COMMON_IO_JSON_QUOTE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace gpuadvisor {

// `s` as a JSON string literal, quotes included: ", \ and control characters
// escaped (\n, \t, else \u00XX); other bytes, UTF-8 included, as they are.
// The result is also a valid YAML double-quoted scalar with the same value.
std::string JsonQuote(absl::string_view s);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_IO_JSON_QUOTE_H_
