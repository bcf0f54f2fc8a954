#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_GPU_MATCH_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_GPU_MATCH_H_

// The canonical GPU for a name as a price source writes it, shared by the
// importers so a GPU gets the same name whichever file it comes from.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "services/catalog/gpu_name_resolver.h"

namespace gpuadvisor::catalog {

// GpuNameResolver::Canonical(name); if that fails, the same without
// form-factor words ("A100 PCIE" -> "A100", "A100 SXM4" -> "A100"), which the
// resolver only drops in some positions. The family member is then chosen by
// RefineGpuVariant with the per-GPU memory (0 = unknown) and the form hints in
// `name` and `hints` ("A100 PCIE" with 81920 MiB -> "A100-80GB-PCIE").
// nullopt when no GPU of the list matches.
std::optional<std::string> MatchGpu(const GpuNameResolver& gpus, absl::string_view name,
                                    int64_t memory_per_gpu_bytes, absl::string_view hints = "");

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_GPU_MATCH_H_
