#ifndef GPUADVISOR_SERVICES_GATEWAY_OFFER_INDEX_H_
#define GPUADVISOR_SERVICES_GATEWAY_OFFER_INDEX_H_

// Compact, contiguous facts about every offer of one catalog snapshot, so a
// Recommend can scan ten thousand offers without touching the protos, whose
// strings lie all over the heap (a cache miss per offer was most of the
// scan's time). Built once per snapshot and shared by every request.
// Immutable after construction; thread-safe.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/catalog/catalog.h"

namespace gpuadvisor::gateway {

// What sizing needs to know of an offer's hardware; offers of one shape share
// their GPU configurations.
struct OfferShape {
  std::string gpu_model;
  int32_t gpu = 0;  // GPU model id (OfferIndex::GpuId of gpu_model)
  int32_t gpus_per_node = 1;
  catalog::v1::LinkType link = catalog::v1::LINK_TYPE_UNSPECIFIED;
  double link_bytes_per_second = 0;
  catalog::v1::FabricType fabric = catalog::v1::FABRIC_TYPE_UNSPECIFIED;  // NONE when single-node
  double fabric_gbps = 0;
  // The offer's topology as the catalog states it (Offer.scale_up /
  // scale_out); sizing honours it over the legacy fields above. Unset when
  // the catalog gave none.
  catalog::v1::ScaleUpDomain scale_up;
  catalog::v1::ScaleOutFabric scale_out;
  bool has_topology = false;
  // Nominal host-to-GPU link, one direction, per GPU (Offer.host_link);
  // 0 = not recorded (sizing then assumes its default).
  double host_link_bytes_per_second = 0;
  // Everything above as deterministic bytes (a sizing configuration without
  // its node count): equal keys size alike, whatever the catalog.
  std::string key;

  // Writes this shape, at `nodes` nodes, into a sizing GPU configuration:
  // model, GPUs per node, the legacy link/fabric fields and scale_up /
  // scale_out when the catalog has them.
  void FillConfiguration(int32_t nodes, sizing::v1::GpuConfiguration* config) const;
};

struct OfferFacts {
  int32_t shape;     // index into shapes()
  int32_t cell;      // index into cells()
  int32_t provider;  // index into the provider names
  int32_t region;    // index into the region names
  int32_t gpu;       // index into the GPU model names
  int32_t gpus_per_node;
  int32_t max_nodes;  // 1 when the offer has no inter-node fabric
  bool unavailable;
  // Offer.host_tier COMMUNITY: a marketplace's independent host (unset and
  // DATACENTER are datacenter-grade; docs/catalog.md).
  bool community_host;
  uint8_t availability;  // Offer.availability (a catalog::v1::Availability)
  double on_demand_usd_per_hour;
  double spot_usd_per_hour;
  double reserved_usd_per_hour;  // on-demand when none is published (pricing discounts it)
  double network_gbps;           // Offer.network.gbps (0 = not published)
};

// Offers that a Recommend treats alike until prices rank them: same shape,
// same largest cluster, same availability, sold at the same purchase options
// and on the same host tier. Without name filters every offer of a cell is
// excluded for the same reason or yields candidates at the same cluster
// sizes, so a request works per cell, and streams a cell's offers cheapest
// first; a host tier filter keeps or drops whole cells.
struct OfferCell {
  int32_t shape = 0;
  int32_t gpu = 0;  // GPU model id
  int32_t gpus_per_node = 1;
  int32_t max_nodes = 1;
  bool unavailable = false;
  bool community_host = false;           // OfferFacts::community_host of every offer
  bool sold[3] = {false, false, false};  // on-demand, spot, reserved (list price > 0)
  std::vector<int32_t> offers;           // ascending offer index
  // Per purchase option (OptionSlot): offers sold that way by (list price,
  // offer index); empty when not sold that way.
  std::vector<int32_t> by_price[3];
  // The list prices of by_price[slot], in the same order: a request streams
  // a cell cheapest first without touching the offers' facts.
  std::vector<double> price[3];
};

// The offers of one cell that one provider sells (or that lie in one
// region): what a request naming providers (or regions) streams instead of
// the whole cell. Its offer lists live in the index (OfferIndex::PartOffers,
// PartByPrice).
struct CellPart {
  int32_t cell = 0;
  int32_t first = 0;   // the lowest offer index
  int32_t count = 0;   // offers
  uint32_t begin = 0;  // where its lists start in the index's buffer
};

// A price the catalog flags as a likely outlier (Offer.price_flags): the
// index treats the offer as not sold that way, so no answer ranks it on that
// price; Recommend counts it under EXCLUSION_REASON_SUSPECT_PRICE.
struct FlaggedPrice {
  int32_t offer = 0;  // offer index
  catalog::v1::PurchaseOption option = catalog::v1::PURCHASE_OPTION_UNSPECIFIED;
  int flag = 0;  // index into the offer's price_flags
};

// 0 on-demand, 1 spot, 2 reserved: the slot of OfferCell::sold and by_price.
int OptionSlot(catalog::v1::PurchaseOption option);

class OfferIndex {
 public:
  explicit OfferIndex(std::shared_ptr<const catalog::Catalog> catalog);

