#include "services/gateway/offer_index.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/io/deterministic.h"

namespace gpuadvisor::gateway {
namespace {

using ShapeKey = std::tuple<std::string, int32_t, int, double, int, double, std::string>;

int Intern(absl::flat_hash_map<std::string, int>& ids, const std::string& name) {
  return ids.try_emplace(name, static_cast<int>(ids.size())).first->second;
}

int Find(const absl::flat_hash_map<std::string, int>& ids, absl::string_view name) {
  auto it = ids.find(name);
  return it == ids.end() ? -1 : it->second;
}

// Names by id and lower-case name -> ids, from an interned map.
void Fold(const absl::flat_hash_map<std::string, int>& ids, std::vector<std::string>& names,
          absl::flat_hash_map<std::string, std::vector<int>>& folded) {
  names.assign(ids.size(), "");
  for (const auto& [name, id] : ids) names[id] = name;
  for (int id = 0; id < static_cast<int>(names.size()); ++id) {
    folded[absl::AsciiStrToLower(names[id])].push_back(id);
  }
}

const std::vector<int>& Lookup(const absl::flat_hash_map<std::string, std::vector<int>>& folded,
                               absl::string_view name) {
  static const std::vector<int>* const kNone = new std::vector<int>();
  auto it = folded.find(absl::AsciiStrToLower(name));
  return it == folded.end() ? *kNone : it->second;
}

// The list price at an option slot (OptionSlot).
double PriceAt(const OfferFacts& f, int slot) {
  return slot == 0   ? f.on_demand_usd_per_hour
         : slot == 1 ? f.spot_usd_per_hour
                     : f.reserved_usd_per_hour;
}

bool MultiNode(const catalog::v1::Offer& offer) {
  return offer.max_nodes() > 1 && offer.fabric() != catalog::v1::FABRIC_TYPE_NONE &&
         offer.fabric() != catalog::v1::FABRIC_TYPE_UNSPECIFIED;
}

// What sizing sees of an offer (its `key` is filled once the shape is new).
OfferShape ShapeOf(const catalog::v1::Offer& offer, bool multi_node, int gpu) {
  OfferShape shape;
  shape.gpu_model = offer.gpu_model();
  shape.gpu = gpu;
  shape.gpus_per_node = offer.gpus_per_node();
  shape.link = offer.link();
  shape.link_bytes_per_second = offer.link_bytes_per_second();
  shape.fabric = multi_node ? offer.fabric() : catalog::v1::FABRIC_TYPE_NONE;
  shape.fabric_gbps = multi_node ? offer.fabric_gbps() : 0;
  if (offer.has_scale_up() || offer.has_scale_out()) {
    shape.has_topology = true;
    shape.scale_up = offer.scale_up();
    shape.scale_out = offer.scale_out();
    shape.scale_up.clear_source();  // sources do not change the hardware
    shape.scale_out.clear_source();
  }
  shape.host_link_bytes_per_second = offer.host_link().bytes_per_second_per_gpu();
  return shape;
}

// Offers share a shape only when their topology is the same too.
ShapeKey KeyOf(const OfferShape& shape) {
  std::string topology_key;
  if (shape.has_topology) {
    std::string up, out;
    shape.scale_up.SerializeToString(&up);
    shape.scale_out.SerializeToString(&out);
    topology_key = absl::StrCat(up.size(), ":", up, out);
  }
  absl::StrAppend(&topology_key, "|host ", shape.host_link_bytes_per_second);
  return ShapeKey{shape.gpu_model,
                  shape.gpus_per_node,
                  shape.link,
                  shape.link_bytes_per_second,
                  shape.fabric,
                  shape.fabric_gbps,
                  std::move(topology_key)};
}

// The shape as a sizing configuration without its node count, in
// deterministic bytes.
std::string ConfigurationBytes(const OfferShape& shape) {
  sizing::v1::GpuConfiguration config;
  shape.FillConfiguration(0, &config);
  return DeterministicBytes(config);
}

}  // namespace

int OptionSlot(catalog::v1::PurchaseOption option) {
  switch (option) {
    case catalog::v1::PURCHASE_OPTION_SPOT:
      return 1;
    case catalog::v1::PURCHASE_OPTION_RESERVED:
      return 2;
    default:
      return 0;
  }
}

void OfferShape::FillConfiguration(int32_t nodes, sizing::v1::GpuConfiguration* config) const {
  config->set_gpu_model(gpu_model);
  config->set_gpus_per_node(gpus_per_node);
  config->set_nodes(nodes);
  config->set_link(link);
  config->set_link_bytes_per_second(link_bytes_per_second);
  config->set_fabric(fabric);
  config->set_fabric_gbps(fabric_gbps);
  if (has_topology) {
    *config->mutable_scale_up() = scale_up;
    *config->mutable_scale_out() = scale_out;
  }
  if (host_link_bytes_per_second > 0)
    config->set_host_link_bytes_per_second(host_link_bytes_per_second);
}

OfferIndex::OfferIndex(std::shared_ptr<const catalog::Catalog> catalog)
    : catalog_(std::move(catalog)) {
  AddOffers();
  RankIds();
  BuildCells();
  OrderCellsByPrice();
  IndexNames();
  NameKinds();
}

void OfferIndex::AddOffers() {
  absl::flat_hash_map<ShapeKey, int> shape_ids;
  const auto& offers = catalog_->snapshot().offers();
  offers_.reserve(offers.size());
  host_reliability_.reserve(offers.size());
  instance_type_.reserve(offers.size());
  id_starts_.reserve(offers.size() + 1);
  for (const catalog::v1::Offer& offer : offers) {
    const bool multi_node = MultiNode(offer);
    OfferShape shape = ShapeOf(offer, multi_node, Intern(gpus_, offer.gpu_model()));
    auto [it, inserted] = shape_ids.try_emplace(KeyOf(shape), static_cast<int>(shapes_.size()));
    if (inserted) {
      shape.key = ConfigurationBytes(shape);
      shapes_.push_back(std::move(shape));
    }
    OfferFacts facts;
    facts.shape = it->second;
    facts.provider = Intern(providers_, offer.provider());
    facts.region = Intern(regions_, offer.region());
    facts.gpu = Intern(gpus_, offer.gpu_model());
    facts.gpus_per_node = offer.gpus_per_node();
    facts.max_nodes = multi_node ? offer.max_nodes() : 1;
    facts.unavailable = offer.availability() == catalog::v1::AVAILABILITY_UNAVAILABLE;
    facts.community_host = offer.host_tier() == catalog::v1::HOST_TIER_COMMUNITY;
    facts.availability = static_cast<uint8_t>(offer.availability());
    // A flagged price is never ranked on: not sold that way, for the index.
    bool flagged[3] = {false, false, false};
    for (int k = 0; k < offer.price_flags_size(); ++k) {
      const catalog::v1::PurchaseOption option = offer.price_flags(k).purchase_option();
      if (option == catalog::v1::PURCHASE_OPTION_UNSPECIFIED || flagged[OptionSlot(option)]) {
        continue;
      }
      flagged[OptionSlot(option)] = true;
      flagged_.push_back({static_cast<int32_t>(offers_.size()), option, k});
    }
    facts.on_demand_usd_per_hour = flagged[0] ? 0 : offer.on_demand_usd_per_hour();
    facts.spot_usd_per_hour = flagged[1] ? 0 : offer.spot_usd_per_hour();
    facts.reserved_usd_per_hour = flagged[2] ? 0
                                  : offer.reserved_usd_per_hour() > 0
                                      ? offer.reserved_usd_per_hour()
                                      : facts.on_demand_usd_per_hour;
    facts.network_gbps = offer.network().gbps();
    offers_.push_back(facts);
    community_hosts_ += facts.community_host ? 1 : 0;
    any_host_reliability_ |= offer.has_host_reliability();
    host_reliability_.push_back(offer.has_host_reliability() ? offer.host_reliability() : -1.0);
    id_starts_.push_back(ids_.size());
    ids_ += offer.id();
    instance_type_.push_back(Intern(instance_types_, offer.instance_type()));
  }
  id_starts_.push_back(ids_.size());
}

// Each offer's place in id order.
void OfferIndex::RankIds() {
  // The catalog sorted its offers by id once already.
  const std::vector<int32_t>& by_id = catalog_->OfferOrderById();
  id_rank_.resize(by_id.size());
  for (size_t place = 0; place < by_id.size(); ++place)
    id_rank_[by_id[place]] = static_cast<int32_t>(place);
}

// Cells, by first offer.
void OfferIndex::BuildCells() {
  using CellKey = std::tuple<int32_t, int32_t, bool, bool, bool, bool, bool>;
  absl::flat_hash_map<CellKey, int> cell_ids;
  for (int i = 0; i < static_cast<int>(offers_.size()); ++i) {
    OfferFacts& f = offers_[i];
    const bool sold[3] = {f.on_demand_usd_per_hour > 0, f.spot_usd_per_hour > 0,
                          f.reserved_usd_per_hour > 0};
    auto [it, inserted] = cell_ids.try_emplace(
        CellKey{f.shape, f.max_nodes, f.unavailable, f.community_host, sold[0], sold[1], sold[2]},
        static_cast<int>(cells_.size()));
    if (inserted) {
      OfferCell cell;
      cell.shape = f.shape;
      cell.gpu = f.gpu;
      cell.gpus_per_node = f.gpus_per_node;
      cell.max_nodes = f.max_nodes;
      cell.unavailable = f.unavailable;
      cell.community_host = f.community_host;
      for (int slot = 0; slot < 3; ++slot) cell.sold[slot] = sold[slot];
      cells_.push_back(std::move(cell));
    }
    f.cell = it->second;
    cells_[f.cell].offers.push_back(i);
  }
}

// One kind per instance type (provider and Offer.instance_type) whose offers
// are all alike but for price and region, one per region; the others'
// offers get -1.
void OfferIndex::NameKinds() {
  struct Alike {
    int32_t cell;
    uint8_t availability;
    double network_gbps;
    absl::string_view id_prefix;  // "<provider>/<instance_type>/"
    bool operator==(const Alike& o) const {
      return cell == o.cell && availability == o.availability && network_gbps == o.network_gbps &&
             id_prefix == o.id_prefix;
    }
  };
  struct Type {
    Alike first;
    int32_t kind;  // -1: not all alike
  };
  absl::flat_hash_map<int64_t, Type> types;                 // by (provider, instance type)
  absl::flat_hash_set<std::pair<int64_t, int32_t>> places;  // (type, region)
  auto type_of = [&](int i) {
    return int64_t{offers_[i].provider} << 32 | static_cast<uint32_t>(instance_type_[i]);
  };
  for (int i = 0; i < static_cast<int>(offers_.size()); ++i) {
    const OfferFacts& f = offers_[i];
    const absl::string_view id = this->id(i);
    const size_t slash = id.rfind('/');
    const Alike alike{f.cell, f.availability, f.network_gbps,
                      slash == absl::string_view::npos ? id : id.substr(0, slash + 1)};
    auto [it, inserted] =
        types.try_emplace(type_of(i), Type{alike, static_cast<int32_t>(types.size())});
    const bool second_in_region = !places.insert({type_of(i), f.region}).second;
    if (slash == absl::string_view::npos || second_in_region ||
        (!inserted && !(it->second.first == alike))) {
      it->second.kind = -1;
    }
  }
  const auto& offers = catalog_->snapshot().offers();
  kind_.resize(offers_.size());
  for (int i = 0; i < static_cast<int>(offers_.size()); ++i) {
    const catalog::v1::Offer& offer = offers.Get(i);
    const bool dated =
        offer.last_seen_available_unix_seconds() > 0 && offer.stale_after_seconds() > 0;
    kind_[i] = dated ? -1 : types.at(type_of(i)).kind;
  }
}

// Each cell's offers by price per option sold, and whether distinct prices
// give distinct keys.
void OfferIndex::OrderCellsByPrice() {
  for (OfferCell& cell : cells_) {
    for (int slot = 0; slot < 3; ++slot) {
      if (!cell.sold[slot]) continue;
      auto price = [&](int32_t i) { return PriceAt(offers_[i], slot); };
      cell.by_price[slot] = cell.offers;
      std::stable_sort(cell.by_price[slot].begin(), cell.by_price[slot].end(),
                       [&](int32_t a, int32_t b) { return price(a) < price(b); });
      cell.price[slot].reserve(cell.by_price[slot].size());
      for (int32_t i : cell.by_price[slot]) cell.price[slot].push_back(price(i));
      double previous = 0;
      for (double p : cell.price[slot]) {
        if (!std::isfinite(p) || p < 1e-9 || (p != previous && p <= previous * (1 + 1e-12))) {
          distinct_price_keys_ = false;
        }
        previous = p;
      }
    }
  }
}

void OfferIndex::IndexNames() {
  by_provider_.assign(providers_.size(), {});
  by_region_.assign(regions_.size(), {});
  by_gpu_.assign(gpus_.size(), {});
  for (int i = 0; i < static_cast<int>(offers_.size()); ++i) {
    by_provider_[offers_[i].provider].push_back(i);
    by_region_[offers_[i].region].push_back(i);
    by_gpu_[offers_[i].gpu].push_back(i);
  }
  Fold(providers_, provider_names_, providers_folded_);
  Fold(regions_, region_names_, regions_folded_);
  BuildParts(providers(), &OfferFacts::provider, by_provider_parts_);
  BuildParts(regions(), &OfferFacts::region, by_region_parts_);
}

void OfferIndex::BuildParts(int ids, int32_t OfferFacts::*kind, Parts& parts) const {
  // Offers by (id, cell, offer index): each run is a part.
  std::vector<int32_t> order(offers_.size());
  for (int32_t i = 0; i < static_cast<int32_t>(order.size()); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const OfferFacts& fa = offers_[a];
    const OfferFacts& fb = offers_[b];
    return fa.*kind != fb.*kind ? fa.*kind < fb.*kind : fa.cell < fb.cell;
  });
  parts.starts.assign(static_cast<size_t>(ids) + 1, 0);
  parts.parts.clear();
  parts.offers.clear();
  for (size_t run = 0; run < order.size();) {
    const OfferFacts& f = offers_[order[run]];
    size_t end = run;
    while (end < order.size() && offers_[order[end]].*kind == f.*kind &&
           offers_[order[end]].cell == f.cell)
      ++end;
    const OfferCell& cell = cells_[f.cell];
    CellPart part;
    part.cell = f.cell;
    part.first = order[run];
    part.count = static_cast<int32_t>(end - run);
    part.begin = static_cast<uint32_t>(parts.offers.size());
    parts.offers.insert(parts.offers.end(), order.begin() + run, order.begin() + end);
    for (int slot = 0; slot < 3; ++slot) {
      if (!cell.sold[slot]) continue;
      // The cell's by_price order, restricted to this part.
      const size_t from = parts.offers.size();
      parts.offers.insert(parts.offers.end(), order.begin() + run, order.begin() + end);
      auto price = [&](int32_t i) { return PriceAt(offers_[i], slot); };
      std::stable_sort(parts.offers.begin() + from, parts.offers.end(),
                       [&](int32_t a, int32_t b) { return price(a) < price(b); });
    }
    ++parts.starts[f.*kind + 1];
    parts.parts.push_back(part);
    run = end;
  }
  for (int id = 0; id < ids; ++id) parts.starts[id + 1] += parts.starts[id];
}

