#ifndef GPUADVISOR_SERVICES_GATEWAY_NAME_MATCH_H_
#define GPUADVISOR_SERVICES_GATEWAY_NAME_MATCH_H_

// "Did you mean" for unknown provider, region and GPU names.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace gpuadvisor::gateway {

// The at most `n` names of `candidates` closest to `name`, closest first:
// names containing `name` (or contained in it) first, then by
// case-insensitive edit distance, ties by name. Duplicates are dropped.
std::vector<std::string> ClosestNames(absl::string_view name,
                                      const std::vector<std::string>& candidates, int n = 5);

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_NAME_MATCH_H_
