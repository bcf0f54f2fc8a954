#include "services/gateway/recommender.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/types/span.h"
#include "common/status/status_macros.h"
#include "services/gateway/name_match.h"
#include "services/gateway/workload_defaults.h"

namespace gpuadvisor::gateway {
namespace {

using catalog::v1::FabricType;
using catalog::v1::LinkType;
using catalog::v1::Offer;
using catalog::v1::PurchaseOption;
using sizing::v1::Task;

bool IsTraining(Task task) {
  return task == sizing::v1::TASK_PRETRAIN || task == sizing::v1::TASK_FULL_FINETUNE ||
         task == sizing::v1::TASK_LORA || task == sizing::v1::TASK_QLORA;
}

bool IsServing(Task task) {
  return task == sizing::v1::TASK_INFERENCE || task == sizing::v1::TASK_BATCH_INFERENCE;
}

// The catalog's list price per node at `option`; 0 when not sold that way.
// Reserved falls back to on-demand (in the index): pricing applies the
// provider's discount.
double ListPrice(const OfferFacts& offer, PurchaseOption option) {
  switch (option) {
    case catalog::v1::PURCHASE_OPTION_SPOT:
      return offer.spot_usd_per_hour;
    case catalog::v1::PURCHASE_OPTION_RESERVED:
      return offer.reserved_usd_per_hour;
    default:
      return offer.on_demand_usd_per_hour;
  }
}

// How far a candidate got; an excluded offer is reported with the furthest
// stage any of its candidates reached.
int Stage(v1::ExclusionReason reason) {
  switch (reason) {
    case v1::EXCLUSION_REASON_FILTERED:
      return 0;
    case v1::EXCLUSION_REASON_UNAVAILABLE:
      return 1;
    case v1::EXCLUSION_REASON_TOO_MANY_GPUS:
      return 2;
    case v1::EXCLUSION_REASON_NO_FABRIC:
      return 3;
    case v1::EXCLUSION_REASON_DOES_NOT_FIT:
      return 3;
    case v1::EXCLUSION_REASON_TOO_SLOW:
      return 4;
    case v1::EXCLUSION_REASON_NOT_PRICED:
      return 5;
    case v1::EXCLUSION_REASON_RUNS_TOO_LONG:
      return 5;
    case v1::EXCLUSION_REASON_OVER_BUDGET:
      return 6;
    case v1::EXCLUSION_REASON_MISSES_DEADLINE:
      return 7;
    default:
      return -1;
  }
}

absl::Status NonNegative(double value, absl::string_view field) {
  if (!std::isfinite(value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": must be finite and >= 0"));
  }
  return absl::OkStatus();
}

absl::Status ValidateConstraints(const v1::RecommendRequest& request) {
  const v1::Constraints& c = request.constraints();
  for (auto [value, field] :
       {std::pair<double, const char*>{c.max_usd_per_hour(), "constraints.max_usd_per_hour"},
        {c.max_total_usd(), "constraints.max_total_usd"},
        {c.deadline_hours(), "constraints.deadline_hours"},
        {c.min_tokens_per_second(), "constraints.min_tokens_per_second"},
        {c.max_time_to_first_token_seconds(), "constraints.max_time_to_first_token_seconds"},
        {c.min_tokens_per_second_per_user(), "constraints.min_tokens_per_second_per_user"}}) {
    if (absl::Status s = NonNegative(value, field); !s.ok()) return s;
  }
  if (c.has_min_user_tokens_per_second()) {
    RETURN_IF_ERROR(
        NonNegative(c.min_user_tokens_per_second(), "constraints.min_user_tokens_per_second"));
  }
  if (request.workload().has_egress_gb()) {
    RETURN_IF_ERROR(NonNegative(request.workload().egress_gb(), "workload.egress_gb"));
  }
  if (c.has_vram_margin() && !(c.vram_margin() >= 0 && c.vram_margin() <= 0.9)) {
    return absl::InvalidArgumentError("constraints.vram_margin: must be between 0 and 0.9");
  }
  if (c.max_gpus() < 0) return absl::InvalidArgumentError("constraints.max_gpus: must be >= 0");
  if (c.max_nodes() < 0 || c.max_nodes() > kMaxMaxNodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("constraints.max_nodes: must be between 0 and ", kMaxMaxNodes));
  }
  if (c.objective() == v1::OBJECTIVE_DEADLINE && c.deadline_hours() <= 0) {
    return absl::InvalidArgumentError(
        "constraints.deadline_hours: required (> 0) for OBJECTIVE_DEADLINE");
  }
  if (!v1::Objective_IsValid(c.objective())) {
    return absl::InvalidArgumentError("constraints.objective: unknown value");
  }
  for (int i = 0; i < c.purchase_options_size(); ++i) {
    if (c.purchase_options(i) == catalog::v1::PURCHASE_OPTION_UNSPECIFIED ||
        !catalog::v1::PurchaseOption_IsValid(c.purchase_options(i))) {
      return absl::InvalidArgumentError(absl::StrCat("constraints.purchase_options[", i,
                                                     "]: must be ON_DEMAND, SPOT or RESERVED"));
    }
  }
  if (request.max_results() < 0 || request.max_results() > kMaxMaxResults) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_results: must be between 0 and ", kMaxMaxResults));
  }
  if (!request.has_workload() || request.workload().task() == sizing::v1::TASK_UNSPECIFIED) {
    return absl::InvalidArgumentError("workload.task: required");
  }
  for (const auto& [names, field] :
       {std::pair<const google::protobuf::RepeatedPtrField<std::string>*, const char*>{
            &c.providers(), "providers"},
        {&c.regions(), "regions"},
        {&c.gpu_models(), "gpu_models"}}) {
    for (int i = 0; i < names->size(); ++i) {
      if (names->Get(i).empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("constraints.", field, "[", i, "]: must not be empty"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status UnknownName(absl::string_view field, int i, absl::string_view kind,
                         absl::string_view name, const std::vector<std::string>& valid) {
  return absl::InvalidArgumentError(
      absl::StrCat("constraints.", field, "[", i, "]: unknown ", kind, " \"", name,
                   "\"; closest: ", absl::StrJoin(ClosestNames(name, valid), ", ")));
}

// printf's "%.<precision>f" of `value`, without parsing a format: the
// per-recommendation texts hold a dozen numbers each. std::to_chars prints
// the exactly rounded value as printf does in the "C" locale; a value too
// long for the buffer takes the format path.
std::string Fixed(double value, int precision) {
  char buffer[48];
  const std::to_chars_result out =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed, precision);
  if (out.ec != std::errc()) return absl::StrFormat("%.*f", precision, value);
  return std::string(buffer, out.ptr);
}

// printf's "%+.<precision>f": the sign always.
std::string SignedFixed(double value, int precision) {
  std::string text = Fixed(value, precision);
  if (text.empty() || text[0] != '-') text.insert(text.begin(), '+');
  return text;
}

std::string Gb(double bytes) { return absl::StrCat(Fixed(bytes / 1e9, 1), " GB"); }

std::string LinkName(LinkType link) {
  switch (link) {
    case catalog::v1::LINK_TYPE_NVLINK:
      return "NVLink";
    case catalog::v1::LINK_TYPE_PCIE:
      return "PCIe";
    case catalog::v1::LINK_TYPE_INFINITY_FABRIC:
      return "Infinity Fabric";
    default:
      return "no link";
  }
}

std::string FabricName(FabricType fabric) {
  switch (fabric) {
    case catalog::v1::FABRIC_TYPE_INFINIBAND:
      return "InfiniBand";
    case catalog::v1::FABRIC_TYPE_EFA:
      return "EFA";
    case catalog::v1::FABRIC_TYPE_ROCE:
      return "RoCE";
    case catalog::v1::FABRIC_TYPE_ETHERNET:
      return "Ethernet";
    default:
      return "no fabric";
  }
}

// "16.1", "2000": GB without exponents.
std::string Gigabytes(double gb) { return Fixed(gb, gb < 100 ? 1 : 0); }

const char* OptionName(PurchaseOption option) {
  switch (option) {
    case catalog::v1::PURCHASE_OPTION_SPOT:
      return "spot";
    case catalog::v1::PURCHASE_OPTION_RESERVED:
      return "reserved";
    default:
      return "on-demand";
  }
}

}  // namespace

absl::StatusOr<RecommendationRun> RecommendationRun::Start(
    std::shared_ptr<const catalog::Catalog> catalog, const v1::RecommendRequest& request,
    const RegionGroups* groups, const OverheadModel* overheads, EstimateCache* estimate_cache) {
  return Start(
      catalog == nullptr ? nullptr : std::make_shared<const OfferIndex>(std::move(catalog)),
      request, groups, overheads, estimate_cache);
}

absl::StatusOr<RecommendationRun> RecommendationRun::Start(std::shared_ptr<const OfferIndex> index,
                                                           const v1::RecommendRequest& request,
                                                           const RegionGroups* groups,
                                                           const OverheadModel* overheads,
                                                           EstimateCache* estimate_cache,
                                                           Scan scan) {
  if (absl::Status s = ValidateConstraints(request); !s.ok()) return s;
  if (index == nullptr) return absl::UnavailableError("no catalog replica yet; retry");
  RecommendationRun run;
  run.index_ = std::move(index);
  run.catalog_ = &run.index_->catalog();
  run.request_ = request;
  RETURN_IF_ERROR(ApplyWorkloadDefaults(*run.request_.mutable_workload(), run.assumptions_));
  const v1::Constraints& c = request.constraints();
  run.objective_ =
      c.objective() == v1::OBJECTIVE_UNSPECIFIED ? v1::OBJECTIVE_CHEAPEST : c.objective();
  if (c.objective() == v1::OBJECTIVE_UNSPECIFIED) {
    run.assumptions_.push_back(
        MakeAssumption("constraints.objective", "OBJECTIVE_CHEAPEST", "lowest total job cost"));
  }
  run.max_results_ = request.max_results() == 0 ? kDefaultMaxResults : request.max_results();
  run.max_nodes_ = c.single_node() ? 1 : (c.max_nodes() == 0 ? kMaxMaxNodes : c.max_nodes());
  if (!c.single_node() && c.max_nodes() == 0) {
    run.assumptions_.push_back(MakeAssumption(
        "constraints.max_nodes", "each offer's largest cluster",
        absl::StrCat("clusters of 1, 2, 4, ... nodes up to what the provider sells for the offer "
                     "(Offer.max_nodes, at most ",
                     kMaxMaxNodes, "); set max_nodes to cap it")));
  }
  run.vram_margin_ = c.has_vram_margin() ? c.vram_margin() : kDefaultVramMargin;
  if (!c.has_vram_margin()) {
    run.assumptions_.push_back(MakeAssumption("constraints.vram_margin",
                                              absl::StrFormat("%.2f", kDefaultVramMargin),
                                              "fraction of GPU memory kept free"));
  }
  const sizing::v1::Workload& w = run.request_.workload();
  run.training_ = IsTraining(w.task());
  run.serving_ = IsServing(w.task());
  run.overheads_ = overheads;
  run.always_on_ = w.task() == sizing::v1::TASK_INFERENCE;
  run.restartable_ = w.has_restartable() ? w.restartable() : !run.always_on_;
  // The per-user speed floor: the caller's, else the default on an
  // interactive endpoint (stated), else none.
  if (c.has_min_user_tokens_per_second()) {
    run.min_user_tps_ = c.min_user_tokens_per_second();
    run.min_user_tps_field_ = "min_user_tokens_per_second";
  } else if (c.min_tokens_per_second_per_user() > 0) {
    run.min_user_tps_ = c.min_tokens_per_second_per_user();
    run.min_user_tps_field_ = "min_tokens_per_second_per_user";
  } else if (run.always_on_ && overheads != nullptr &&
             overheads->serving_defaults().min_user_tokens_per_second() > 0) {
    const double floor = overheads->serving_defaults().min_user_tokens_per_second();
    run.min_user_tps_ = floor;
    run.assumptions_.push_back(MakeAssumption(
        "constraints.min_user_tokens_per_second", absl::StrFormat("%g", floor),
        absl::StrFormat("interactive endpoint: each user's stream at least %g output tokens/s (%s; "
                        "data/gateway/overheads.textproto as of %s); set it to 0 "
                        "(--min_user_tps=0) to lift the "
                        "floor",
                        floor, overheads->serving_defaults().source(), overheads->as_of())));
  }
  if (!run.serving_) run.min_user_tps_ = 0;
  if (overheads != nullptr) {
    run.overhead_rules_.reserve(run.index_->providers());
    for (const std::string& provider : run.index_->provider_names()) {
      run.overhead_rules_.push_back(overheads->RuleFor(provider));
    }
  }
  run.estimate_cache_ = estimate_cache;
  run.scan_ = scan;
  RETURN_IF_ERROR(run.Enumerate(groups));
  run.PrepareSizing();
  return run;
}

void RecommendationRun::Exclude(v1::ExclusionReason& current, int& current_config,
                                int* current_candidate, v1::ExclusionReason reason, int config,
                                int candidate) {
  // A later candidate at the same stage is a larger cluster or a later
  // option: its numbers explain the exclusion best.
  if (Stage(reason) >= Stage(current)) {
    current = reason;
    current_config = config;
    if (current_candidate != nullptr) *current_candidate = candidate;
  }
}

void RecommendationRun::ExcludeUnit(Unit& unit, v1::ExclusionReason reason, int config) {
  Exclude(unit.reason, unit.config, nullptr, reason, config, -1);
}

void RecommendationRun::ExcludeQuoted(const Candidate& candidate, int candidate_index,
                                      v1::ExclusionReason reason) {
  Quoted& q = quoted_offers_[candidate.offer_index];
  Exclude(q.reason, q.config, &q.candidate, reason, -1, candidate_index);
}

absl::Status RecommendationRun::ResolveFilters(const RegionGroups* groups) {
  const v1::Constraints& c = request_.constraints();
  groups_ = groups;
  if (!c.providers().empty()) {
    provider_ok_.assign(index_->providers(), 0);
    for (int i = 0; i < c.providers_size(); ++i) {
      const std::vector<int>& ids = index_->ProviderIdsIgnoringCase(c.providers(i));
      if (ids.empty())
        return UnknownName("providers", i, "provider", c.providers(i), index_->provider_names());
      for (int id : ids) provider_ok_[id] = 1;
    }
  }
  if (!c.regions().empty()) {
    region_ok_.assign(index_->regions(), 0);
    for (int i = 0; i < c.regions_size(); ++i) {
      const std::vector<int>& ids = index_->RegionIdsIgnoringCase(c.regions(i));
      for (int id : ids) region_ok_[id] = 1;
      const RegionGroups::Group* group = groups != nullptr ? groups->Find(c.regions(i)) : nullptr;
      if (group != nullptr) region_groups_.push_back(group);
      if (ids.empty() && group == nullptr) {
        std::vector<std::string> valid = index_->region_names();
        if (groups != nullptr)
          valid.insert(valid.end(), groups->names().begin(), groups->names().end());
        return UnknownName("regions", i, "region or region group", c.regions(i), valid);
      }
    }
  }
  if (!c.gpu_models().empty()) {
    gpu_ok_.assign(index_->gpus(), 0);
    for (int i = 0; i < c.gpu_models_size(); ++i) {
      const int id = index_->GpuId(c.gpu_models(i));
      if (id >= 0) {
        gpu_ok_[id] = 1;
      } else if (catalog_->FindGpu(c.gpu_models(i)) == nullptr) {
        // Known GPUs without offers are valid names that select nothing.
        std::vector<std::string> valid;
        for (const catalog::v1::Gpu& gpu : catalog_->snapshot().gpus()) {
          valid.push_back(gpu.name());
          valid.insert(valid.end(), gpu.aliases().begin(), gpu.aliases().end());
        }
        return UnknownName("gpu_models", i, "GPU", c.gpu_models(i), valid);
      }
    }
  }
  return absl::OkStatus();
}

bool RecommendationRun::RegionPasses(const OfferFacts& f) {
  if (region_ok_.empty() || region_ok_[f.region]) return true;
  if (region_groups_.empty()) return false;
  const int64_t key = (int64_t{f.provider} << 32) | static_cast<uint32_t>(f.region);
  auto [it, inserted] = group_member_.try_emplace(key, false);
  if (inserted) {
    const std::string& provider = index_->provider_names()[f.provider];
    const std::string& region = index_->region_names()[f.region];
    for (const RegionGroups::Group* group : region_groups_) {
      if (RegionGroups::Contains(*group, provider, region)) {
        it->second = true;
        break;
      }
    }
  }
  return it->second;
}

std::string RecommendationRun::MinUserTpsName() const {
  return min_user_tps_field_.empty() ? "the default min_user_tokens_per_second"
                                     : absl::StrCat("your ", min_user_tps_field_);
}

int RecommendationRun::NodeCap(int32_t max_nodes) const { return std::min(max_nodes_, max_nodes); }

bool RecommendationRun::PassesNames(int offer) {
  const OfferFacts& f = index_->offers()[offer];
  return (provider_ok_.empty() || provider_ok_[f.provider]) &&
         (gpu_ok_.empty() || gpu_ok_[f.gpu]) && RegionPasses(f);
}

std::string RecommendationRun::NodeCapText(const OfferFacts& f) const {
  const v1::Constraints& c = request_.constraints();
  if (c.single_node()) return "single_node";
  if (f.max_nodes <= max_nodes_) {
    return f.max_nodes == 1
               ? "this offer is single-node (no inter-node fabric)"
               : absl::StrCat(f.max_nodes, " nodes, the largest cluster sold for this offer");
  }
  return c.max_nodes() > 0 ? absl::StrCat("constraints.max_nodes = ", c.max_nodes())
                           : absl::StrCat(kMaxMaxNodes, " nodes, the gateway's limit");
}

absl::Status RecommendationRun::Enumerate(const RegionGroups* groups) {
  const v1::Constraints& c = request_.constraints();
  // An always-on endpoint or a job that cannot resume is not offered spot
  // unless the caller asks for it (then it comes with a warning).
  for (int option : c.purchase_options()) options_.push_back(static_cast<PurchaseOption>(option));
  if (options_.empty()) {
    options_.push_back(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
    const bool spot = restartable_ && !always_on_;
    if (spot) options_.push_back(catalog::v1::PURCHASE_OPTION_SPOT);
    assumptions_.push_back(
        MakeAssumption("constraints.purchase_options", spot ? "on-demand, spot" : "on-demand",
                       spot ? "reserved needs a commitment: ask for PURCHASE_OPTION_RESERVED"
                            : "no spot: the job cannot resume after a preemption (ask for "
                              "PURCHASE_OPTION_SPOT to see it)"));
  }
  RETURN_IF_ERROR(ResolveFilters(groups));
  name_filtered_ = !provider_ok_.empty() || !region_ok_.empty() || !gpu_ok_.empty();
  const std::vector<OfferFacts>& facts = index_->offers();
  const std::vector<OfferCell>& cells = index_->cells();
  const int offers = static_cast<int>(facts.size());
  candidates_considered_ = offers;
  shape_configs_.assign(index_->shapes().size() * kMaxSteps, -1);
  shape_steps_.assign(index_->shapes().size(), 0);

  // Units: the cells (or, for the full scan, the offers) that pass the name
  // filters, by first offer.
  if (!name_filtered_) {
    if (scan_ == Scan::kTopK) {
      units_.reserve(cells.size());
      for (int cell = 0; cell < static_cast<int>(cells.size()); ++cell) {
        Unit unit;
        unit.cell = cell;
        unit.count = static_cast<int>(cells[cell].offers.size());
        unit.first = cells[cell].offers.front();
        units_.push_back(std::move(unit));
      }
    } else {
      units_.resize(offers);
      for (int offer = 0; offer < offers; ++offer) {
        units_[offer].cell = facts[offer].cell;
        units_[offer].offer = units_[offer].first = offer;
        units_[offer].count = 1;
      }
    }
  } else if (scan_ == Scan::kTopK && region_groups_.empty() &&
             provider_ok_.empty() != region_ok_.empty()) {
    // Providers only or regions only (GPUs are a property of the cell): the
    // index's parts of the cells give the offers that pass, counted and
    // ordered, without visiting them.
    part_mode_ = true;
    parts_by_region_ = !region_ok_.empty();
    const std::vector<char>& ok = parts_by_region_ ? region_ok_ : provider_ok_;
    for (int id = 0; id < static_cast<int>(ok.size()); ++id) {
      if (!ok[id]) continue;
      for (const CellPart& part :
           parts_by_region_ ? index_->CellPartsOfRegion(id) : index_->CellPartsOfProvider(id)) {
        if (!gpu_ok_.empty() && !gpu_ok_[cells[part.cell].gpu]) continue;
        parts_.push_back(&part);
      }
    }
    std::stable_sort(parts_.begin(), parts_.end(),
                     [](const CellPart* a, const CellPart* b) { return a->cell < b->cell; });
    int passing = 0;
    for (int i = 0; i < static_cast<int>(parts_.size());) {
      Unit unit;
      unit.cell = parts_[i]->cell;
      unit.first = parts_[i]->first;
      unit.parts_begin = i;
      for (; i < static_cast<int>(parts_.size()) && parts_[i]->cell == unit.cell; ++i) {
        unit.count += parts_[i]->count;
        unit.first = std::min(unit.first, parts_[i]->first);
      }
      unit.parts_end = i;
      passing += unit.count;
      units_.push_back(std::move(unit));
    }
    std::sort(units_.begin(), units_.end(),
              [](const Unit& a, const Unit& b) { return a.first < b.first; });
    filtered_by_name_ = offers - passing;
    if (filtered_by_name_ > 0) {
      for (int offer = 0; offer < offers && first_filtered_by_name_ < 0; ++offer) {
        if (!PassesNames(offer)) first_filtered_by_name_ = offer;
      }
    }
  } else {
    // Visit only the offers of the providers, GPUs or regions asked for, when given.
    std::vector<const std::vector<int32_t>*> sources;
    if (!provider_ok_.empty() && scan_ == Scan::kTopK) {
      for (int id = 0; id < index_->providers(); ++id) {
        if (provider_ok_[id]) sources.push_back(&index_->OffersOfProvider(id));
      }
    } else if (!gpu_ok_.empty() && scan_ == Scan::kTopK) {
      for (int id = 0; id < index_->gpus(); ++id) {
        if (gpu_ok_[id]) sources.push_back(&index_->OffersOfGpu(id));
      }
    } else if (!region_ok_.empty() && region_groups_.empty() && scan_ == Scan::kTopK) {
      // Region names only (a region group can hold any region): their offers.
      for (int id = 0; id < index_->regions(); ++id) {
        if (region_ok_[id]) sources.push_back(&index_->OffersOfRegion(id));
      }
    }
    std::vector<int> unit_of_cell(scan_ == Scan::kTopK ? cells.size() : 0, -1);
    int passing = 0;
    auto visit = [&](int offer) {
      if (!PassesNames(offer)) return;
      ++passing;
      if (scan_ == Scan::kFullScan) {
        Unit unit;
        unit.cell = facts[offer].cell;
        unit.offer = unit.first = offer;
        unit.count = 1;
        units_.push_back(std::move(unit));
        return;
      }
      int& u = unit_of_cell[facts[offer].cell];
      if (u < 0) {
        u = static_cast<int>(units_.size());
        units_.emplace_back();
        units_[u].cell = facts[offer].cell;
        units_[u].first = offer;
      }
      ++units_[u].count;
      units_[u].first = std::min(units_[u].first, offer);
    };
    if (sources.empty()) {
      for (int offer = 0; offer < offers; ++offer) visit(offer);
    } else {
      for (const std::vector<int32_t>* source : sources) {
        for (int32_t offer : *source) visit(offer);
      }
    }
    std::sort(units_.begin(), units_.end(),
              [](const Unit& a, const Unit& b) { return a.first < b.first; });
    filtered_by_name_ = offers - passing;
    if (filtered_by_name_ > 0) {
      for (int offer = 0; offer < offers && first_filtered_by_name_ < 0; ++offer) {
        if (!PassesNames(offer)) first_filtered_by_name_ = offer;
      }
    }
  }

  for (Unit& unit : units_) {
    const OfferCell& cell = cells[unit.cell];
    if (cell.unavailable) {
      ExcludeUnit(unit, v1::EXCLUSION_REASON_UNAVAILABLE);
      continue;
    }
    if (c.max_gpus() > 0 && cell.gpus_per_node > c.max_gpus()) {
      ExcludeUnit(unit, v1::EXCLUSION_REASON_TOO_MANY_GPUS);
      continue;
    }
    bool sold = false;
    for (PurchaseOption option : options_) sold |= cell.sold[OptionSlot(option)];
    if (!sold) {
      ExcludeUnit(unit, v1::EXCLUSION_REASON_FILTERED);
      continue;
    }
    // Offers of one shape share configurations, one per cluster size.
    int& known = shape_steps_[cell.shape];
    const int max_nodes = NodeCap(cell.max_nodes);
    int steps = 0;
    for (int32_t nodes = 1; nodes <= max_nodes; nodes *= 2, ++steps) {
      if (c.max_gpus() > 0 && nodes * cell.gpus_per_node > c.max_gpus()) break;
      if (steps == known) {
        shape_configs_[static_cast<size_t>(cell.shape) * kMaxSteps + steps] =
            static_cast<int>(configs_.size());
        ++known;
        configs_.emplace_back(cell.shape, nodes);
      }
    }
    unit.steps = steps;
  }
  return absl::OkStatus();
}

void RecommendationRun::PrepareSizing() {
  *estimate_request_.mutable_workload() = request_.workload();
  estimate_request_.set_vram_margin(vram_margin_);
  // The SLOs the exclusions below check (the per-user floor as resolved, the
  // default included): sizing then picks a layout that meets them when one does.
  if (serving_) {
    const v1::Constraints& c = request_.constraints();
    sizing::v1::ServingSlo* slo = estimate_request_.mutable_serving_slo();
    slo->set_max_time_to_first_token_seconds(c.max_time_to_first_token_seconds());
    slo->set_min_tokens_per_second_per_user(min_user_tps_);
    slo->set_min_tokens_per_second(c.min_tokens_per_second());
  }
  const std::vector<OfferShape>& shapes = index_->shapes();
  std::vector<EstimateCache::ConfigKey> keys;
  keys.reserve(configs_.size());
  for (const auto& [shape, nodes] : configs_) keys.push_back({shapes[shape].key, nodes});
  if (estimate_cache_ != nullptr && estimate_cache_->enabled()) {
    workload_key_ = EstimateCache::WorkloadKey(estimate_request_);  // before the configurations
    sized_ = estimate_cache_->Lookup(workload_key_, keys, absl::Now(), estimates_);
  } else {
    estimates_.assign(configs_.size(), nullptr);
  }
  for (int config = 0; config < static_cast<int>(configs_.size()); ++config) {
    if (estimates_[config] != nullptr) continue;
    missing_.push_back(config);
    shapes[configs_[config].first].FillConfiguration(configs_[config].second,
                                                     estimate_request_.add_configurations());
  }
  // Even when no offer passed the filters, sizing still validates the
  // workload and computes its totals: give it one configuration to look at.
  if (sized_ == nullptr && estimate_request_.configurations_size() == 0 &&
      catalog_->snapshot().gpus_size() > 0) {
    sizing::v1::GpuConfiguration* probe = estimate_request_.add_configurations();
    probe->set_gpu_model(catalog_->snapshot().gpus(0).name());
    probe->set_gpus_per_node(1);
    probe->set_nodes(1);
  }
  needs_sizing_ = sized_ == nullptr || !missing_.empty();
}

double RecommendationRun::PreRankKeyOf(int config, double list_usd_per_hour) const {
  const sizing::v1::ConfigurationEstimate& e = Est(config);
  switch (objective_) {
    case v1::OBJECTIVE_FASTEST:
      return e.estimated_hours();
    case v1::OBJECTIVE_BEST_VALUE:
      return -e.tokens_per_second() / std::max(list_usd_per_hour, 1e-9);
    default:
      return list_usd_per_hour * e.estimated_hours();
  }
}

std::vector<RecommendationRun::Ranked> RecommendationRun::SelectCandidates(int cap,
                                                                           int64_t& total) {
  const std::vector<OfferFacts>& facts = index_->offers();
  const std::vector<OfferCell>& cells = index_->cells();
  auto spare_of = [&](PurchaseOption option) {
    // A spot endpoint keeps serving through a preemption only with spare
    // capacity: one more node, priced in.
    return always_on_ && option == catalog::v1::PURCHASE_OPTION_SPOT ? 1 : 0;
  };
  std::vector<Ranked> selected;
  total = 0;
  if (scan_ == Scan::kFullScan) {
    for (const Unit& unit : units_) {
      for (int k = unit.fitting_begin; k < unit.fitting_end; ++k) {
        const auto [step, config] = fitting_[k];
        const int32_t nodes = int32_t{1} << step;
        for (int pos = 0; pos < static_cast<int>(options_.size()); ++pos) {
          const double price = ListPrice(facts[unit.offer], options_[pos]);
          if (price <= 0) continue;
          selected.push_back({PreRankKeyOf(config, price * (nodes + spare_of(options_[pos]))),
                              unit.offer, step, pos, static_cast<int>(&unit - units_.data()),
                              config, price});
        }
      }
    }
    total = static_cast<int64_t>(selected.size());
    if (static_cast<int>(selected.size()) > cap) {
      std::nth_element(selected.begin(), selected.begin() + cap, selected.end());
      selected.resize(cap);
    }
    std::sort(selected.begin(), selected.end());
    return selected;
  }

  // One stream per (unit, fitting cluster size, option), over the cell's
  // offers by list price: the key grows along each stream (hours and
  // throughput are the configuration's, the price only rises), so a heap
  // of stream heads yields candidates in key order. The fastest objective's
  // key is the configuration's hours alone: its streams go by offer index.
  // A stream is a cell's offers (or, in part mode, a part's), with their
  // list prices when the index has them in stream order, and its
  // configuration's numbers that the key reads (PreRankKeyOf's).
  struct Stream {
    absl::Span<const int32_t> offers;
    const double* prices;  // nullptr: read the offer's facts
    size_t pos;
    int unit, config, step, option_pos;
    double factor;  // nodes + spare
    double hours, tokens_per_second;
  };
  // A stream's current candidate, kept in the heap itself (no indirection
  // per comparison); ordered as Ranked.
  struct Head {
    double key;
    int offer, step, option_pos;
    int stream;
    double price;
    bool operator<(const Head& o) const {
      return key != o.key       ? key < o.key
             : offer != o.offer ? offer < o.offer
             : step != o.step   ? step < o.step
                                : option_pos < o.option_pos;
    }
  };
  const bool fastest = objective_ == v1::OBJECTIVE_FASTEST;
  std::vector<Stream> streams;
  for (int u = 0; u < static_cast<int>(units_.size()); ++u) {
    const Unit& unit = units_[u];
    if (unit.fitting_end == unit.fitting_begin) continue;
    const OfferCell& cell = cells[unit.cell];
    for (int k = unit.fitting_begin; k < unit.fitting_end; ++k) {
      const auto [step, config] = fitting_[k];
      const sizing::v1::ConfigurationEstimate& e = Est(config);
      for (int pos = 0; pos < static_cast<int>(options_.size()); ++pos) {
        const int slot = OptionSlot(options_[pos]);
        if (!cell.sold[slot]) continue;
        total += unit.count;
        const double factor = static_cast<double>((int32_t{1} << step) + spare_of(options_[pos]));
        if (unit.parts_end > unit.parts_begin) {
          for (int p = unit.parts_begin; p < unit.parts_end; ++p) {
            const CellPart& part = *parts_[p];
            streams.push_back({fastest ? index_->PartOffers(part, parts_by_region_)
                                       : index_->PartByPrice(part, slot, parts_by_region_),
                               nullptr, 0, u, config, step, pos, factor, e.estimated_hours(),
                               e.tokens_per_second()});
          }
        } else {
          streams.push_back({fastest ? absl::MakeConstSpan(cell.offers)
                                     : absl::MakeConstSpan(cell.by_price[slot]),
                             fastest ? nullptr : cell.price[slot].data(), 0, u, config, step, pos,
                             factor, e.estimated_hours(), e.tokens_per_second()});
        }
      }
    }
  }
  // PreRankKeyOf from the stream's copy of the configuration's numbers (the
  // same arithmetic, so the same doubles).
  auto key_of = [&](const Stream& stream, double list_usd_per_hour) {
    switch (objective_) {
      case v1::OBJECTIVE_FASTEST:
        return stream.hours;
      case v1::OBJECTIVE_BEST_VALUE:
        return -stream.tokens_per_second / std::max(list_usd_per_hour, 1e-9);
      default:
        return list_usd_per_hour * stream.hours;
    }
  };
  // The stream's next candidate that passes the name filters, from its
  // position on; false at its end. In part mode every offer of a part passes.
  const bool check_names = name_filtered_ && !part_mode_;
  auto settle = [&](int s, Head& head) {
    Stream& stream = streams[s];
    while (stream.pos < stream.offers.size()) {
      const int offer = stream.offers[stream.pos];
      if (!check_names || PassesNames(offer)) {
        // The fastest objective's key is the configuration's hours: no price
        // read (the candidate reads it if it is taken).
        const double price = fastest ? -1
                             : stream.prices != nullptr
                                 ? stream.prices[stream.pos]
                                 : ListPrice(facts[offer], options_[stream.option_pos]);
        head = {
            key_of(stream, price * stream.factor), offer, stream.step, stream.option_pos, s, price};
        return true;
      }
      ++stream.pos;
    }
    return false;
  };
  auto later = [](const Head& a, const Head& b) { return b < a; };  // min-heap
  std::vector<Head> heap;
  heap.reserve(streams.size());
  for (int i = 0; i < static_cast<int>(streams.size()); ++i) {
    Head head;
    if (settle(i, head)) heap.push_back(head);
  }
  std::make_heap(heap.begin(), heap.end(), later);
  selected.reserve(std::min<int64_t>(total, cap) + 8);
  while (!heap.empty()) {
    const Head& top = heap.front();
    // Each stream is in the full scan's order when equal keys mean equal
    // prices (then offer index breaks the tie): stop at the cap. Otherwise
    // take every candidate that ties with the last one taken, and the sort
    // below restores the full scan's order among them.
    if (static_cast<int>(selected.size()) >= cap &&
        (index_->distinct_price_keys() || !(top.key == selected.back().key))) {
      break;
    }
    const Stream& stream = streams[top.stream];
    selected.push_back(
        {top.key, top.offer, top.step, top.option_pos, stream.unit, stream.config, top.price});
    std::pop_heap(heap.begin(), heap.end(), later);
    Head& next = heap.back();  // the popped head's slot
    ++streams[next.stream].pos;
    if (settle(next.stream, next)) {
      std::push_heap(heap.begin(), heap.end(), later);
    } else {
      heap.pop_back();
    }
  }
  std::sort(selected.begin(), selected.end());
  if (static_cast<int>(selected.size()) > cap) selected.resize(cap);
  return selected;
}

pricing::v1::QuoteRequest RecommendationRun::QuotePlan::ToRequest() const {
  pricing::v1::QuoteRequest request;
  *request.mutable_job() = job;
  request.mutable_items()->Reserve(static_cast<int>(items.size()));
  for (const pricing::PriceBook::Item& planned : items) {
    pricing::v1::QuoteItem* item = request.add_items();
    item->set_offer_id(planned.offer_id.data(), planned.offer_id.size());
    item->set_nodes(planned.nodes);
    item->set_hours(planned.hours);
    item->set_purchase_option(planned.purchase_option);
  }
  return request;
}

absl::StatusOr<pricing::v1::QuoteRequest> RecommendationRun::ApplyEstimates(
    sizing::v1::EstimateResponse estimates) {
  absl::StatusOr<QuotePlan> plan = PlanQuote(std::move(estimates));
  if (!plan.ok()) return plan.status();
  return plan->ToRequest();
}

absl::StatusOr<RecommendationRun::QuotePlan> RecommendationRun::PlanQuote(
    sizing::v1::EstimateResponse estimates) {
  if (estimates.estimates_size() != estimate_request_.configurations_size()) {
    return absl::InternalError(
        absl::StrCat("sizing answered ", estimates.estimates_size(), " estimates for ",
                     estimate_request_.configurations_size(), " configurations"));
  }
  if (needs_sizing_) {
    std::vector<EstimateCache::ConfigKey> keys;
    std::vector<EstimateCache::Estimate> sized;
    keys.reserve(missing_.size());
    sized.reserve(missing_.size());
    for (size_t i = 0; i < missing_.size(); ++i) {
      const int config = missing_[i];
      estimates_[config] = std::make_shared<const sizing::v1::ConfigurationEstimate>(
          std::move(*estimates.mutable_estimates(static_cast<int>(i))));
      keys.push_back({index_->shapes()[configs_[config].first].key, configs_[config].second});
      sized.push_back(estimates_[config]);
    }
    EstimateCache::Totals totals;
    if (sized_ == nullptr) {
      auto workload = std::make_shared<sizing::v1::EstimateResponse>();
      workload->mutable_totals()->Swap(estimates.mutable_totals());
      workload->mutable_model()->Swap(estimates.mutable_model());
      sized_ = totals = std::move(workload);
    }
    if (estimate_cache_ != nullptr && !workload_key_.empty()) {
      estimate_cache_->Insert(workload_key_, std::move(totals), keys, sized, absl::Now());
    }
  }
  AddSizedAssumptions(request_.workload(), *sized_, assumptions_);
  const double deadline = request_.constraints().deadline_hours();
  const double min_tokens_per_second = request_.constraints().min_tokens_per_second();
  const double max_ttft = request_.constraints().max_time_to_first_token_seconds();
  const double min_per_user = min_user_tps_;

  // GPU models that fit when spread over several nodes: an offer of one of
  // them that has no fabric was excluded for the lack of it, not for size.
  std::vector<char> fit_multi_node(index_->gpus(), 0);  // by GPU id
  for (int config = 0; config < static_cast<int>(configs_.size()); ++config) {
    const sizing::v1::ConfigurationEstimate& e = Est(config);
    if (e.configuration().nodes() > 1 && e.fits())
      fit_multi_node[index_->shapes()[configs_[config].first].gpu] = 1;
  }
  // For cost objectives without a deadline or a throughput floor, an offer's
  // larger clusters only add communication: keep the smallest cluster that
  // fits and the next sizes up (which can still win by avoiding
  // recomputation or offloading). Speed objectives keep every size.
  const bool cost_only =
      (objective_ == v1::OBJECTIVE_CHEAPEST || objective_ == v1::OBJECTIVE_BEST_VALUE) &&
      deadline <= 0 && min_tokens_per_second <= 0;
  const std::vector<OfferCell>& cells = index_->cells();
  fitting_.reserve(units_.size() * kFittingClusterSizesKept);
  for (Unit& unit : units_) {
    const OfferCell& f = cells[unit.cell];
    int fitting_steps = 0;
    unit.fitting_begin = unit.fitting_end = static_cast<int>(fitting_.size());
    for (int step = 0; step < unit.steps; ++step) {
      const int config = ShapeConfig(f.shape, step);
      const sizing::v1::ConfigurationEstimate& e = Est(config);
      if (!e.fits()) {
        const bool for_lack_of_fabric = f.max_nodes == 1 && fit_multi_node[f.gpu];
        if (!for_lack_of_fabric)
          Track(misses_, "fit", {e.memory_margin(), config, -1, unit.first}, false);
        ExcludeUnit(
            unit,
            for_lack_of_fabric ? v1::EXCLUSION_REASON_NO_FABRIC : v1::EXCLUSION_REASON_DOES_NOT_FIT,
            config);
        continue;
      }
      if (min_tokens_per_second > 0 && e.tokens_per_second() < min_tokens_per_second) {
        Track(misses_, "tokens_per_second", {e.tokens_per_second(), config, -1, unit.first}, false);
        ExcludeUnit(unit, v1::EXCLUSION_REASON_TOO_SLOW, config);
        continue;
      }
      if (serving_ && (max_ttft > 0 || min_per_user > 0)) {
        // The numbers Serving() passes on unchanged, read without building it.
        const sizing::v1::ServingEstimate& served = e.serving();
        if (max_ttft > 0 && !(served.time_to_first_token_seconds() <= max_ttft)) {
          Track(misses_, "ttft", {served.time_to_first_token_seconds(), config, -1, unit.first},
                true);
          ExcludeUnit(unit, v1::EXCLUSION_REASON_TOO_SLOW, config);
          continue;
        }
        if (min_per_user > 0 && !(served.tokens_per_second_per_user() >= min_per_user)) {
          Track(misses_, "per_user", {served.tokens_per_second_per_user(), config, -1, unit.first},
                false);
          ExcludeUnit(unit, v1::EXCLUSION_REASON_TOO_SLOW, config);
          continue;
        }
      }
      if (deadline > 0 && e.estimated_hours() > deadline) {
        Track(misses_, "deadline", {e.estimated_hours(), config, -1, unit.first}, true);
        ExcludeUnit(unit, v1::EXCLUSION_REASON_MISSES_DEADLINE, config);
        continue;
      }
      // An estimate pricing cannot quote (or no one would run) is this
      // candidate's problem, never the request's.
      if (!std::isfinite(e.estimated_hours()) || e.estimated_hours() < 0 ||
          e.estimated_hours() > kMaxQuotableHours || !std::isfinite(e.tokens_per_second())) {
        ExcludeUnit(unit, v1::EXCLUSION_REASON_RUNS_TOO_LONG, config);
        continue;
      }
      if (cost_only && ++fitting_steps > kFittingClusterSizesKept) break;
      fitting_.emplace_back(step, config);
      unit.fitting_end = static_cast<int>(fitting_.size());
      for (PurchaseOption option : options_)
        unit.candidates_per_offer += f.sold[OptionSlot(option)] ? 1 : 0;
    }
  }
  // Pre-rank by list price so one Quote stays small even for a huge catalog.
  const int cap = std::max(kMinQuotedCandidates, kQuotedPerResult * max_results_);
  int64_t total = 0;
  const std::vector<Ranked> fitting = SelectCandidates(cap, total);
  candidates_.reserve(fitting.size() + 4);
  quoted_offers_.reserve(fitting.size());
  for (const Ranked& r : fitting) {
    const PurchaseOption option = options_[r.option_pos];
    const int unit = r.unit;
    const int32_t nodes = int32_t{1} << r.step;
    const int32_t spare = always_on_ && option == catalog::v1::PURCHASE_OPTION_SPOT ? 1 : 0;
    const double list_price = r.list_usd_per_hour >= 0
                                  ? r.list_usd_per_hour
                                  : ListPrice(index_->offers()[r.offer], option);
    Candidate candidate{r.offer, unit, nodes, option, r.config, -1, list_price * (nodes + spare)};
    candidate.spare_nodes = spare;
    candidate.pre_rank = r.key;
    candidates_.push_back(candidate);
    Quoted& q = quoted_offers_[r.offer];
    q.unit = unit;
    ++q.quoted;
  }
  // An offer's pre-pricing exclusion is its unit's.
  for (auto& [offer, q] : quoted_offers_) {
    q.reason = units_[q.unit].reason;
    q.config = units_[q.unit].config;
  }
  std::vector<int> order(candidates_.size());
  for (int i = 0; i < static_cast<int>(order.size()); ++i) order[i] = i;

  QuotePlan plan;
  const sizing::v1::Workload& w = request_.workload();
  const sizing::v1::WorkloadTotals& totals = sized_->totals();
  pricing::v1::JobProfile* job = &plan.job;
  job->set_dataset_gb(w.dataset_gb());
  job->set_checkpoint_gb(training_ ? totals.checkpoint_bytes() / 1e9 : 0);
  job->set_checkpoint_interval_minutes(w.checkpoint_interval_minutes());
  // An endpoint is always on: priced for its serving hours whatever the
  // option. On spot (asked for explicitly) it runs with a spare node, so a
  // preemption costs a replacement's start-up, not the run: pricing's
  // restartable model, without its non-restartable and endpoint warnings
  // (the gateway states the spare instead).
  job->set_restartable(always_on_ ? true : restartable_);
  job->set_always_on(false);
  // What leaves the cloud, priced with the provider's egress rule: the
  // caller's figure, else trained weights (16-bit; the adapter for LoRA) or
  // the generated text of a batch job (~4 bytes a token), stated.
  if (w.has_egress_gb()) {
    job->set_egress_gb(w.egress_gb());
  } else {
    double derived = 0;
    std::string what =
        "an endpoint's responses leave through its own serving traffic: not priced here";
    if (training_) {
      derived = totals.trainable_params() * 2 / 1e9;
      what = "the trained weights at 16 bits (the adapter for LoRA/QLoRA), downloaded once";
    } else if (w.task() == sizing::v1::TASK_BATCH_INFERENCE) {
      derived = w.requests() * std::max(w.output_tokens(), 1) * 4 / 1e9;
      what = "the generated text, about 4 bytes per output token";
    }
    job->set_egress_gb(derived);
    assumptions_.push_back(MakeAssumption(
        "workload.egress_gb", Gigabytes(derived),
        absl::StrCat(what,
                     "; priced at each provider's egress rate after its free allowance "
                     "(set workload.egress_gb, --egress_gb, to say what moves out)")));
  }
  egress_gb_ = job->egress_gb();
  quoted_ = std::move(order);
  // What-if: reserved prices for the best few (offer, nodes) by list price,
  // when the caller did not ask for reserved; quoted, never ranked.
  if (std::find(options_.begin(), options_.end(), catalog::v1::PURCHASE_OPTION_RESERVED) ==
      options_.end()) {
    constexpr int kReservedWhatIfs = 3;
    std::vector<std::pair<int, int32_t>> seen;
    const size_t n = quoted_.size();
    for (size_t i = 0; i < n && static_cast<int>(seen.size()) < kReservedWhatIfs; ++i) {
      const Candidate base = candidates_[quoted_[i]];
      if (base.spare_nodes > 0) continue;
      if (std::find(seen.begin(), seen.end(), std::make_pair(base.offer_index, base.nodes)) !=
          seen.end())
        continue;
      seen.emplace_back(base.offer_index, base.nodes);
      Candidate reserved = base;
      reserved.option = catalog::v1::PURCHASE_OPTION_RESERVED;
      reserved.what_if_only = true;
      quoted_.push_back(static_cast<int>(candidates_.size()));
      candidates_.push_back(reserved);
    }
  }
  plan.items.reserve(quoted_.size());
  for (int q = 0; q < static_cast<int>(quoted_.size()); ++q) {
    Candidate& candidate = candidates_[quoted_[q]];
    candidate.quote = q;
    plan.items.push_back(
        {.offer_id = index_->id(candidate.offer_index),
         .nodes = candidate.nodes + candidate.spare_nodes,
         .hours = Est(candidate.config).estimated_hours() +
                  (overheads_ != nullptr
                       ? overheads_->TotalHours(OverheadRuleOf(candidate), RunOf(candidate))
                       : 0),
         .purchase_option = candidate.option});
  }
  return plan;
}

namespace {

// Whether every number ranking reads from a quote is finite (a NaN makes
// std::sort's comparison inconsistent and the order undefined).
bool RankableQuote(const pricing::v1::Quote& q, const sizing::v1::ConfigurationEstimate& estimate) {
  const pricing::v1::CostBreakdown& c = q.cost();
  for (double v :
       {c.total_usd(), c.usd_per_hour(), c.expected_hours(), c.compute_usd(), c.storage_usd(),
        c.egress_usd(), c.preemption_usd(), estimate.tokens_per_second()}) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<v1::RecommendResponse> RecommendationRun::Finish(
    const pricing::v1::QuoteResponse& quotes) {
  if (quotes.quotes_size() != static_cast<int>(quoted_.size())) {
    return absl::InternalError(absl::StrCat("pricing answered ", quotes.quotes_size(),
                                            " quotes for ", quoted_.size(), " items"));
  }
  const v1::Constraints& c = request_.constraints();
  std::vector<int> survivors;
  for (int candidate_index : quoted_) {
    const Candidate& candidate = candidates_[candidate_index];
    if (candidate.what_if_only) continue;
    const pricing::v1::Quote& q = quotes.quotes(candidate.quote);
    const bool over_hourly =
        c.max_usd_per_hour() > 0 && q.cost().usd_per_hour() > c.max_usd_per_hour();
    const bool over_total = c.max_total_usd() > 0 && q.cost().total_usd() > c.max_total_usd();
    if (!q.priced() || !RankableQuote(q, Est(candidate.config))) {
      // A non-finite figure would break the sort's ordering: never ranked.
      ExcludeQuoted(candidate, candidate_index, v1::EXCLUSION_REASON_NOT_PRICED);
    } else if (over_hourly || over_total) {
      if (over_hourly)
        Track(misses_, "usd_per_hour",
              {q.cost().usd_per_hour(), -1, candidate_index, candidate.offer_index}, true);
      if (over_total)
        Track(misses_, "total_usd",
              {q.cost().total_usd(), -1, candidate_index, candidate.offer_index}, true);
      ExcludeQuoted(candidate, candidate_index, v1::EXCLUSION_REASON_OVER_BUDGET);
    } else if (c.deadline_hours() > 0 && q.cost().expected_hours() > c.deadline_hours()) {
      Track(misses_, "deadline",
            {q.cost().expected_hours(), -1, candidate_index, candidate.offer_index}, true);
      ExcludeQuoted(candidate, candidate_index, v1::EXCLUSION_REASON_MISSES_DEADLINE);
    } else {
      survivors.push_back(candidate_index);
    }
  }

  // Objective first, then the other measure, then identity: a total order,
  // so equal requests always get equal answers.
  using Key = std::tuple<double, double, absl::string_view, int32_t, int>;
  auto key = [&](int index) -> Key {
    const Candidate& candidate = candidates_[index];
    const pricing::v1::CostBreakdown& cost = quotes.quotes(candidate.quote).cost();
    const double hours = cost.expected_hours();
    const double value =
        -Est(candidate.config).tokens_per_second() / std::max(cost.usd_per_hour(), 1e-9);
    const double primary = objective_ == v1::OBJECTIVE_FASTEST      ? hours
                           : objective_ == v1::OBJECTIVE_BEST_VALUE ? value
                                                                    : cost.total_usd();
    const double secondary = objective_ == v1::OBJECTIVE_FASTEST ? cost.total_usd() : hours;
    return std::make_tuple(primary, secondary, index_->id(candidate.offer_index), candidate.nodes,
                           static_cast<int>(candidate.option));
  };
  std::vector<Key> keys(candidates_.size());  // computed once per survivor, not per comparison
  for (int index : survivors) keys[index] = key(index);
  auto better = [&](int a, int b) { return keys[a] < keys[b]; };
  std::sort(survivors.begin(), survivors.end(), better);

  // A fallback list for autoscalers: first the best candidate of each
  // (provider, region), then the rest in rank order; shown in rank order.
  std::vector<int> chosen;
  absl::flat_hash_set<std::pair<int32_t, int32_t>> places;  // (provider, region) ids
  std::vector<bool> taken(survivors.size(), false);
  for (size_t i = 0; i < survivors.size() && static_cast<int>(chosen.size()) < max_results_; ++i) {
    const OfferFacts& offer = index_->offers()[candidates_[survivors[i]].offer_index];
    if (places.insert({offer.provider, offer.region}).second) {
      chosen.push_back(survivors[i]);
      taken[i] = true;
    }
  }
  for (size_t i = 0; i < survivors.size() && static_cast<int>(chosen.size()) < max_results_; ++i) {
    if (!taken[i]) chosen.push_back(survivors[i]);
  }
  std::sort(chosen.begin(), chosen.end(), better);

  v1::RecommendResponse response;
  for (int index : chosen) {
    v1::Recommendation* r = response.add_recommendations();
    Explain(candidates_[index], quotes.quotes(candidates_[index].quote), *r);
    r->set_rank(response.recommendations_size());
  }

  // Offers with no surviving candidate, by the furthest stage they reached;
  // an offer with a candidate outranked before pricing is not excluded. The
  // example is the excluded offer that comes first in the snapshot.
  for (int index : survivors) quoted_offers_[candidates_[index].offer_index].survived = true;
  struct Tally {
    int64_t count = 0;
    int example = -1, config = -1, candidate = -1;
  };
  std::map<v1::ExclusionReason, Tally> tally;
  auto add = [&](v1::ExclusionReason reason, int64_t count, int example, int config,
                 int candidate) {
    if (count <= 0 || reason == v1::EXCLUSION_REASON_UNSPECIFIED) return;
    Tally& t = tally[reason];
    t.count += count;
    if (t.example < 0 || example < t.example) t = {t.count, example, config, candidate};
  };
  add(v1::EXCLUSION_REASON_FILTERED, filtered_by_name_, first_filtered_by_name_, -1, -1);
  for (const Unit& unit : units_) {
    if (unit.candidates_per_offer == 0) add(unit.reason, unit.count, unit.first, unit.config, -1);
  }
  for (const auto& [offer, q] : quoted_offers_) {
    if (q.survived || q.quoted < units_[q.unit].candidates_per_offer) continue;
    add(q.reason, 1, offer, q.config, q.candidate);
  }
  const auto& offers = catalog_->snapshot().offers();
  for (const auto& [reason, t] : tally) {
    v1::Exclusion* exclusion = response.add_excluded();
    exclusion->set_reason(reason);
    exclusion->set_count(static_cast<int32_t>(t.count));
    exclusion->set_example(offers.Get(t.example).id());
    exclusion->set_detail(ExclusionDetail(t.example, reason, t.config, t.candidate, quotes));
  }
  std::stable_sort(
      response.mutable_excluded()->begin(), response.mutable_excluded()->end(),
      [](const v1::Exclusion& a, const v1::Exclusion& b) { return a.count() > b.count(); });

  response.set_candidates_considered(candidates_considered_);
  response.set_catalog_version(catalog_->snapshot().version());
  response.set_price_book_version(quotes.price_book_version());
  response.set_prices_as_of(quotes.prices_as_of());
  response.set_price_book_age_seconds(quotes.price_book_age_seconds());
  *response.mutable_totals() = sized_->totals();
  response.set_objective(objective_);
  for (const v1::Assumption& a : assumptions_) *response.add_assumptions() = a;
  if (!chosen.empty()) {
    AddWhatIfs(chosen.front(), survivors, quotes, response);
  } else {
    AddNearestMisses(quotes, response);
  }
  return response;
}

void RecommendationRun::Track(std::map<std::string, Miss>& misses, const std::string& key,
                              Miss miss, bool lower) {
  if (!std::isfinite(miss.value)) return;
  auto [it, inserted] = misses.try_emplace(key, miss);
  if (!inserted && (lower ? miss.value < it->second.value : miss.value > it->second.value))
    it->second = miss;
}

v1::Overheads RecommendationRun::OverheadsOf(const Candidate& candidate) const {
  if (overheads_ == nullptr) return v1::Overheads();
  return overheads_->For(OverheadRuleOf(candidate), RunOf(candidate));
}

const v1::OverheadRule* RecommendationRun::OverheadRuleOf(const Candidate& candidate) const {
  return overhead_rules_[index_->offers()[candidate.offer_index].provider];
}

RunData RecommendationRun::RunOf(const Candidate& candidate) const {
  const sizing::v1::Workload& w = request_.workload();
  const sizing::v1::WorkloadTotals& totals = sized_->totals();
  RunData run;
  run.run_hours = Est(candidate.config).estimated_hours();
  run.weights_gb = totals.weights_bytes() / 1e9;
  run.dataset_gb = w.dataset_gb();
  run.checkpoint_gb = training_ ? totals.checkpoint_bytes() / 1e9 : 0;
  run.checkpoint_interval_minutes = w.checkpoint_interval_minutes();
  run.checkpoints_priced_elsewhere = candidate.option == catalog::v1::PURCHASE_OPTION_SPOT;
  run.network_gbps = index_->offers()[candidate.offer_index].network_gbps;
  return run;
}

v1::ServingEstimate RecommendationRun::Serving(const sizing::v1::ConfigurationEstimate& e,
                                               int32_t spare_nodes, double usd_per_hour) const {
  // Sizing's serving numbers (ServingEstimate: per replica at its
  // concurrency, and for the cluster); the gateway adds the spare replicas
  // of a spot endpoint and the price per token.
  v1::ServingEstimate s;
  if (!serving_) return s;
  const sizing::v1::ServingEstimate& in = e.serving();
  const int nodes = std::max(1, e.configuration().nodes());
  const int replicas = std::max(1, in.replicas());
  const double aggregate = in.output_tokens_per_second();
  s.set_replicas(replicas);
  s.set_spare_replicas(spare_nodes * std::max(1, replicas / nodes));
  s.set_aggregate_tokens_per_second(aggregate);
  s.set_time_to_first_token_seconds(in.time_to_first_token_seconds());
  s.set_inter_token_latency_seconds(in.inter_token_latency_seconds());
  s.set_tokens_per_second_per_user(in.tokens_per_second_per_user());
  s.set_decode_tokens_per_second_per_user(in.decode_tokens_per_second_per_user());
  s.set_throughput_bound(in.throughput_bound());
  s.set_prefill_fraction(in.prefill_fraction());
  s.set_max_concurrency_per_replica(in.max_concurrency_per_replica());
  s.set_kv_cache_capacity_tokens_per_replica(in.kv_cache_capacity_tokens_per_replica());
  s.set_concurrent_sequences(in.concurrency_per_replica() * replicas);
  s.set_requests_per_second(in.requests_per_second());
  if (aggregate > 0 && usd_per_hour > 0) {
    s.set_usd_per_million_output_tokens(usd_per_hour / (aggregate * 3600.0) * 1e6);
  }
  return s;
}

void RecommendationRun::AddWhatIfs(int top_index, const std::vector<int>& survivors,
                                   const pricing::v1::QuoteResponse& quotes,
                                   v1::RecommendResponse& response) const {
  const Candidate& top = candidates_[top_index];
  const pricing::v1::CostBreakdown& top_cost = quotes.quotes(top.quote).cost();
  std::vector<char> qualifies(candidates_.size(), 0);  // by candidate index
  for (int index : survivors) qualifies[index] = 1;
  auto priced = [&](int index) {
    const Candidate& c = candidates_[index];
    return c.quote >= 0 && quotes.quotes(c.quote).priced() &&
           RankableQuote(quotes.quotes(c.quote), Est(c.config));  // no NaN into the sort
  };
  const std::vector<OfferFacts>& facts = index_->offers();
  auto total_gpus = [&](const Candidate& c) {
    return facts[c.offer_index].gpus_per_node * c.nodes;
  };
  auto same_gpu = [&](const Candidate& c) {
    return facts[c.offer_index].gpu == facts[top.offer_index].gpu;
  };
  // Candidates in rank order: survivors first (already sorted), then the rest
  // of the quoted by total cost.
  std::vector<int> order(survivors.begin(), survivors.end());
  std::vector<int> rest;
  std::vector<double> total_usd(candidates_.size(),
                                0);  // read once per candidate, not per comparison
  for (int index : quoted_) {
    if (!qualifies[index] && priced(index)) {
      rest.push_back(index);
      total_usd[index] = quotes.quotes(candidates_[index].quote).cost().total_usd();
    }
  }
  std::sort(rest.begin(), rest.end(), [&](int a, int b) { return total_usd[a] < total_usd[b]; });
  order.insert(order.end(), rest.begin(), rest.end());

  auto add = [&](const std::string& axis, int index) {
    const Candidate& c = candidates_[index];
    const pricing::v1::Quote& q = quotes.quotes(c.quote);
    v1::WhatIf* w = response.add_what_if();
    w->set_axis(axis);
    const Offer& offer = OfferOf(c);
    *w->mutable_offer() = offer;
    w->mutable_offer()->set_nodes(c.nodes);
    w->set_purchase_option(c.option);
    w->set_total_usd(q.cost().total_usd());
    w->set_hours(q.cost().expected_hours());
    w->set_delta_usd(q.cost().total_usd() - top_cost.total_usd());
    w->set_delta_hours(q.cost().expected_hours() - top_cost.expected_hours());
    w->set_preemption_usd(q.cost().preemption_usd());
    // A what-if-only quote (reserved) was never filtered: check it here.
    const v1::Constraints& k = request_.constraints();
    w->set_qualifies(
        qualifies[index] ||
        (c.what_if_only &&
         !(k.max_usd_per_hour() > 0 && q.cost().usd_per_hour() > k.max_usd_per_hour()) &&
         !(k.max_total_usd() > 0 && q.cost().total_usd() > k.max_total_usd()) &&
         !(k.deadline_hours() > 0 && q.cost().expected_hours() > k.deadline_hours())));
    const double pct = top_cost.total_usd() > 0 ? 100.0 * w->delta_usd() / top_cost.total_usd() : 0;
    std::string text =
        absl::StrCat(axis, ": ", offer.provider(), " ", offer.instance_type(), " x", c.nodes, " ",
                     OptionName(c.option), ", $", Fixed(w->total_usd(), 2), " in total (",
                     w->delta_usd() < 0 ? "-" : "+", "$", Fixed(std::abs(w->delta_usd()), 2), ", ",
                     SignedFixed(pct, 0), "%), ", Fixed(w->hours(), 1), " h (",
                     SignedFixed(w->delta_hours(), 1), " h)");
    if (c.option == catalog::v1::PURCHASE_OPTION_SPOT) {
      absl::StrAppend(&text, "; expected preemption loss $", Fixed(w->preemption_usd(), 2),
                      " included");
    }
    if (c.option == catalog::v1::PURCHASE_OPTION_RESERVED) {
      text +=
          "; reserved prices need a commitment whose term the price data does not state (typically "
          "1 or 3 "
          "years, billed whether used or not): an 'up to' discount is not certain, confirm the "
          "term";
    }
    if (!w->qualifies()) text += "; does not meet every constraint";
    w->set_summary(std::move(text));
  };
  auto first = [&](auto pred) {
    for (int index : order) {
      if (index != top_index && pred(candidates_[index])) return index;
    }
    return -1;
  };
  // Same offer and cluster, other purchase options.
  for (PurchaseOption option :
       {catalog::v1::PURCHASE_OPTION_SPOT, catalog::v1::PURCHASE_OPTION_ON_DEMAND,
        catalog::v1::PURCHASE_OPTION_RESERVED}) {
    if (option == top.option) continue;
    const int index = first([&](const Candidate& c) {
      return c.offer_index == top.offer_index && c.nodes == top.nodes && c.option == option;
    });
    if (index >= 0) add(OptionName(option), index);
  }
  // The best of another GPU model, at the same purchase option.
  const int next_gpu = first([&](const Candidate& c) {
    return !same_gpu(c) && c.option == top.option && !c.what_if_only;
  });
  if (next_gpu >= 0) add("next GPU class", next_gpu);
  // Same GPU model, fewer or more GPUs in total.
  const int fewer = first([&](const Candidate& c) {
    return same_gpu(c) && c.option == top.option && !c.what_if_only &&
           total_gpus(c) < total_gpus(top);
  });
  if (fewer >= 0) add("fewer GPUs", fewer);
  const int more = first([&](const Candidate& c) {
    return same_gpu(c) && c.option == top.option && !c.what_if_only &&
           total_gpus(c) > total_gpus(top);
  });
  if (more >= 0) add("more GPUs", more);
}

void RecommendationRun::AddNearestMisses(const pricing::v1::QuoteResponse& quotes,
                                         v1::RecommendResponse& response) const {
  const v1::Constraints& c = request_.constraints();
  for (const auto& [key, miss] : misses_) {
    // Memory is not a constraint the caller set: the closest fit is news
    // only when nothing fit at all.
    if (key == "fit" && misses_.size() > 1) continue;
    v1::NearestMiss* m = response.add_nearest_misses();
    const Candidate* candidate = miss.candidate >= 0 ? &candidates_[miss.candidate] : nullptr;
    const sizing::v1::ConfigurationEstimate* e = miss.config >= 0 ? &Est(miss.config) : nullptr;
    const Offer& offer = catalog_->snapshot().offers(miss.offer_index);
    m->set_offer_id(offer.id());
    m->set_nodes(candidate != nullptr ? candidate->nodes
                 : e != nullptr       ? e->configuration().nodes()
                                      : 1);
    if (candidate != nullptr) m->set_purchase_option(candidate->option);
    m->set_value(miss.value);
    const std::string who =
        absl::StrCat(offer.id(), " at ", m->nodes(), m->nodes() == 1 ? " node" : " nodes");
    if (key == "total_usd") {
      m->set_reason(v1::EXCLUSION_REASON_OVER_BUDGET);
      m->set_limit(c.max_total_usd());
      m->set_summary(absl::StrFormat(
          "the cheapest that fits costs $%.2f, $%.2f over your max_total_usd of $%.2f (%s)",
          miss.value, miss.value - c.max_total_usd(), c.max_total_usd(), who));
    } else if (key == "usd_per_hour") {
      m->set_reason(v1::EXCLUSION_REASON_OVER_BUDGET);
      m->set_limit(c.max_usd_per_hour());
      m->set_summary(absl::StrFormat(
          "the lowest hourly price that fits is $%.2f/h, $%.2f/h over your max_usd_per_hour "
          "of $%.2f (%s)",
          miss.value, miss.value - c.max_usd_per_hour(), c.max_usd_per_hour(), who));
    } else if (key == "deadline") {
      m->set_reason(v1::EXCLUSION_REASON_MISSES_DEADLINE);
      m->set_limit(c.deadline_hours());
      m->set_summary(absl::StrFormat(
          "the fastest that fits takes %.1f h, %.1f h over your deadline of %.1f h (%s)",
          miss.value, miss.value - c.deadline_hours(), c.deadline_hours(), who));
    } else if (key == "tokens_per_second") {
      m->set_reason(v1::EXCLUSION_REASON_TOO_SLOW);
      m->set_limit(c.min_tokens_per_second());
      m->set_summary(absl::StrFormat(
          "the fastest that fits reaches %.0f tokens/s, %.0f short of your "
          "min_tokens_per_second of %.0f (%s)",
          miss.value, c.min_tokens_per_second() - miss.value, c.min_tokens_per_second(), who));
    } else if (key == "per_user") {
      m->set_reason(v1::EXCLUSION_REASON_TOO_SLOW);
      m->set_limit(min_user_tps_);
      m->set_summary(absl::StrFormat(
          "the fastest per user is %.1f tokens/s, %.1f short of %s of %.1f (%s)", miss.value,
          min_user_tps_ - miss.value, MinUserTpsName(), min_user_tps_, who));
    } else if (key == "ttft") {
      m->set_reason(v1::EXCLUSION_REASON_TOO_SLOW);
      m->set_limit(c.max_time_to_first_token_seconds());
      m->set_summary(
          absl::StrFormat("the quickest first token takes %.2f s, %.2f s over your "
                          "max_time_to_first_token_seconds of %.2f (%s)",
                          miss.value, miss.value - c.max_time_to_first_token_seconds(),
                          c.max_time_to_first_token_seconds(), who));
    } else if (key == "fit" && e != nullptr) {
      m->set_reason(v1::EXCLUSION_REASON_DOES_NOT_FIT);
      m->set_limit(vram_margin_);
      m->set_summary(absl::StrFormat("the closest fit needs %s per GPU on %s GPUs (%s)",
                                     Gb(e->memory().total_bytes()), Gb(e->gpu_memory_bytes()),
                                     who));
    }
  }
  (void)quotes;
}

std::string RecommendationRun::ExclusionDetail(int offer_index, v1::ExclusionReason reason,
                                               int config, int candidate,
                                               const pricing::v1::QuoteResponse& quotes) const {
  const OfferFacts& f = index_->offers()[offer_index];
  const v1::Constraints& c = request_.constraints();
  const sizing::v1::ConfigurationEstimate* e =
      config >= 0 && config < static_cast<int>(estimates_.size()) ? &Est(config) : nullptr;
  const pricing::v1::Quote* q = nullptr;
  if (candidate >= 0 && candidates_[candidate].quote >= 0 &&
      candidates_[candidate].quote < quotes.quotes_size()) {
    q = &quotes.quotes(candidates_[candidate].quote);
  }
  const int nodes = e != nullptr     ? e->configuration().nodes()
                    : candidate >= 0 ? candidates_[candidate].nodes
                                     : 1;
  const std::string at = absl::StrCat(nodes, nodes == 1 ? " node" : " nodes");
  const std::string cap = absl::StrCat(" (cluster cap: ", NodeCapText(f), ")");
  switch (reason) {
    case v1::EXCLUSION_REASON_FILTERED:
      return "not among the providers, regions, GPUs or purchase options asked for";
    case v1::EXCLUSION_REASON_UNAVAILABLE:
      return "the catalog marks it unavailable";
    case v1::EXCLUSION_REASON_TOO_MANY_GPUS:
      return absl::StrCat(f.gpus_per_node,
                          " GPUs per node > constraints.max_gpus = ", c.max_gpus());
    case v1::EXCLUSION_REASON_NO_FABRIC:
      return "fits only across several nodes, and this offer has no inter-node fabric";
    case v1::EXCLUSION_REASON_DOES_NOT_FIT:
      if (e == nullptr) break;
      return absl::StrCat(
          "needs ", Gb(e->memory().total_bytes()), " per GPU, has ", Gb(e->gpu_memory_bytes()),
          absl::StrFormat(" with a %.0f%% margin", 100 * vram_margin_), ", even at ", at, cap,
          e->not_fit_reason().empty() ? "" : absl::StrCat(": ", e->not_fit_reason()));
    case v1::EXCLUSION_REASON_TOO_SLOW: {
      if (e == nullptr) break;
      if (c.min_tokens_per_second() > 0 && e->tokens_per_second() < c.min_tokens_per_second()) {
        return absl::StrFormat("%.0f tokens/s at %s < constraints.min_tokens_per_second = %.0f",
                               e->tokens_per_second(), at, c.min_tokens_per_second());
      }
      const v1::ServingEstimate s = Serving(*e, 0, 0);
      if (c.max_time_to_first_token_seconds() > 0 &&
          !(s.time_to_first_token_seconds() <= c.max_time_to_first_token_seconds())) {
        return absl::StrFormat(
            "first token in %.2f s at %s > constraints.max_time_to_first_token_seconds = %.2f",
            s.time_to_first_token_seconds(), at, c.max_time_to_first_token_seconds());
      }
      return absl::StrFormat("%.1f tokens/s per user at %s < %s = %.1f",
                             s.tokens_per_second_per_user(), at, MinUserTpsName(), min_user_tps_);
    }
    case v1::EXCLUSION_REASON_MISSES_DEADLINE:
      if (q != nullptr) {
        return absl::StrFormat("%.1f h with expected preemption losses at %s > deadline %.1f h",
                               q->cost().expected_hours(), at, c.deadline_hours());
      }
      if (e == nullptr) break;
      return absl::StrFormat("%.1f h at %s > deadline %.1f h", e->estimated_hours(), at,
                             c.deadline_hours()) +
             cap;
    case v1::EXCLUSION_REASON_RUNS_TOO_LONG:
      if (e == nullptr) break;
      return absl::StrFormat("estimated %.3g h at %s, beyond the %.0e h pricing quotes",
                             e->estimated_hours(), at, kMaxQuotableHours) +
             cap;
    case v1::EXCLUSION_REASON_NOT_PRICED:
      if (q == nullptr) break;
      return absl::StrCat("pricing: ", q->unpriced_reason());
    case v1::EXCLUSION_REASON_OVER_BUDGET:
      if (q == nullptr) break;
      if (c.max_usd_per_hour() > 0 && q->cost().usd_per_hour() > c.max_usd_per_hour()) {
        return absl::StrFormat("$%.2f/h > constraints.max_usd_per_hour $%.2f",
                               q->cost().usd_per_hour(), c.max_usd_per_hour());
      }
      return absl::StrFormat("$%.2f in total > constraints.max_total_usd $%.2f",
                             q->cost().total_usd(), c.max_total_usd());
    default:
      break;
  }
  return "";
}

namespace {

// What bounds the serving total, with the numbers, and why the per-user
// speed times the users is the total rather than users x decode speed.
std::string ServingBoundText(const v1::ServingEstimate& s, const sizing::v1::ServingEstimate& in,
                             const sizing::v1::Workload& w) {
  const int per_replica = std::max(1, in.concurrency_per_replica());
  const std::string users =
      absl::StrCat("each of the ", per_replica, " concurrent sequences per replica gets ",
                   Fixed(s.tokens_per_second_per_user(), 1), " tokens/s");
  const std::string decode =
      absl::StrCat(Fixed(s.decode_tokens_per_second_per_user(), 1), " tokens/s, ",
                   Fixed(1000 * s.inter_token_latency_seconds(), 0),
                   " ms per token, between other sequences' prefills");
  switch (s.throughput_bound()) {
    case sizing::v1::SERVING_BOUND_PREFILL:
      return absl::StrCat(
          "throughput prefill-bound: prefilling the ",
          w.prompt_tokens() > 0 ? w.prompt_tokens() : w.context_length() - w.output_tokens(),
          "-token prompts takes ", Fixed(100 * s.prefill_fraction(), 0),
          "% of each replica's time at full load, so the total is ",
          Fixed(s.aggregate_tokens_per_second(), 0), " tokens/s and ", users, " (", decode,
          "); more compute per replica, shorter prompts or prefix caching raise it");
    case sizing::v1::SERVING_BOUND_KV_CAPACITY:
      return absl::StrCat("throughput KV-capacity-bound: the KV cache holds ",
                          in.max_concurrency_per_replica(), " sequences of ", w.context_length(),
                          " tokens per replica and all of them decode (",
                          Fixed(100 * (1 - s.prefill_fraction()), 0), "% of the time; prefill ",
                          Fixed(100 * s.prefill_fraction(), 0), "%), so the total is ",
                          Fixed(s.aggregate_tokens_per_second(), 0), " tokens/s and ", users, " (",
                          decode, "); more GPU memory per replica raises it");
    case sizing::v1::SERVING_BOUND_DECODE:
      return absl::StrCat("throughput decode-bound: the batched decode steps take ",
                          Fixed(100 * (1 - s.prefill_fraction()), 0),
                          "% of each replica's time at full load (prefill ",
                          Fixed(100 * s.prefill_fraction(), 0), "%), so the total is ",
                          Fixed(s.aggregate_tokens_per_second(), 0), " tokens/s and ", users, " (",
                          decode,
                          "); more concurrent sequences per replica would raise the total and "
                          "lower each one's speed");
    default:
      return absl::StrCat(users, " (", decode, ")");
  }
}

void AddOnce(google::protobuf::RepeatedPtrField<std::string>* list, const std::string& text) {
  if (std::find(list->begin(), list->end(), text) == list->end()) *list->Add() = text;
}

// Sizing's notes about the configuration: a WARNING note is a warning unless
// one of the gateway's own already says it (then its detail goes to the
// notes), an INFO note is a note. A plain note with no structured twin comes
// from an older sizing service that set no severity: a warning, as before.
void AddSizingNotes(const sizing::v1::ConfigurationEstimate& e, bool link_warned, bool fp16_warned,
                    v1::Recommendation* r) {
  auto covered = [&](const std::string& code, const std::string& text) {
    if (link_warned && (code == "tp_over_pcie" || code == "pcie_allreduce")) return true;
    if (fp16_warned && code == "no_bf16") return true;
    // The topic (the text before the first ':' or ',') of a warning already given.
    const absl::string_view topic = absl::string_view(text).substr(0, text.find_first_of(":,"));
    for (const std::string& warning : r->warnings()) {
      if (absl::StartsWithIgnoreCase(warning, topic)) return true;
    }
    return false;
  };
  for (const sizing::v1::Note& note : e.structured_notes()) {
    if (note.text().empty()) continue;
    if (note.severity() == sizing::v1::NOTE_SEVERITY_INFO || covered(note.code(), note.text())) {
      AddOnce(r->mutable_notes(), note.text());
    } else {
      AddOnce(r->mutable_warnings(), note.text());
    }
  }
  for (const std::string& text : e.notes()) {
    bool structured = false;
    for (const sizing::v1::Note& note : e.structured_notes()) structured |= note.text() == text;
    if (structured) continue;
    if (covered("", text)) {
      AddOnce(r->mutable_notes(), text);
    } else {
      AddOnce(r->mutable_warnings(), text);
    }
  }
}

}  // namespace

void RecommendationRun::Explain(const Candidate& candidate, const pricing::v1::Quote& quote,
                                v1::Recommendation& r) const {
  const Offer& offer = OfferOf(candidate);
  const sizing::v1::ConfigurationEstimate& e = Est(candidate.config);
  const sizing::v1::Workload& w = request_.workload();
  const catalog::v1::Gpu* gpu = catalog_->FindGpu(offer.gpu_model());
  const int total_gpus = offer.gpus_per_node() * candidate.nodes;

  *r.mutable_offer() = offer;
  r.mutable_offer()->set_nodes(candidate.nodes);
  r.set_purchase_option(candidate.option);
  *r.mutable_memory() = e.memory();
  *r.mutable_parallel_plan() = e.plan();
  r.set_estimated_hours(quote.cost().expected_hours() > 0 ? quote.cost().expected_hours()
                                                          : e.estimated_hours());
  *r.mutable_cost() = quote.cost();
  r.set_tokens_per_second(e.tokens_per_second());
  r.set_memory_margin(e.memory_margin());
  r.set_gpu_memory_bytes(e.gpu_memory_bytes());
  r.set_optimal_checkpoint_interval_minutes(quote.optimal_checkpoint_interval_minutes());
  *r.mutable_overheads() = OverheadsOf(candidate);
  r.mutable_overheads()->set_usd(r.overheads().total_hours() * quote.cost().usd_per_hour());
  if (r.overheads().total_hours() > 0) {
    const v1::Overheads& o = r.overheads();
    r.add_reasons(absl::StrCat(
        "overheads ", Fixed(o.total_hours(), 2), " h, $", Fixed(o.usd(), 2), ": start-up ",
        Fixed(o.startup_hours(), 2), " h, image pull ", Fixed(o.image_pull_hours(), 2),
        " h, model and data download ", Fixed(o.download_hours(), 2), " h at ",
        absl::StrFormat("%g", o.download_gbps()), " Gbps (",
        offer.network().gbps() > 0 && offer.network().gbps() <= o.download_gbps()
            ? "the instance's published network"
            : "the provider's practical download rate, data/gateway/overheads.textproto",
        "), checkpoint writes ", Fixed(o.checkpoint_hours(), 2), " h (included)"));
  }
  if (serving_) {
    *r.mutable_serving() = Serving(e, candidate.spare_nodes, quote.cost().usd_per_hour());
    const v1::ServingEstimate& s = r.serving();
    if (s.tokens_per_second_per_user() > 0) {
      r.add_reasons(absl::StrCat(
          "serving: first token in ", Fixed(s.time_to_first_token_seconds(), 2), " s, ",
          Fixed(s.tokens_per_second_per_user(), 1), " tokens/s per user at full load, ",
          Fixed(s.aggregate_tokens_per_second(), 0), " tokens/s over ", s.replicas(),
          " replica(s), $", Fixed(s.usd_per_million_output_tokens(), 2),
          " per million output tokens at full load"));
      const std::string bound = ServingBoundText(s, e.serving(), w);
      r.mutable_serving()->set_throughput_bound_text(bound);
      r.add_reasons(bound);
    }
  }

  r.add_reasons(absl::StrCat("fits: ", Gb(e.memory().total_bytes()), " of ",
                             Gb(e.gpu_memory_bytes()), " per GPU (",
                             Fixed(100 * e.memory_margin(), 0), "% free)"));
  if (!e.plan().description().empty())
    r.add_reasons(absl::StrCat("plan: ", e.plan().description()));
  r.add_reasons(absl::StrCat(
      Fixed(r.estimated_hours(), 1), " h at ", Fixed(e.tokens_per_second(), 0), " tokens/s, $",
      Fixed(quote.cost().total_usd(), 2), " in total ($", Fixed(quote.cost().usd_per_hour(), 2),
      "/h, ", OptionName(candidate.option), ")"));
  {
    const pricing::v1::CostBreakdown& cost = quote.cost();
    std::string egress = absl::StrCat("egress $", Fixed(cost.egress_usd(), 2));
    if (egress_gb_ > 0) {
      absl::StrAppend(&egress, " (", Gigabytes(egress_gb_), " GB out at ", offer.provider(),
                      "'s rate", cost.egress_usd() > 0 ? "" : ": free or within its allowance",
                      ")");
    }
    r.add_reasons(absl::StrCat("cost: compute $", Fixed(cost.compute_usd(), 2), ", storage $",
                               Fixed(cost.storage_usd(), 2), ", ", egress,
                               ", expected preemption loss $", Fixed(cost.preemption_usd(), 2)));
  }
  if (total_gpus > 1 && offer.link() == catalog::v1::LINK_TYPE_NVLINK) {
    r.add_reasons(absl::StrCat("NVLink between GPUs (",
                               Fixed(offer.link_bytes_per_second() / 1e9, 0), " GB/s per GPU)"));
  }
  if (candidate.nodes > 1) {
    r.add_reasons(absl::StrCat(candidate.nodes, " nodes over ", FabricName(offer.fabric()), " (",
                               Fixed(offer.fabric_gbps(), 0), " Gbps per node)"));
  }

  // Warnings change whether the job works or what it costs, or need a check
  // before renting; notes are context for numbers that already include it.
  const bool data_or_tensor_parallel = training_ || e.plan().tensor_parallel() > 1;
  const bool pcie_bound =
      total_gpus > 1 && offer.link() == catalog::v1::LINK_TYPE_PCIE && data_or_tensor_parallel;
  if (pcie_bound) {
    r.add_warnings(
        absl::StrFormat("PCIe-only multi-GPU: all-reduce bound across %d GPUs without NVLink",
                        offer.gpus_per_node()));
  }
  const bool fp16_only_training = training_ && gpu != nullptr && !gpu->supports_bf16() &&
                                  w.precision() != sizing::v1::PRECISION_FP32;
  if (fp16_only_training)
    r.add_warnings("FP16-only GPU (no BF16): overflow risk in training; needs loss scaling");
  if (IsServing(w.task()) && gpu != nullptr &&
      gpu->memory_type() == catalog::v1::MEMORY_TYPE_GDDR) {
    r.add_notes(
        absl::StrFormat("GDDR card (%.2f TB/s): decode is memory-bandwidth-bound (the speeds above "
                        "include it); HBM GPUs serve faster",
                        gpu->memory_bandwidth_bytes_per_second() / 1e12));
  }
  for (const std::string& warning : quote.warnings()) r.add_warnings(warning);
  if (candidate.spare_nodes > 0) {
    r.add_warnings(absl::StrFormat(
        "spot endpoint: priced with %d spare node(s) (%d extra replica(s)) so it keeps serving "
        "through a preemption "
        "(about %.2f interruptions/h across the cluster); each one still drops the requests in "
        "flight",
        candidate.spare_nodes, r.serving().spare_replicas(), quote.interruptions_per_hour()));
  }
  if (e.memory_margin() < vram_margin_ + 0.05) {
    r.add_warnings(absl::StrCat("VRAM margin tight: ", Fixed(100 * e.memory_margin(), 0),
                                "% free (asked for ", Fixed(100 * vram_margin_, 0), "%)"));
  }
  if (candidate.nodes > 1 && offer.fabric() == catalog::v1::FABRIC_TYPE_ETHERNET) {
    r.add_warnings(absl::StrFormat("multi-node over Ethernet (%.0f Gbps): slow gradient sync",
                                   offer.fabric_gbps()));
  }
  const bool tp_off_nvlink =
      e.plan().needs_nvlink() && offer.link() != catalog::v1::LINK_TYPE_NVLINK;
  if (tp_off_nvlink && !pcie_bound) {
    r.add_warnings(absl::StrCat("tensor parallel over ", LinkName(offer.link()), ", not NVLink"));
  }
  AddSizingNotes(e, pcie_bound || tp_off_nvlink, fp16_only_training, &r);
  if (offer.availability() == catalog::v1::AVAILABILITY_UNSPECIFIED) {
    r.add_warnings("availability unconfirmed: check capacity before provisioning");
  } else if (offer.availability() == catalog::v1::AVAILABILITY_LIMITED) {
    r.add_warnings("limited availability: keep the next recommendation as a fallback");
  }
}

}  // namespace gpuadvisor::gateway