const std::vector<int>& OfferIndex::ProviderIdsIgnoringCase(absl::string_view name) const {
  return Lookup(providers_folded_, name);
}

const std::vector<int>& OfferIndex::RegionIdsIgnoringCase(absl::string_view name) const {
  return Lookup(regions_folded_, name);
}

int OfferIndex::ProviderId(absl::string_view provider) const { return Find(providers_, provider); }
int OfferIndex::RegionId(absl::string_view region) const { return Find(regions_, region); }

int OfferIndex::GpuId(absl::string_view gpu_model_or_alias) const {
  const catalog::v1::Gpu* gpu = catalog_->FindGpu(gpu_model_or_alias);
  return Find(gpus_, gpu != nullptr ? absl::string_view(gpu->name()) : gpu_model_or_alias);
}

void OfferIndexCache::Prepare(std::shared_ptr<const catalog::Catalog> catalog) {
  if (catalog == nullptr) return;
  {
    absl::MutexLock lock(&mu_);
    if (Find(catalog.get()) != nullptr) return;
  }
  // Built without the lock: serving threads keep answering meanwhile.
  auto index = std::make_shared<const OfferIndex>(std::move(catalog));
  absl::MutexLock lock(&mu_);
  if (Find(&index->catalog()) == nullptr) Keep(std::move(index));
}

