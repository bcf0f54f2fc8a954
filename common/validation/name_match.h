#ifndef GPUADVISOR_COMMON_VALIDATION_NAME_MATCH_H_
#define GPUADVISOR_COMMON_VALIDATION_NAME_MATCH_H_

// "Did you mean" for unknown names in a request: providers, regions and GPUs
// (the gateway), model presets and GPU models (sizing).

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace gpuadvisor::validation {

// The at most `n` names of `candidates` closest to `name`, closest first:
// names containing `name` (or contained in it) first, then by
// case-insensitive edit distance, ties by name. Duplicates are dropped.
std::vector<std::string> ClosestNames(absl::string_view name,
                                      const std::vector<std::string>& candidates, int n = 5);

}  // namespace gpuadvisor::validation

#endif  // GPUADVISOR_COMMON_VALIDATION_NAME_MATCH_H_
