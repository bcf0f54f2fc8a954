#ifndef GPUADVISOR_SERVICES_CATALOG_CATALOG_GUARDS_H_
#define GPUADVISOR_SERVICES_CATALOG_CATALOG_GUARDS_H_

// Load guards: a catalog that parses and validates can still be wrong in
// ways a schema cannot see (a file cut at an offer boundary, prices x100,
// 2 KB of host RAM, 141 bytes of GPU memory). CheckCatalogGuards compares a
// candidate snapshot with the physical and market ranges of
// data/catalog/guards.textproto and with the catalog it would replace.
//
//   absl::StatusOr<CatalogGuards> guards = LoadCatalogGuards(path, resolver);
//   GuardReport report = CheckCatalogGuards(*guards, candidate, origins, current);
//   if (!report.errors.empty() && !force) -> reject, keep serving `current`
//
// Findings name where the value comes from ("data/x.textproto:120: offers[12]
// \"aws/p5.48xlarge/us-east-1\": ...") so an operator can fix the file.
//
// Plain functions over values; thread-safe.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/gpu_name_resolver.h"

namespace gpuadvisor::catalog {

// Reads and validates a gpuadvisor.catalog.v1.CatalogGuards text file:
// every threshold finite and >= 0, max_shrink_fraction and the spot
// discounts in [0, 1], min <= max, factors >= 1, every price range's GPU
// known (rewritten to its canonical name) and low <= high. kInvalidArgument
// with file:line:col; kNotFound when missing. An empty path gives no guards
// (everything passes).
absl::StatusOr<gpuadvisor::catalog::v1::CatalogGuards> LoadCatalogGuards(
    const std::string& path, const GpuNameResolver& resolver);

struct GuardReport {
  // Reasons to reject the load, one line each, "<where>: <message>".
  std::vector<std::string> errors;
  // Outliers kept; the same text is appended to the offer's `warnings`.
  std::vector<std::string> warnings;
};

// Where each GPU and offer of a snapshot came from ("path:line"), in
// snapshot order; an empty entry falls back to the offer's `source`.
struct SnapshotOrigins {
  std::vector<std::string> gpus;
  std::vector<std::string> offers;
};

// Checks `candidate` (gpus_per_node and gpu_model already validated and
// canonical) and appends each kept outlier's message to that offer's
// `warnings`. Rules (thresholds from `guards`):
//   GPU memory_bytes within [min_gpu_memory_bytes, max_gpu_memory_bytes];
//   offer ram_bytes, when > 0, within [min_ram_bytes, max_ram_bytes];
//   each price > 0 per accelerator-hour against the GPU's PriceRange: outside
//     [low / reject_price_factor, high x reject_price_factor] is an error,
//     outside [low / warn_price_factor, high x warn_price_factor] a warning;
//     GPUs without a range: outside [min_usd_per_gpu_hour,
//     max_usd_per_gpu_hour] is an error;
//   spot below on-demand by more than reject_spot_discount: error; by more
//     than warn_spot_discount: warning ("spot price 89% below on-demand:
//     likely stale"); spot above on-demand: warning;
//   with a `current` catalog of N offers, fewer than N x (1 -
//     max_shrink_fraction) offers: error.
// A threshold of 0 disables its rule (an empty CatalogGuards checks nothing).
GuardReport CheckCatalogGuards(const gpuadvisor::catalog::v1::CatalogGuards& guards,
                               gpuadvisor::catalog::v1::CatalogSnapshot& candidate,
                               const SnapshotOrigins& origins,
                               const gpuadvisor::catalog::v1::CatalogSnapshot* current);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_CATALOG_GUARDS_H_
