#ifndef GPUADVISOR_SERVICES_CATALOG_GPU_NAME_RESOLVER_H_
#define GPUADVISOR_SERVICES_CATALOG_GPU_NAME_RESOLVER_H_

// Maps the many spellings of a GPU model ("H100 SXM5", "A100-80G-PCIe",
// "RTXA6000", "NVIDIA L4") to the canonical `Gpu.name` of a GpuList.
//
// Matching ignores case and every character that is not a letter or digit
// (spaces, '-', '_', '.', ...). A name is looked up as given first; if that
// fails, these rewrites are tried in order, each on top of the previous ones:
//   1. drop vendor words (NVIDIA, Tesla, GeForce, Quadro, AMD, Instinct,
//      Intel, Habana) and "NVLink" (a bridge, not a model: "A100-80G-PCIe-NVLink");
//   2. "80G" -> "80GB" (a whole token of digits followed by G);
//   3. drop memory tokens ("H100-80G-SXM5" -> "H100 SXM5");
//   4. "SXM4"/"SXM5"/"SXM6" -> "SXM", then drop "SXM" (SXM is the default form);
//   5. add or drop a leading "RTX" ("A6000" <-> "RTXA6000").
// No rewrite ever drops a model suffix such as "Ada", "S" or "G", so "RTX6000"
// (the Turing Quadro) stays unknown rather than becoming RTX-6000-ADA, and
// "L40S" never becomes "L40".
//
// Immutable after construction; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"

namespace gpuadvisor::catalog {

class GpuNameResolver {
 public:
  // Indexes every name and alias of `gpus`. When two GPUs claim the same
  // spelling the first one keeps it (Catalog::Create reports such clashes).
  explicit GpuNameResolver(const gpuadvisor::catalog::v1::GpuList& gpus);
  explicit GpuNameResolver(
      const google::protobuf::RepeatedPtrField<gpuadvisor::catalog::v1::Gpu>& gpus);

  // The canonical name for `name`, or nullopt if no rule matches.
  std::optional<std::string> Canonical(absl::string_view name) const;

  // The lookup key of `name`: upper case, letters and digits only.
  static std::string Key(absl::string_view name);

  // What importers need to know about a canonical GPU to pick a variant and
  // describe the intra-node link.
  struct Facts {
    std::string name;
    std::string vendor;
    int64_t memory_bytes = 0;
    gpuadvisor::catalog::v1::MemoryType memory_type =
        gpuadvisor::catalog::v1::MEMORY_TYPE_UNSPECIFIED;
    double nvlink_bytes_per_second = 0;
    double pcie_bytes_per_second = 0;  // bidirectional x16; 0 = not recorded
  };
  // nullptr unless `canonical_name` is a canonical name.
  const Facts* FactsOf(absl::string_view canonical_name) const;
  // Canonical names of the same GpuFamily(), in GpuList order, including
  // `canonical_name` itself; empty if unknown.
  std::vector<const Facts*> Variants(absl::string_view canonical_name) const;

 private:
  void Add(const gpuadvisor::catalog::v1::Gpu& gpu);
  const std::string* Find(const std::vector<std::string>& tokens) const;

  absl::flat_hash_map<std::string, std::string> by_key_;  // key -> canonical
  std::vector<Facts> facts_;                              // GpuList order
  std::vector<std::string> families_;                     // GpuFamily of each facts_
  absl::flat_hash_map<std::string, size_t> facts_by_name_;
};

// The model family of a canonical name: the name without form-factor and
// memory tokens ("A100-80GB-PCIE" -> "A100", "H100-NVL" -> "H100",
// "V100-32GB" -> "V100", "RTX-6000-ADA" unchanged). Used to pick the right
// variant when a source names only the family ("A100" with 80 GB of memory).
std::string GpuFamily(absl::string_view canonical_name);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_GPU_NAME_RESOLVER_H_
