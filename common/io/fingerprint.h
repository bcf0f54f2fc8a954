#ifndef GPUADVISOR_COMMON_IO_FINGERPRINT_H_
#define GPUADVISOR_COMMON_IO_FINGERPRINT_H_

// A stable 64-bit content fingerprint (FNV-1a). Unlike absl::Hash it is the
// same in every process and build, so it can name catalog versions, sign
// page tokens and check watch chunks. Not cryptographic.

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace gpuadvisor {

inline uint64_t Fingerprint64(absl::string_view bytes, uint64_t seed = 14695981039346656037ull) {
  uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// 16 lower-case hex digits.
inline std::string FingerprintHex(absl::string_view bytes) {
  return absl::StrFormat("%016x", Fingerprint64(bytes));
}

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_IO_FINGERPRINT_H_
