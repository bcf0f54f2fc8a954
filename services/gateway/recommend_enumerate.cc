// Stage 1: enumerate. The offers that pass the name filters, grouped by
// OfferCell into units; the configurations (shape x cluster size) their
// candidates need; the EstimateRequest for those the estimate cache lacks.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status/status_macros.h"
#include "services/gateway/recommend_state.h"
#include "services/gateway/workload_defaults.h"

namespace gpuadvisor::gateway::recommend {

using catalog::v1::PurchaseOption;

absl::Status RunState::Enumerate(const RegionGroups* groups) {
  ChoosePurchaseOptions();
  RETURN_IF_ERROR(ResolveFilters(groups));
  RETURN_IF_ERROR(ResolveHostFilter());
  name_filtered_ = !provider_ok_.empty() || !region_ok_.empty() || !gpu_ok_.empty() ||
                   reliability_filters_offers_;
  candidates_considered_ = static_cast<int>(index_->offers().size());
  shape_configs_.assign(index_->shapes().size() * kMaxSteps, -1);
  shape_steps_.assign(index_->shapes().size(), 0);
  // Units: the cells (or, for the reference scan, the offers) that pass the
  // name filters, by first offer.
  if (reference_ != nullptr) {
    reference_->MakeUnits(*this);
  } else if (!name_filtered_) {
    UnitsFromCells();
  } else if (!reliability_filters_offers_ && region_groups_.empty() &&
             provider_ok_.empty() != region_ok_.empty()) {
    UnitsFromParts();
  } else {
    UnitsByVisiting();
  }
  CountHostFiltered();
  AddConfigurations();
  return absl::OkStatus();
}

// An always-on endpoint or a job that cannot resume is not offered spot
// unless the caller asks for it (then it comes with a warning).
// A commitment term allowed (max_commitment_years > 0) adds reserved to
// the defaults; reserved without a stated term limit assumes 1 year.
void RunState::ChoosePurchaseOptions() {
  const v1::Constraints& c = request_.constraints();
  for (int option : c.purchase_options()) options_.push_back(static_cast<PurchaseOption>(option));
  const bool commit = c.has_max_commitment_years() && c.max_commitment_years() > 0;
  if (options_.empty()) {
    options_.push_back(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
    const bool spot = restartable_ && !always_on_;
    if (spot) options_.push_back(catalog::v1::PURCHASE_OPTION_SPOT);
    if (commit) options_.push_back(catalog::v1::PURCHASE_OPTION_RESERVED);
    assumptions_.push_back(MakeAssumption(
        "constraints.purchase_options",
        absl::StrCat(spot ? "on-demand, spot" : "on-demand", commit ? ", reserved" : ""),
        commit ? "reserved: constraints.max_commitment_years allows a commitment term"
        : spot ? "reserved needs a commitment: ask for PURCHASE_OPTION_RESERVED"
               : "no spot: the job cannot resume after a preemption (ask for "
                 "PURCHASE_OPTION_SPOT to see it)"));
  }
  if (!c.has_max_commitment_years() &&
      std::find(options_.begin(), options_.end(), catalog::v1::PURCHASE_OPTION_RESERVED) !=
          options_.end()) {
    assumptions_.push_back(MakeAssumption(
        "constraints.max_commitment_years", "1",
        "reserved is quoted on commitment terms of up to 1 year (set max_commitment_years to 3 "
        "for 3-year terms); a term is paid whole whether the job uses it or not"));
  }
}

// Every cell, or (a host tier filter) those on the tier asked for.
void RunState::UnitsFromCells() {
  const std::vector<OfferCell>& cells = index_->cells();
  units_.reserve(cells.size());
  int passing = 0;
  for (int cell = 0; cell < static_cast<int>(cells.size()); ++cell) {
    if (host_filtered_ && !PassesHostTier(cells[cell].community_host)) continue;
    Unit unit;
    unit.cell = cell;
    unit.count = static_cast<int>(cells[cell].offers.size());
    unit.first = cells[cell].offers.front();
    passing += unit.count;
    units_.push_back(std::move(unit));
  }
  if (host_filtered_) CountFilteredByName(passing);
}

// Providers only or regions only (GPUs and host tiers are properties of
// the cell): the index's parts of the cells give the offers that pass,
// counted and ordered, without visiting them.
void RunState::UnitsFromParts() {
  const std::vector<OfferCell>& cells = index_->cells();
  part_mode_ = true;
  parts_by_region_ = !region_ok_.empty();
  const std::vector<char>& ok = parts_by_region_ ? region_ok_ : provider_ok_;
  for (int id = 0; id < static_cast<int>(ok.size()); ++id) {
    if (!ok[id]) continue;
    for (const CellPart& part :
         parts_by_region_ ? index_->CellPartsOfRegion(id) : index_->CellPartsOfProvider(id)) {
      if (!gpu_ok_.empty() && !gpu_ok_[cells[part.cell].gpu]) continue;
      if (host_filtered_ && !PassesHostTier(cells[part.cell].community_host)) continue;
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
  CountFilteredByName(passing);
}

// Visits only the offers of the providers, GPUs or regions asked for, when
// given (a region group can hold any region: every offer).
void RunState::UnitsByVisiting() {
  std::vector<const std::vector<int32_t>*> sources;
  if (!provider_ok_.empty()) {
    for (int id = 0; id < index_->providers(); ++id) {
      if (provider_ok_[id]) sources.push_back(&index_->OffersOfProvider(id));
    }
  } else if (!gpu_ok_.empty()) {
    for (int id = 0; id < index_->gpus(); ++id) {
      if (gpu_ok_[id]) sources.push_back(&index_->OffersOfGpu(id));
    }
  } else if (!region_ok_.empty() && region_groups_.empty()) {
    for (int id = 0; id < index_->regions(); ++id) {
      if (region_ok_[id]) sources.push_back(&index_->OffersOfRegion(id));
    }
  }
  const std::vector<OfferFacts>& facts = index_->offers();
  std::vector<int> unit_of_cell(index_->cells().size(), -1);
  int passing = 0;
  auto visit = [&](int offer) {
    if (!PassesNames(offer)) return;
    ++passing;
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
    for (int offer = 0; offer < static_cast<int>(facts.size()); ++offer) visit(offer);
  } else {
    for (const std::vector<int32_t>* source : sources) {
      for (int32_t offer : *source) visit(offer);
    }
  }
  std::sort(units_.begin(), units_.end(),
            [](const Unit& a, const Unit& b) { return a.first < b.first; });
  CountFilteredByName(passing);
}

void RunState::CountFilteredByName(int passing) {
  const int offers = static_cast<int>(index_->offers().size());
  filtered_by_name_ = offers - passing;
  if (filtered_by_name_ > 0) {
    for (int offer = 0; offer < offers && first_filtered_by_name_ < 0; ++offer) {
      if (!PassesNames(offer)) first_filtered_by_name_ = offer;
    }
  }
}

// Excludes the units no candidate of which can run, and numbers the
// configurations of the rest: offers of one shape share them, one per
// cluster size.
void RunState::AddConfigurations() {
  const v1::Constraints& c = request_.constraints();
  const std::vector<OfferCell>& cells = index_->cells();
  for (Unit& unit : units_) {
    const OfferCell& cell = cells[unit.cell];
    if (!Modelled(unit)) {
      ExcludeUnit(unit, v1::EXCLUSION_REASON_NOT_MODELLED);
      continue;
    }
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
}

bool RunState::Modelled(const Unit& unit) {
  const int gpu = index_->cells()[unit.cell].gpu;
  if (gpu_modelled_.empty()) gpu_modelled_.assign(index_->gpus(), -1);
  if (gpu_modelled_[gpu] < 0) {
    const catalog::v1::Gpu* spec =
        catalog_->FindGpu(catalog_->snapshot().offers(unit.first).gpu_model());
    const catalog::v1::AcceleratorKind kind =
        spec == nullptr ? catalog::v1::ACCELERATOR_KIND_UNSPECIFIED : spec->accelerator_kind();
    gpu_modelled_[gpu] = kind == catalog::v1::ACCELERATOR_KIND_UNSPECIFIED ||
                         kind == catalog::v1::ACCELERATOR_KIND_GPU;
  }
  return gpu_modelled_[gpu] != 0;
}

std::string RunState::NodeCapText(const OfferFacts& f) const {
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

void RunState::PrepareSizing() {
  *estimate_request_.mutable_workload() = request_.workload();
  estimate_request_.set_vram_margin(vram_margin_);
  // The SLOs the exclusions check (the per-user floor as resolved, the
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

}  // namespace gpuadvisor::gateway::recommend
