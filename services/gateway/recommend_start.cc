// Stage 0: validate the request, apply the workload defaults, settle the
// run's settings (each default stated as an assumption) and resolve the
// provider, region and GPU names.

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status/status_macros.h"
#include "common/validation/field_ranges.h"
#include "common/validation/name_match.h"
#include "services/gateway/recommend_state.h"
#include "services/gateway/recommend_text.h"
#include "services/gateway/workload_defaults.h"

namespace gpuadvisor::gateway::recommend {
namespace {

absl::Status ValidateConstraints(const v1::RecommendRequest& request) {
  // Every number's physical range (the workload's too), from the table all
  // services share; then what relates the fields.
  RETURN_IF_ERROR(validation::CheckRanges(request));
  const v1::Constraints& c = request.constraints();
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
  for (int i = 0; i < c.upfront_payments_size(); ++i) {
    if (c.upfront_payments(i) == catalog::v1::UPFRONT_PAYMENT_UNSPECIFIED ||
        !catalog::v1::UpfrontPayment_IsValid(c.upfront_payments(i))) {
      return absl::InvalidArgumentError(
          absl::StrCat("constraints.upfront_payments[", i, "]: must be NONE, PARTIAL or ALL"));
    }
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
                   "\"; closest: ", absl::StrJoin(validation::ClosestNames(name, valid), ", ")));
}

// printf's "%.<precision>f" of `value`, without parsing a format: the
// per-recommendation texts hold a dozen numbers each. std::to_chars prints
// the exactly rounded value as printf does in the "C" locale; a value too
}  // namespace

bool IsTraining(sizing::v1::Task task) {
  return task == sizing::v1::TASK_PRETRAIN || task == sizing::v1::TASK_FULL_FINETUNE ||
         task == sizing::v1::TASK_LORA || task == sizing::v1::TASK_QLORA;
}

bool IsServing(sizing::v1::Task task) {
  return task == sizing::v1::TASK_INFERENCE || task == sizing::v1::TASK_BATCH_INFERENCE;
}

// The catalog's list price per node at `option`; 0 when not sold that way.
absl::StatusOr<RecommendationRun> StartRun(std::shared_ptr<const OfferIndex> index,
                                           const v1::RecommendRequest& request,
                                           const RegionGroups* groups,
                                           const OverheadModel* overheads,
                                           EstimateCache* estimate_cache,
                                           const ReferenceScan* reference) {
  if (absl::Status s = ValidateConstraints(request); !s.ok()) return s;
  if (index == nullptr) return absl::UnavailableError("no catalog replica yet; retry");
  auto run = std::make_unique<RunState>();
  run->index_ = std::move(index);
  run->catalog_ = &run->index_->catalog();
  run->request_ = request;
  run->estimate_cache_ = estimate_cache;
  run->reference_ = reference;
  RETURN_IF_ERROR(run->Configure(overheads));
  RETURN_IF_ERROR(run->Enumerate(groups));
  run->PrepareSizing();
  return RecommendationRun(std::move(run));
}

