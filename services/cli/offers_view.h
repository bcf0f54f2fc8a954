#ifndef GPUADVISOR_SERVICES_CLI_OFFERS_VIEW_H_
#define GPUADVISOR_SERVICES_CLI_OFFERS_VIEW_H_

// What `gpu-advisor offers` prints: the offers as a table (price per GPU, vCPU
// and RAM columns), sorted by a key, or grouped by GPU model the way
// `sky show-gpus` lists accelerators. Plain functions over the catalog's
// messages: no terminal, no RPC.

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"

namespace gpuadvisor::cli {

// GPU model name -> memory per GPU in bytes (from ListGpus); a model not in
// it shows "-" and sorts last by vram.
using GpuMemory = absl::flat_hash_map<std::string, int64_t>;

// The price an offer is shown and sorted with: the price of `purchase` (spot,
// reserved, on-demand), or the on-demand price (spot when there is none) when
// `purchase` is unspecified. 0 = not sold that way.
double OfferPrice(const catalog::v1::Offer& offer, catalog::v1::PurchaseOption purchase);

// The keys --sort takes, in the order --help lists them.
const std::vector<std::string>& OfferSortKeys();

// Sorts `offers` by `key` (one of OfferSortKeys()): prices ascending with
// offers not sold that way last; vram, gpus, vcpus, ram descending; names
// ascending. Ties keep the catalog's order. INVALID_ARGUMENT naming --sort and
// the keys for an unknown key.
absl::Status SortOffers(absl::string_view key, catalog::v1::PurchaseOption purchase,
                        const GpuMemory& memory, std::vector<catalog::v1::Offer>* offers);

// The table: a header, then one row per offer. PRICE and $/GPU-H are at
// `purchase` (see OfferPrice).
std::vector<std::vector<std::string>> OfferRows(const std::vector<catalog::v1::Offer>& offers,
                                                catalog::v1::PurchaseOption purchase,
                                                const GpuMemory& memory);

// One row per GPU model: memory, the GPU counts per node on offer, providers
// (cut to 32 characters),
// offers, and the lowest on-demand and spot USD per GPU-hour with where they
// are. Sorted by the lowest price per GPU-hour (`purchase`'s, as OfferPrice).
std::vector<std::vector<std::string>> GpuGroupRows(const std::vector<catalog::v1::Offer>& offers,
                                                   catalog::v1::PurchaseOption purchase,
                                                   const GpuMemory& memory);

}  // namespace gpuadvisor::cli

#endif  // GPUADVISOR_SERVICES_CLI_OFFERS_VIEW_H_
