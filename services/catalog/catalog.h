#ifndef GPUADVISOR_SERVICES_CATALOG_CATALOG_H_
#define GPUADVISOR_SERVICES_CATALOG_CATALOG_H_

// An immutable, validated catalog snapshot with indexes for the catalog
// service and for the gateway's local replica.
//
//   absl::StatusOr<std::shared_ptr<const Catalog>> catalog = Catalog::Create(std::move(snapshot));
//   const Gpu* h100 = (*catalog)->FindGpu("h100 sxm5");          // any alias
//   absl::StatusOr<ListOffersResponse> page = (*catalog)->ListOffers(request);
//
// Thread safety: a Catalog never changes after Create(); share it freely.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/gpu_name_resolver.h"

namespace gpuadvisor::catalog {

// CatalogService.WatchCatalog accepts a watch by sending this initial-metadata
// key with the current snapshot version, so a follower knows it is current
// even when nothing has changed since its known_version.
inline constexpr char kWatchVersionHeader[] = "x-catalog-version";
// Initial metadata of a watch that asked for heartbeats: the accepted interval in ms.
inline constexpr char kWatchHeartbeatHeader[] = "x-catalog-heartbeat-ms";

// Checks one GPU on its own. Errors are kInvalidArgument and name the field
// relative to the GPU ("memory_bytes: must be > 0"); callers prefix the path.
absl::Status ValidateGpu(const gpuadvisor::catalog::v1::Gpu& gpu);

// Checks one offer on its own and rewrites `gpu_model` to the canonical name
// and `nodes` 0 to 1. Errors are kInvalidArgument and name the field relative
// to the offer, e.g. `gpu_model: unknown GPU "X"`. Rules:
//   id, provider, instance_type, gpu_model non-empty; gpu_model known;
//   gpus_per_node >= 1; nodes 0 or 1 (the catalog lists single nodes);
//   max_nodes >= 0 (0 becomes 1), and 1 when fabric is FABRIC_TYPE_NONE;
//   enums hold declared values; counts, sizes, bandwidths and prices finite
//   and >= 0; at least one of the three prices > 0 (an offer nobody can buy
//   is not an offer); spot_min <= spot (the median) <= spot_max where set;
//   scale_up / scale_out, when present, pass ValidateOfferTopology.
absl::Status ValidateAndNormalizeOffer(const GpuNameResolver& gpus,
                                       gpuadvisor::catalog::v1::Offer& offer);

// The positions of `offers` in id order (ids compared as bytes; equal ids
// keep no particular order). Offers usually come in long runs already in id
// order (every import and refreshed source is sorted by id; the curated files
// are not): those runs are merged rather than sorted again, so 100,000 offers
// with a few hundred out of order cost about one merge pass.
std::vector<int32_t> OrderById(
    const google::protobuf::RepeatedPtrField<gpuadvisor::catalog::v1::Offer>& offers);

class Catalog {
 public:
  // Validates the whole snapshot, then indexes it. kInvalidArgument naming the
  // first bad field with its path: `offers[12].gpu_model: unknown GPU "X"`,
  // `offers[3].id: duplicate of offers[1]`, `gpus[2].aliases[0]: "A100" is
  // already a name of A100-40GB`. Offer gpu_model aliases are rewritten to the
  // canonical name. Linear in the number of offers plus one sort of the ids.
  static absl::StatusOr<std::shared_ptr<const Catalog>> Create(
      gpuadvisor::catalog::v1::CatalogSnapshot snapshot);
  // Create, then `finish` on the validated and normalized snapshot before the
  // catalog is returned: it may set the snapshot's version and
  // loaded_at_unix_seconds (nothing indexes them) and nothing else.
  // CatalogStore names a version by the content of the normalized snapshot,
  // serialized once for that and for WatchCatalog.
  static absl::StatusOr<std::shared_ptr<const Catalog>> Create(
      gpuadvisor::catalog::v1::CatalogSnapshot snapshot,
      const std::function<void(gpuadvisor::catalog::v1::CatalogSnapshot&)>& finish);

  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  const gpuadvisor::catalog::v1::CatalogSnapshot& snapshot() const { return snapshot_; }
  const GpuNameResolver& resolver() const { return resolver_; }

  // nullptr if unknown. Accepts every spelling GpuNameResolver accepts.
  const gpuadvisor::catalog::v1::Gpu* FindGpu(absl::string_view name_or_alias) const;
  // nullptr if unknown. Exact id.
  const gpuadvisor::catalog::v1::Offer* FindOffer(absl::string_view id) const;
  // Offers of one canonical GPU, in id order; empty if none.
  const std::vector<const gpuadvisor::catalog::v1::Offer*>& OffersForGpu(
      absl::string_view canonical_name) const;
  // The positions of the snapshot's offers in id order (OrderById).
  const std::vector<int32_t>& OfferOrderById() const { return order_by_id_; }
  // The GPU an offer of this catalog runs on (never nullptr for its offers).
  const gpuadvisor::catalog::v1::Gpu* GpuOf(const gpuadvisor::catalog::v1::Offer& offer) const;

  // Offers matching every filter of `request`, ordered by id, one page at a
  // time. Filters (an empty list or 0 means "any"):
  //   gpu_models            any spelling; kInvalidArgument naming
  //                         `gpu_models[i]` for an unknown one;
  //   min_gpu_memory_bytes  per GPU;
  //   min_gpus / max_gpus   GPUs per node, inclusive;
  //   providers, regions    exact, ignoring ASCII case;
  //   links, fabrics        enum membership;
  //   purchase_option       only offers sold that way (price > 0);
  //   max_usd_per_hour      whole-instance price at `purchase_option`; with
  //                         no purchase option, the cheapest way it is sold.
  // page_size: 0 -> 100, above 1000 -> 1000. The next_page_token is opaque:
  // it carries the last id returned and a fingerprint of the filters, so it
  // stays valid across catalog versions (no offer is returned twice; offers
  // added behind the cursor are not seen) but is rejected with
  // kInvalidArgument when the filters change or it is malformed. Negative
  // sizes, counts, prices or max_gpus < min_gpus are kInvalidArgument.
  // total_size counts all matches. Copies only the offers of the page.
  absl::StatusOr<gpuadvisor::catalog::v1::ListOffersResponse> ListOffers(
      const gpuadvisor::catalog::v1::ListOffersRequest& request) const;

  static constexpr int kDefaultPageSize = 100;
  static constexpr int kMaxPageSize = 1000;

 private:
  explicit Catalog(gpuadvisor::catalog::v1::CatalogSnapshot snapshot);
  absl::Status Build();
  absl::Status BuildGpus();
  absl::Status BuildOffers();

  gpuadvisor::catalog::v1::CatalogSnapshot snapshot_;
  GpuNameResolver resolver_;
  absl::flat_hash_map<std::string, int> gpu_by_name_;  // canonical name -> gpus index
  absl::flat_hash_map<absl::string_view, const gpuadvisor::catalog::v1::Offer*> offer_by_id_;
  std::vector<int32_t> order_by_id_;
  // All offers sorted by id, with the index of their GPU.
  std::vector<const gpuadvisor::catalog::v1::Offer*> sorted_offers_;
  std::vector<int> sorted_gpu_index_;
  std::vector<std::vector<const gpuadvisor::catalog::v1::Offer*>> offers_by_gpu_;
};

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_CATALOG_H_