  const catalog::Catalog& catalog() const { return *catalog_; }
  const std::shared_ptr<const catalog::Catalog>& shared_catalog() const { return catalog_; }
  // Same order as the snapshot's offers.
  const std::vector<OfferFacts>& offers() const { return offers_; }
  // Offer.id by offer index, from one contiguous buffer: a request reads the
  // ids of the offers it quotes without touching their protos.
  absl::string_view id(int offer) const {
    return absl::string_view(ids_).substr(id_starts_[offer],
                                          id_starts_[offer + 1] - id_starts_[offer]);
  }
  // The offer's place when every offer is ordered by Offer.id (ids are
  // unique): comparing places compares ids, without their bytes.
  int32_t id_rank(int offer) const { return id_rank_[offer]; }
  // Offer.instance_type as an id: equal ids, equal instance types.
  int32_t instance_type(int offer) const { return instance_type_[offer]; }
  // Offers whose quotes differ only through their prices share a kind: the
  // same provider and instance type (and "<provider>/<instance_type>/" in
  // the id, by which the price book picks the billing rule), and every
  // offer of that instance type in one cell, at one availability and
  // network speed, its availability not dated (last seen and a staleness
  // budget: the clock can reorder those). -1 for an offer of an instance
  // type that is not all alike so, or whose availability is dated.
  int32_t kind(int offer) const { return kind_[offer]; }
  // Offer.host_reliability by offer index; < 0 when the source gives none.
  double host_reliability(int offer) const { return host_reliability_[offer]; }
  // Whether some offer has a reliability figure / a community host.
  bool any_host_reliability() const { return any_host_reliability_; }
  bool any_community_host() const { return community_hosts_ > 0; }
  // How many offers are on community hosts.
  int community_hosts() const { return community_hosts_; }
  const std::vector<OfferShape>& shapes() const { return shapes_; }
  // Every flagged price, by offer index (their facts' price is 0).
  const std::vector<FlaggedPrice>& flagged_prices() const { return flagged_; }
  // Ordered by their first offer.
  const std::vector<OfferCell>& cells() const { return cells_; }
  // Whether every list price is finite and >= 1e-9 and, within each cell and
  // option, distinct prices differ by more than 1e-12 relative: then a
  // pre-rank key computed from a price (times nodes, times hours, or
  // throughput over it) orders offers as their prices do, and equal keys
  // mean equal prices. Otherwise a request breaks ties at the cap the slow way.
  bool distinct_price_keys() const { return distinct_price_keys_; }
  // Offer indexes by provider id, by region id and by GPU id, ascending.
  const std::vector<int32_t>& OffersOfProvider(int provider) const {
    return by_provider_[provider];
  }
  const std::vector<int32_t>& OffersOfRegion(int region) const { return by_region_[region]; }
  const std::vector<int32_t>& OffersOfGpu(int gpu) const { return by_gpu_[gpu]; }
  // A provider's (a region's) share of each cell it has offers in, by cell.
  absl::Span<const CellPart> CellPartsOfProvider(int provider) const {
    return by_provider_parts_.Of(provider);
  }
  absl::Span<const CellPart> CellPartsOfRegion(int region) const {
    return by_region_parts_.Of(region);
  }
  // A part's offers ascending, and those sold at an option's slot by (list
  // price, offer index): the subsequences of its cell's offers and
  // by_price[slot] (empty when the cell is not sold that way).
  absl::Span<const int32_t> PartOffers(const CellPart& part, bool by_region) const {
    return (by_region ? by_region_parts_ : by_provider_parts_).Offers(part);
  }
  absl::Span<const int32_t> PartByPrice(const CellPart& part, int slot, bool by_region) const {
    return (by_region ? by_region_parts_ : by_provider_parts_)
        .ByPrice(part, slot, cells_[part.cell]);
  }
  int providers() const { return static_cast<int>(providers_.size()); }
  int regions() const { return static_cast<int>(regions_.size()); }
  int gpus() const { return static_cast<int>(gpus_.size()); }

  // Index of a name, or -1 when no offer has it. GPU models resolve aliases.
  int ProviderId(absl::string_view provider) const;
  int RegionId(absl::string_view region) const;
  int GpuId(absl::string_view gpu_model_or_alias) const;
  // Every id whose name equals `name` ignoring case (empty when none).
  const std::vector<int>& ProviderIdsIgnoringCase(absl::string_view name) const;
  const std::vector<int>& RegionIdsIgnoringCase(absl::string_view name) const;
  // Names by id.
  const std::vector<std::string>& provider_names() const { return provider_names_; }
  const std::vector<std::string>& region_names() const { return region_names_; }

