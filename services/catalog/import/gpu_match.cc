#include "services/catalog/import/gpu_match.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "services/catalog/skypilot_import.h"

namespace gpuadvisor::catalog {

std::optional<std::string> MatchGpu(const GpuNameResolver& gpus, absl::string_view name,
                                    int64_t memory_per_gpu_bytes, absl::string_view hints) {
  std::optional<std::string> canonical = gpus.Canonical(name);
  if (!canonical) {
    std::vector<std::string> kept;
    for (absl::string_view token :
         absl::StrSplit(name, absl::ByAnyChar(" -_"), absl::SkipEmpty())) {
      const std::string upper = absl::AsciiStrToUpper(token);
      if (upper == "PCIE" || upper == "SXM" || upper == "SXM2" || upper == "SXM4" ||
          upper == "SXM5" || upper == "SXM6") {
        continue;
      }
      kept.push_back(std::string(token));
    }
    canonical = gpus.Canonical(absl::StrJoin(kept, " "));
  }
  if (!canonical) return std::nullopt;
  return RefineGpuVariant(gpus, *canonical, memory_per_gpu_bytes, absl::StrCat(name, " ", hints));
}

}  // namespace gpuadvisor::catalog
