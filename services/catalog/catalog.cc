#include "services/catalog/catalog.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/io/deterministic.h"
#include "common/validation/field_ranges.h"
#include "services/catalog/fingerprint.h"
#include "services/catalog/provenance.h"
#include "services/catalog/topology_check.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Availability_IsValid;
using ::gpuadvisor::catalog::v1::CatalogSnapshot;
using ::gpuadvisor::catalog::v1::FabricType;
using ::gpuadvisor::catalog::v1::FabricType_IsValid;
using ::gpuadvisor::catalog::v1::Gpu;
using ::gpuadvisor::catalog::v1::LinkType_IsValid;
using ::gpuadvisor::catalog::v1::ListOffersRequest;
using ::gpuadvisor::catalog::v1::ListOffersResponse;
using ::gpuadvisor::catalog::v1::MemoryType_IsValid;
using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::catalog::v1::PurchaseOption;

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

absl::Status CheckNonNegative(absl::string_view field, double value) {
  if (!std::isfinite(value)) return FieldError(field, absl::StrCat("must be finite, got ", value));
  if (value < 0) return FieldError(field, absl::StrCat("must be >= 0, got ", value));
  return absl::OkStatus();
}

// The whole-instance price at `option`; with no option, the cheapest way the
// offer is sold. 0 = not sold that way.
double PriceAt(const Offer& offer, PurchaseOption option) {
  switch (option) {
    case v1::PURCHASE_OPTION_ON_DEMAND:
      return offer.on_demand_usd_per_hour();
    case v1::PURCHASE_OPTION_SPOT:
      return offer.spot_usd_per_hour();
    case v1::PURCHASE_OPTION_RESERVED:
      return offer.reserved_usd_per_hour();
    default: {
      double best = 0;
      for (double p : {offer.on_demand_usd_per_hour(), offer.spot_usd_per_hour(),
                       offer.reserved_usd_per_hour()}) {
        if (p > 0 && (best == 0 || p < best)) best = p;
      }
      return best;
    }
  }
}

bool ContainsIgnoreCase(const google::protobuf::RepeatedPtrField<std::string>& list,
                        absl::string_view value) {
  for (const std::string& item : list) {
    if (absl::EqualsIgnoreCase(item, value)) return true;
  }
  return false;
}

// Fingerprint of the filters: the request without its paging fields.
std::string FilterFingerprint(const ListOffersRequest& request) {
  ListOffersRequest filters = request;
  filters.clear_page_size();
  filters.clear_page_token();
  return FingerprintHex(DeterministicBytes(filters));
}

std::string EncodePageToken(absl::string_view fingerprint, absl::string_view last_id) {
  return absl::WebSafeBase64Escape(absl::StrCat("1|", fingerprint, "|", last_id));
}

// Returns the last id of the previous page.
absl::StatusOr<std::string> DecodePageToken(absl::string_view token,
                                            absl::string_view fingerprint) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw)) {
    return FieldError("page_token", "malformed");
  }
  std::vector<std::string> parts = absl::StrSplit(raw, absl::MaxSplits('|', 2));
  if (parts.size() != 3 || parts[0] != "1" || parts[2].empty()) {
    return FieldError("page_token", "malformed");
  }
  if (parts[1] != fingerprint) {
    return FieldError("page_token", "was issued for different filters");
  }
  return std::move(parts[2]);
}

}  // namespace