std::shared_ptr<const OfferIndex> OfferIndexCache::Get(
    std::shared_ptr<const catalog::Catalog> current, const Priced& priced) {
  if (current == nullptr) return nullptr;
  std::shared_ptr<const OfferIndex> newest, previous;
  {
    absl::MutexLock lock(&mu_);
    newest = Find(current.get());
    if (newest == nullptr) {  // nobody prepared it: build it here, once
      newest = std::make_shared<const OfferIndex>(std::move(current));
      Keep(newest);
    }
    auto it = std::find(indexes_.begin(), indexes_.end(), newest);
    if (it != indexes_.begin()) previous = *(it - 1);
  }
  // The books are asked without the lock (they have their own).
  if (priced == nullptr || priced(newest->catalog().snapshot().version())) {
    if (previous != nullptr) {
      absl::MutexLock lock(&mu_);
      DropOlderThan(newest.get());
    }
    return newest;
  }
  if (previous != nullptr && priced(previous->catalog().snapshot().version())) return previous;
  return newest;
}

std::shared_ptr<const OfferIndex> OfferIndexCache::Find(const catalog::Catalog* catalog) const {
  for (const std::shared_ptr<const OfferIndex>& index : indexes_) {
    if (&index->catalog() == catalog) return index;
  }
  return nullptr;
}

void OfferIndexCache::Keep(std::shared_ptr<const OfferIndex> index) {
  indexes_.push_back(std::move(index));
  if (indexes_.size() > kKept) indexes_.erase(indexes_.begin());
}

void OfferIndexCache::DropOlderThan(const OfferIndex* serving) {
  auto it = std::find_if(indexes_.begin(), indexes_.end(),
                         [serving](const auto& index) { return index.get() == serving; });
  if (it != indexes_.end()) indexes_.erase(indexes_.begin(), it);
}

}  // namespace gpuadvisor::gateway
