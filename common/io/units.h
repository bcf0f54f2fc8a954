#ifndef GPUADVISOR_COMMON_IO_UNITS_H_
#define GPUADVISOR_COMMON_IO_UNITS_H_

// Shared defaults and unit formatting of the contract, so every service says
// the same thing the same way. Header-only, thread-safe.

#include <string>

#include "absl/strings/str_format.h"

namespace gpuadvisor {

// Fraction of GPU memory kept free when the request does not say
// (Constraints.vram_margin, EstimateRequest.vram_margin; DESIGN.md: "default
// 0.1"): filter by VRAM with margin, never an exact fit.
inline constexpr double kDefaultVramMargin = 0.1;

// Bytes as decimal gigabytes (1 GB = 1e9 bytes) with `decimals` digits:
// FormatGb(80e9) == "80.0 GB", FormatGb(1.5e9, 2) == "1.50 GB".
inline std::string FormatGb(double bytes, int decimals = 1) {
  return absl::StrFormat("%.*f GB", decimals, bytes / 1e9);
}

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_IO_UNITS_H_