absl::Status ValidateGpu(const Gpu& gpu) {
  if (gpu.name().empty()) return FieldError("name", "must not be empty");
  if (gpu.memory_bytes() <= 0) {
    return FieldError("memory_bytes", absl::StrCat("must be > 0, got ", gpu.memory_bytes()));
  }
  if (!v1::AcceleratorKind_IsValid(gpu.accelerator_kind())) {
    return FieldError("accelerator_kind", absl::StrCat("unknown value ", gpu.accelerator_kind()));
  }
  if (!MemoryType_IsValid(gpu.memory_type())) {
    return FieldError("memory_type", absl::StrCat("unknown value ", gpu.memory_type()));
  }
  const std::pair<const char*, double> figures[] = {
      {"memory_bandwidth_bytes_per_second", gpu.memory_bandwidth_bytes_per_second()},
      {"bf16_flops", gpu.bf16_flops()},
      {"fp16_flops", gpu.fp16_flops()},
      {"fp8_flops", gpu.fp8_flops()},
      {"int8_ops", gpu.int8_ops()},
      {"fp32_flops", gpu.fp32_flops()},
      {"nvlink_bytes_per_second", gpu.nvlink_bytes_per_second()},
      {"pcie_bytes_per_second", gpu.pcie_bytes_per_second()},
  };
  for (const auto& [field, value] : figures) {
    if (absl::Status s = CheckNonNegative(field, value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

namespace {

// The spot statistic's range: min <= median <= max, none negative.
absl::Status CheckSpotRange(const Offer& offer) {
  for (const auto& [field, value] :
       {std::pair<const char*, double>{"spot_min_usd_per_hour", offer.spot_min_usd_per_hour()},
        std::pair<const char*, double>{"spot_max_usd_per_hour", offer.spot_max_usd_per_hour()}}) {
    if (absl::Status s = CheckNonNegative(field, value); !s.ok()) return s;
  }
  if (offer.spot_min_usd_per_hour() > 0 && offer.spot_usd_per_hour() > 0 &&
      offer.spot_min_usd_per_hour() > offer.spot_usd_per_hour()) {
    return FieldError(
        "spot_min_usd_per_hour",
        absl::StrCat("must be <= spot_usd_per_hour (the median, ", offer.spot_usd_per_hour(),
                     "), got ", offer.spot_min_usd_per_hour()));
  }
  if (offer.spot_max_usd_per_hour() > 0 &&
      offer.spot_max_usd_per_hour() < offer.spot_usd_per_hour()) {
    return FieldError(
        "spot_max_usd_per_hour",
        absl::StrCat("must be >= spot_usd_per_hour (the median, ", offer.spot_usd_per_hour(),
                     "), got ", offer.spot_max_usd_per_hour()));
  }
  if (offer.spot_zones() < 0) {
    return FieldError("spot_zones", absl::StrCat("must be >= 0, got ", offer.spot_zones()));
  }
  return absl::OkStatus();
}

// The spot price's own date and source (Offer.spot_as_of): an ISO date, only
// on a row with a spot price; a source needs its date.
absl::Status CheckSpotDate(const Offer& offer) {
  if (offer.spot_as_of().empty() && offer.spot_price_source().empty()) return absl::OkStatus();
  if (offer.spot_usd_per_hour() <= 0) {
    return FieldError(offer.spot_as_of().empty() ? "spot_price_source" : "spot_as_of",
                      "set on an offer without a spot price (spot_usd_per_hour 0)");
  }
  if (offer.spot_as_of().empty()) {
    return FieldError("spot_as_of", absl::StrCat("must be set with spot_price_source \"",
                                                 absl::CEscape(offer.spot_price_source()), "\""));
  }
  if (!IsIsoDate(offer.spot_as_of())) {
    return FieldError("spot_as_of", absl::StrCat("must be an ISO date (2026-11-29), got \"",
                                                 absl::CEscape(offer.spot_as_of()), "\""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateAndNormalizeOffer(const GpuNameResolver& gpus, Offer& offer) {
  if (offer.id().empty()) return FieldError("id", "must not be empty");
  if (offer.provider().empty()) return FieldError("provider", "must not be empty");
  if (offer.instance_type().empty()) return FieldError("instance_type", "must not be empty");
  if (offer.gpu_model().empty()) return FieldError("gpu_model", "must not be empty");
  std::optional<std::string> canonical = gpus.Canonical(offer.gpu_model());
  if (!canonical) {
    return FieldError("gpu_model",
                      absl::StrCat("unknown GPU \"", absl::CEscape(offer.gpu_model()), "\""));
  }
  if (*canonical != offer.gpu_model()) offer.set_gpu_model(*std::move(canonical));
  if (offer.gpus_per_node() < 1) {
    return FieldError("gpus_per_node", absl::StrCat("must be >= 1, got ", offer.gpus_per_node()));
  }
  if (offer.nodes() == 0) offer.set_nodes(1);
  if (offer.nodes() != 1) {
    return FieldError("nodes", absl::StrCat("must be 1 in the catalog, got ", offer.nodes()));
  }
  // 0 = not given: the topology rules decide (ApplyTopology), 1 until then.
  if (offer.max_nodes() == 0) offer.set_max_nodes(1);
  if (offer.max_nodes() < 1) {
    return FieldError("max_nodes", absl::StrCat("must be >= 0, got ", offer.max_nodes()));
  }
  if (offer.vcpus() < 0)
    return FieldError("vcpus", absl::StrCat("must be >= 0, got ", offer.vcpus()));
  if (offer.ram_bytes() < 0) {
    return FieldError("ram_bytes", absl::StrCat("must be >= 0, got ", offer.ram_bytes()));
  }
  if (offer.local_disk_bytes() < 0) {
    return FieldError("local_disk_bytes",
                      absl::StrCat("must be >= 0, got ", offer.local_disk_bytes()));
  }
  if (!LinkType_IsValid(offer.link())) {
    return FieldError("link", absl::StrCat("unknown value ", offer.link()));
  }
  if (!FabricType_IsValid(offer.fabric())) {
    return FieldError("fabric", absl::StrCat("unknown value ", offer.fabric()));
  }
  if (offer.fabric() == v1::FABRIC_TYPE_NONE && offer.max_nodes() != 1) {
    return FieldError("max_nodes",
                      absl::StrCat("must be 1 with FABRIC_TYPE_NONE, got ", offer.max_nodes()));
  }
  if (!Availability_IsValid(offer.availability())) {
    return FieldError("availability", absl::StrCat("unknown value ", offer.availability()));
  }
  const std::pair<const char*, double> figures[] = {
      {"link_bytes_per_second", offer.link_bytes_per_second()},
      {"fabric_gbps", offer.fabric_gbps()},
      {"on_demand_usd_per_hour", offer.on_demand_usd_per_hour()},
      {"spot_usd_per_hour", offer.spot_usd_per_hour()},
      {"reserved_usd_per_hour", offer.reserved_usd_per_hour()},
  };
  for (const auto& [field, value] : figures) {
    if (absl::Status s = CheckNonNegative(field, value); !s.ok()) return s;
  }
  if (offer.on_demand_usd_per_hour() == 0 && offer.spot_usd_per_hour() == 0 &&
      offer.reserved_usd_per_hour() == 0) {
    return FieldError("on_demand_usd_per_hour", "no price: on-demand, spot and reserved are all 0");
  }
  if (absl::Status s = CheckSpotRange(offer); !s.ok()) return s;
  if (absl::Status s = CheckSpotDate(offer); !s.ok()) return s;
  return ValidateOfferTopology(offer);
}

Catalog::Catalog(CatalogSnapshot snapshot)
    : snapshot_(std::move(snapshot)), resolver_(snapshot_.gpus()) {}

absl::StatusOr<std::shared_ptr<const Catalog>> Catalog::Create(CatalogSnapshot snapshot) {
  return Create(std::move(snapshot), nullptr);
}

absl::StatusOr<std::shared_ptr<const Catalog>> Catalog::Create(
    CatalogSnapshot snapshot, const std::function<void(CatalogSnapshot&)>& finish) {
  std::shared_ptr<Catalog> catalog(new Catalog(std::move(snapshot)));
  if (absl::Status s = catalog->Build(); !s.ok()) return s;
  if (finish) finish(catalog->snapshot_);
  return std::shared_ptr<const Catalog>(std::move(catalog));
}

absl::Status Catalog::Build() {
  if (absl::Status s = BuildGpus(); !s.ok()) return s;
  return BuildOffers();
}

absl::Status Catalog::BuildGpus() {
  // GPUs: valid, and every spelling (name or alias key) names one GPU only.
  absl::flat_hash_map<std::string, int> owner_by_key;
  for (int i = 0; i < snapshot_.gpus_size(); ++i) {
    const Gpu& gpu = snapshot_.gpus(i);
    const std::string path = absl::StrCat("gpus[", i, "].");
    if (absl::Status s = ValidateGpu(gpu); !s.ok()) return Prefixed(path, s);
    auto claim = [&](const std::string& spelling, const std::string& field) -> absl::Status {
      auto [it, inserted] = owner_by_key.emplace(GpuNameResolver::Key(spelling), i);
      if (!inserted && it->second != i) {
        return FieldError(absl::StrCat(path, field),
                          absl::StrCat("\"", spelling, "\" is already a name of ",
                                       snapshot_.gpus(it->second).name()));
      }
      return absl::OkStatus();
    };
    if (absl::Status s = claim(gpu.name(), "name"); !s.ok()) return s;
    gpu_by_name_.emplace(gpu.name(), i);
  }
  for (int i = 0; i < snapshot_.gpus_size(); ++i) {
    const Gpu& gpu = snapshot_.gpus(i);
    for (int a = 0; a < gpu.aliases_size(); ++a) {
      auto [it, inserted] = owner_by_key.emplace(GpuNameResolver::Key(gpu.aliases(a)), i);
      if (!inserted && it->second != i) {
        return FieldError(absl::StrCat("gpus[", i, "].aliases[", a, "]"),
                          absl::StrCat("\"", gpu.aliases(a), "\" is already a name of ",
                                       snapshot_.gpus(it->second).name()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Catalog::BuildOffers() {
  const int n = snapshot_.offers_size();
  offer_by_id_.reserve(static_cast<size_t>(n));
  std::vector<int> gpu_index(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Offer& offer = *snapshot_.mutable_offers(i);
    const std::string path = absl::StrCat("offers[", i, "].");
    if (absl::Status s = ValidateAndNormalizeOffer(resolver_, offer); !s.ok()) {
      return Prefixed(path, s);
    }
    auto [it, inserted] = offer_by_id_.emplace(offer.id(), &offer);
    if (!inserted) {
      int first = 0;  // the offer it duplicates (found only for the message)
      while (&snapshot_.offers(first) != it->second) ++first;
      return FieldError(absl::StrCat(path, "id"),
                        absl::StrCat("\"", offer.id(), "\" duplicates offers[", first, "]"));
    }
    gpu_index[static_cast<size_t>(i)] = gpu_by_name_.at(offer.gpu_model());
  }
  // Ids are unique, so this order is total and stable across loads.
  order_by_id_ = OrderById(snapshot_.offers());
  offers_by_gpu_.resize(static_cast<size_t>(snapshot_.gpus_size()));
  sorted_offers_.reserve(order_by_id_.size());
  sorted_gpu_index_.reserve(order_by_id_.size());
  for (const int32_t i : order_by_id_) {
    const Offer* offer = &snapshot_.offers(i);
    const int gpu = gpu_index[static_cast<size_t>(i)];
    sorted_offers_.push_back(offer);
    sorted_gpu_index_.push_back(gpu);
    offers_by_gpu_[static_cast<size_t>(gpu)].push_back(offer);
  }
  return absl::OkStatus();
}

std::vector<int32_t> OrderById(const google::protobuf::RepeatedPtrField<Offer>& offers) {
  const int n = offers.size();
  auto less = [&offers](int32_t a, int32_t b) { return offers.Get(a).id() < offers.Get(b).id(); };
  // Runs of at least kLongRun offers already in order are kept whole; the
  // rest is sorted and becomes one more run; then the runs are merged in
  // pairs until one is left.
  constexpr int kLongRun = 256;
  std::vector<int32_t> order, rest;
  order.reserve(static_cast<size_t>(n));
  std::vector<size_t> bounds = {0};  // of the runs in `order`
  for (int start = 0, end = 0; start < n; start = end) {
    for (end = start + 1; end < n && less(end - 1, end);) ++end;
    std::vector<int32_t>& to = end - start >= kLongRun ? order : rest;
    for (int i = start; i < end; ++i) to.push_back(i);
    if (&to == &order) bounds.push_back(order.size());
  }
  std::sort(rest.begin(), rest.end(), less);
  order.insert(order.end(), rest.begin(), rest.end());
  if (!rest.empty()) bounds.push_back(order.size());
  while (bounds.size() > 2) {
    std::vector<size_t> merged = {0};
    for (size_t r = 1; r < bounds.size(); r += 2) {
      if (r + 1 < bounds.size()) {
        std::inplace_merge(order.begin() + static_cast<ptrdiff_t>(bounds[r - 1]),
                           order.begin() + static_cast<ptrdiff_t>(bounds[r]),
                           order.begin() + static_cast<ptrdiff_t>(bounds[r + 1]), less);
      }
      merged.push_back(bounds[std::min(r + 1, bounds.size() - 1)]);
    }
    bounds = std::move(merged);
  }
  return order;
}

const Gpu* Catalog::FindGpu(absl::string_view name_or_alias) const {
  std::optional<std::string> canonical = resolver_.Canonical(name_or_alias);
  if (!canonical) return nullptr;
  auto it = gpu_by_name_.find(*canonical);
  return it == gpu_by_name_.end() ? nullptr : &snapshot_.gpus(it->second);
}

const Offer* Catalog::FindOffer(absl::string_view id) const {
  auto it = offer_by_id_.find(id);
  return it == offer_by_id_.end() ? nullptr : it->second;
}

const std::vector<const Offer*>& Catalog::OffersForGpu(absl::string_view canonical_name) const {
  static const std::vector<const Offer*>& kEmpty = *new std::vector<const Offer*>();
  auto it = gpu_by_name_.find(canonical_name);
  return it == gpu_by_name_.end() ? kEmpty : offers_by_gpu_[static_cast<size_t>(it->second)];
}

const Gpu* Catalog::GpuOf(const Offer& offer) const {
  auto it = gpu_by_name_.find(offer.gpu_model());
  return it == gpu_by_name_.end() ? nullptr : &snapshot_.gpus(it->second);
}

namespace {

// The filters of a ListOffersRequest, checked, in the form Matches tests.
struct OfferFilter {
  std::vector<char> gpu_allowed;  // per gpus index; empty = any
  uint64_t link_mask = 0;         // 0 = any
  uint64_t fabric_mask = 0;
};

absl::Status CheckListArguments(const ListOffersRequest& request) {
  // Each number's physical range from the table all services share, then how
  // they relate.
  if (absl::Status s = validation::CheckRanges(request); !s.ok()) return s;
  if (request.max_gpus() != 0 && request.max_gpus() < request.min_gpus()) {
    return FieldError("max_gpus", absl::StrCat("must be >= min_gpus (", request.min_gpus(),
                                               "), got ", request.max_gpus()));
  }
  if (!v1::PurchaseOption_IsValid(request.purchase_option())) {
    return FieldError("purchase_option", absl::StrCat("unknown value ", request.purchase_option()));
  }
  return absl::OkStatus();
}

absl::StatusOr<OfferFilter> ReadFilter(const ListOffersRequest& request,
                                       const GpuNameResolver& resolver,
                                       const absl::flat_hash_map<std::string, int>& gpu_by_name,
                                       int gpus) {
  OfferFilter filter;
  if (request.gpu_models_size() > 0) {
    filter.gpu_allowed.assign(static_cast<size_t>(gpus), 0);
    for (int i = 0; i < request.gpu_models_size(); ++i) {
      std::optional<std::string> canonical = resolver.Canonical(request.gpu_models(i));
      auto it = canonical ? gpu_by_name.find(*canonical) : gpu_by_name.end();
      if (it == gpu_by_name.end()) {
        return FieldError(
            absl::StrCat("gpu_models[", i, "]"),
            absl::StrCat("unknown GPU \"", absl::CEscape(request.gpu_models(i)), "\""));
      }
      filter.gpu_allowed[static_cast<size_t>(it->second)] = 1;
    }
  }
  for (int link : request.links()) {
    if (!LinkType_IsValid(link)) return FieldError("links", absl::StrCat("unknown value ", link));
    filter.link_mask |= uint64_t{1} << link;
  }
  for (int fabric : request.fabrics()) {
    if (!FabricType_IsValid(fabric)) {
      return FieldError("fabrics", absl::StrCat("unknown value ", fabric));
    }
    filter.fabric_mask |= uint64_t{1} << fabric;
  }
  return filter;
}

bool Matches(const ListOffersRequest& request, const OfferFilter& filter, const Offer& offer,
             int gpu_index, int64_t gpu_memory_bytes) {
  if (!filter.gpu_allowed.empty() && !filter.gpu_allowed[static_cast<size_t>(gpu_index)]) {
    return false;
  }
  if (request.min_gpu_memory_bytes() > 0 && gpu_memory_bytes < request.min_gpu_memory_bytes()) {
    return false;
  }
  if (offer.gpus_per_node() < request.min_gpus()) return false;
  if (request.max_gpus() > 0 && offer.gpus_per_node() > request.max_gpus()) return false;
  if (filter.link_mask != 0 && !(filter.link_mask & (uint64_t{1} << offer.link()))) return false;
  if (filter.fabric_mask != 0 && !(filter.fabric_mask & (uint64_t{1} << offer.fabric()))) {
    return false;
  }
  if (request.providers_size() > 0 && !ContainsIgnoreCase(request.providers(), offer.provider())) {
    return false;
  }
  if (request.regions_size() > 0 && !ContainsIgnoreCase(request.regions(), offer.region())) {
    return false;
  }
  const PurchaseOption option = request.purchase_option();
  if (option != v1::PURCHASE_OPTION_UNSPECIFIED || request.max_usd_per_hour() > 0) {
    const double price = PriceAt(offer, option);
    if (price <= 0) return false;  // not sold this way
    if (request.max_usd_per_hour() > 0 && price > request.max_usd_per_hour()) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<ListOffersResponse> Catalog::ListOffers(const ListOffersRequest& request) const {
  // Argument checks first, naming the field.
  if (absl::Status s = CheckListArguments(request); !s.ok()) return s;
  absl::StatusOr<OfferFilter> filter =
      ReadFilter(request, resolver_, gpu_by_name_, snapshot_.gpus_size());
  if (!filter.ok()) return filter.status();

  const std::string fingerprint = FilterFingerprint(request);
  size_t start = 0;
  if (!request.page_token().empty()) {
    absl::StatusOr<std::string> last_id = DecodePageToken(request.page_token(), fingerprint);
    if (!last_id.ok()) return last_id.status();
    start = static_cast<size_t>(
        std::upper_bound(sorted_offers_.begin(), sorted_offers_.end(), *last_id,
                         [](const std::string& id, const Offer* o) { return id < o->id(); }) -
        sorted_offers_.begin());
  }
  const int page_size =
      request.page_size() == 0 ? kDefaultPageSize : std::min(request.page_size(), kMaxPageSize);

  ListOffersResponse response;
  response.set_catalog_version(snapshot_.version());
  int total = 0;
  bool more = false;
  const Offer* last = nullptr;
  for (size_t i = 0; i < sorted_offers_.size(); ++i) {
    const int gpu_index = sorted_gpu_index_[i];
    if (!Matches(request, *filter, *sorted_offers_[i], gpu_index,
                 snapshot_.gpus(gpu_index).memory_bytes())) {
      continue;
    }
    ++total;
    if (i < start) continue;
    if (response.offers_size() < page_size) {
      *response.add_offers() = *sorted_offers_[i];
      last = sorted_offers_[i];
    } else {
      more = true;
    }
  }
  response.set_total_size(total);
  if (more && last != nullptr) {
    response.set_next_page_token(EncodePageToken(fingerprint, last->id()));
  }
  return response;
}

}  // namespace gpuadvisor::catalog