 private:
  // The constructor's steps, in order: every offer's facts and shape, their
  // places by id, the cells, each cell's offers by price, the offers by name
  // and the parts.
  void AddOffers();
  void RankIds();
  void BuildCells();
  void OrderCellsByPrice();
  void IndexNames();
  void NameKinds();
  // Cell parts of one name kind (providers or regions), flat: per id its
  // parts, per part its offers then one by-price list per slot sold.
  struct Parts {
    std::vector<uint32_t> starts;  // id -> first part; one more at the end
    std::vector<CellPart> parts;
    std::vector<int32_t> offers;
    absl::Span<const CellPart> Of(int id) const {
      return absl::MakeConstSpan(parts.data() + starts[id], starts[id + 1] - starts[id]);
    }
    absl::Span<const int32_t> Offers(const CellPart& part) const {
      return absl::MakeConstSpan(offers.data() + part.begin, part.count);
    }
    absl::Span<const int32_t> ByPrice(const CellPart& part, int slot, const OfferCell& cell) const {
      if (!cell.sold[slot]) return {};
      int lists = 1;
      for (int s = 0; s < slot; ++s) lists += cell.sold[s] ? 1 : 0;
      return absl::MakeConstSpan(
          offers.data() + part.begin + static_cast<size_t>(lists) * part.count, part.count);
    }
  };
  // Builds `parts` from each offer's id of that kind (OfferFacts::provider
  // or ::region), over `ids` ids.
  void BuildParts(int ids, int32_t OfferFacts::*kind, Parts& parts) const;

  std::shared_ptr<const catalog::Catalog> catalog_;
  std::vector<OfferFacts> offers_;
  std::vector<double> host_reliability_;  // by offer; -1 = not published
  bool any_host_reliability_ = false;
  int community_hosts_ = 0;
  std::string ids_;                     // every Offer.id, in offer order
  std::vector<size_t> id_starts_;       // offer -> start in ids_; one more at the end
  std::vector<int32_t> id_rank_;        // by offer
  std::vector<int32_t> instance_type_;  // by offer
  std::vector<int32_t> kind_;           // by offer
  std::vector<OfferShape> shapes_;
  std::vector<FlaggedPrice> flagged_;
  std::vector<OfferCell> cells_;
  bool distinct_price_keys_ = true;
  std::vector<std::vector<int32_t>> by_provider_, by_region_, by_gpu_;
  Parts by_provider_parts_, by_region_parts_;
  absl::flat_hash_map<std::string, int> providers_, regions_, gpus_, instance_types_;
  std::vector<std::string> provider_names_, region_names_;
  absl::flat_hash_map<std::string, std::vector<int>> providers_folded_,
      regions_folded_;  // lower case
};

// The indexes answers are built from, one per catalog version, and which one
// a Recommend uses. Thread-safe.
//
// - Prepare(catalog) indexes a new catalog on the caller's thread: the
//   gateway's catalog replica calls it on its follower thread before it swaps
//   the catalog in (CatalogReplica::Options::prepare), so no serving thread
//   builds an index and none waits for one. Get builds one itself (under the
//   lock, concurrent callers sharing the build) only for a catalog nobody
//   prepared (tests, a replica without the hook).
// - Get(current, priced) answers from `current` (the replica's newest
//   catalog) when `priced` is null or says a price book is held for its
//   version; otherwise, while the previous catalog's version is still priced,
//   from the previous one. After a refresh the replica usually holds the new
//   catalog a moment before the gateway's copy of pricing's book for it
//   arrives; answering from the new catalog then would send every Recommend
//   to pricing's Quote, which refuses (FAILED_PRECONDITION, retried) until
//   pricing has built that book. The previous catalog with its own book is a
//   consistent answer (one catalog version, the book built from it), a few
//   seconds older. Once the new version is priced the older index is dropped.
class OfferIndexCache {
 public:
  // Indexes `catalog` (when not indexed yet) and keeps it as the newest.
  void Prepare(std::shared_ptr<const catalog::Catalog> catalog);

  // Whether a price book is held for a catalog version (null: always).
  using Priced = std::function<bool(const std::string& catalog_version)>;
  // The index to answer from for `current`, as above; nullptr for a nullptr
  // catalog.
  std::shared_ptr<const OfferIndex> Get(std::shared_ptr<const catalog::Catalog> current,
                                        const Priced& priced = nullptr);

 private:
  // The index of `catalog` among those held, else null.
  std::shared_ptr<const OfferIndex> Find(const catalog::Catalog* catalog) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Keep(std::shared_ptr<const OfferIndex> index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops every index older than `serving`.
  void DropOlderThan(const OfferIndex* serving) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // At most this many indexes (previous, current, one prepared not swapped in yet).
  static constexpr size_t kKept = 3;
  absl::Mutex mu_;
  std::vector<std::shared_ptr<const OfferIndex>> indexes_ ABSL_GUARDED_BY(mu_);  // oldest first
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_OFFER_INDEX_H_