absl::Status RunState::Configure(const OverheadModel* overheads) {
  RETURN_IF_ERROR(ApplyWorkloadDefaults(*request_.mutable_workload(), assumptions_));
  const v1::Constraints& c = request_.constraints();
  objective_ = c.objective() == v1::OBJECTIVE_UNSPECIFIED ? v1::OBJECTIVE_CHEAPEST : c.objective();
  if (c.objective() == v1::OBJECTIVE_UNSPECIFIED) {
    assumptions_.push_back(
        MakeAssumption("constraints.objective", "OBJECTIVE_CHEAPEST", "lowest total job cost"));
  }
  max_results_ = request_.max_results() == 0 ? kDefaultMaxResults : request_.max_results();
  max_nodes_ = c.single_node() ? 1 : (c.max_nodes() == 0 ? kMaxMaxNodes : c.max_nodes());
  if (!c.single_node() && c.max_nodes() == 0) {
    assumptions_.push_back(MakeAssumption(
        "constraints.max_nodes", "each offer's largest cluster",
        absl::StrCat("clusters of 1, 2, 4, ... nodes up to what the provider sells for the offer "
                     "(Offer.max_nodes, at most ",
                     kMaxMaxNodes, "); set max_nodes to cap it")));
  }
  vram_margin_ = c.has_vram_margin() ? c.vram_margin() : kDefaultVramMargin;
  if (!c.has_vram_margin()) {
    assumptions_.push_back(MakeAssumption("constraints.vram_margin", Fixed(kDefaultVramMargin, 2),
                                          "fraction of GPU memory kept free"));
  }
  confidence_ = c.has_confidence() ? c.confidence() : kDefaultConfidence;
  confidence_z_ = NormalQuantile(confidence_);
  if (!c.has_confidence() && (c.deadline_hours() > 0 || c.max_total_usd() > 0)) {
    assumptions_.push_back(MakeAssumption(
        "constraints.confidence", Fixed(kDefaultConfidence, 2),
        "deadline_hours and max_total_usd are checked on the P80 of the hours and the total "
        "cost (from the estimate's P10-P90 interval); set confidence (--confidence) to change it"));
  }
  if (c.has_tie_band_fraction()) tie_band_ = c.tie_band_fraction();
  const sizing::v1::Workload& w = request_.workload();
  training_ = IsTraining(w.task());
  serving_ = IsServing(w.task());
  overheads_ = overheads;
  always_on_ = w.task() == sizing::v1::TASK_INFERENCE;
  restartable_ = w.has_restartable() ? w.restartable() : !always_on_;
  ResolveSpeedFloor(overheads);
  if (overheads != nullptr) {
    overhead_rules_.reserve(index_->providers());
    for (const std::string& provider : index_->provider_names()) {
      overhead_rules_.push_back(overheads->RuleFor(provider));
    }
  }
  return absl::OkStatus();
}

// The per-user speed floor: the caller's, else the default on an
// interactive endpoint (stated), else none.
void RunState::ResolveSpeedFloor(const OverheadModel* overheads) {
  const v1::Constraints& c = request_.constraints();
  if (c.has_min_user_tokens_per_second()) {
    min_user_tps_ = c.min_user_tokens_per_second();
    min_user_tps_field_ = "min_user_tokens_per_second";
  } else if (c.min_tokens_per_second_per_user() > 0) {
    min_user_tps_ = c.min_tokens_per_second_per_user();
    min_user_tps_field_ = "min_tokens_per_second_per_user";
  } else if (always_on_ && overheads != nullptr &&
             overheads->serving_defaults().min_user_tokens_per_second() > 0) {
    const double floor = overheads->serving_defaults().min_user_tokens_per_second();
    min_user_tps_ = floor;
    assumptions_.push_back(MakeAssumption(
        "constraints.min_user_tokens_per_second", absl::StrFormat("%g", floor),
        absl::StrFormat("interactive endpoint: each user's stream at least %g output tokens/s (%s; "
                        "data/gateway/overheads.textproto as of %s); set it to 0 "
                        "(--min_user_tps=0) to lift the "
                        "floor",
                        floor, overheads->serving_defaults().source(), overheads->as_of())));
  }
  if (!serving_) min_user_tps_ = 0;
}

absl::Status RunState::ResolveFilters(const RegionGroups* groups) {
  const v1::Constraints& c = request_.constraints();
  if (!c.providers().empty()) {
    provider_ok_.assign(index_->providers(), 0);
    for (int i = 0; i < c.providers_size(); ++i) {
      const std::vector<int>& ids = index_->ProviderIdsIgnoringCase(c.providers(i));
      if (ids.empty())
        return UnknownName("providers", i, "provider", c.providers(i), index_->provider_names());
      for (int id : ids) provider_ok_[id] = 1;
    }
  }
  // Left out: every provider (or those asked for) less these.
  for (int i = 0; i < c.exclude_providers_size(); ++i) {
    const std::vector<int>& ids = index_->ProviderIdsIgnoringCase(c.exclude_providers(i));
    if (ids.empty()) {
      return UnknownName("exclude_providers", i, "provider", c.exclude_providers(i),
                         index_->provider_names());
    }
    if (provider_ok_.empty()) provider_ok_.assign(index_->providers(), 1);
    for (int id : ids) provider_ok_[id] = 0;
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

bool RunState::InRegionGroup(const OfferFacts& f) {
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

std::string RunState::MinUserTpsName() const {
  return min_user_tps_field_.empty() ? "the default min_user_tokens_per_second"
                                     : absl::StrCat("your ", min_user_tps_field_);
}

}  // namespace gpuadvisor::gateway::recommend
