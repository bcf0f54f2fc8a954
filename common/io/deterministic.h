#ifndef GPUADVISOR_COMMON_IO_DETERMINISTIC_H_
#define GPUADVISOR_COMMON_IO_DETERMINISTIC_H_

// The deterministic wire bytes of a message: map entries sorted by key, so
// equal messages give equal bytes in one build. Used for content versions
// (with Fingerprint64) and cache keys. Not canonical across protobuf versions
// or with unknown fields; enough for keys and versions a build computes and
// compares itself. Thread-safe.

#include <string>

#include "google/protobuf/message_lite.h"

namespace gpuadvisor {

// Appends the bytes to `out` (a cache key may carry a prefix).
void AppendDeterministicBytes(const google::protobuf::MessageLite& message, std::string* out);

inline std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string bytes;
  AppendDeterministicBytes(message, &bytes);
  return bytes;
}

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_IO_DETERMINISTIC_H_
