#include "services/sizing/sizing_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/io/deterministic.h"
#include "common/io/fingerprint.h"
#include "common/io/text_proto.h"
#include "common/status/status_macros.h"
#include "common/validation/name_match.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/sizing/estimator.h"
#include "services/sizing/hf_config.h"
#include "services/sizing/job.h"
#include "services/sizing/profiles.h"
#include "services/sizing/workload_defaults.h"
#include "services/sizing/workload_validation.h"

namespace gpuadvisor::sizing {
namespace cv1 = ::gpuadvisor::catalog::v1;

struct SizingModel::Data {
  std::vector<ModelSpec> presets;                      // file order
  absl::flat_hash_map<std::string, int> preset_index;  // lower-case name
  std::vector<GpuSpec> gpus;
  // GpuNameResolver::Key of every name and alias.
  absl::flat_hash_map<std::string, int> gpu_index;
  // The catalog's spellings ("H100 SXM5", "A100-80G-PCIe") of the same GPUs.
  std::unique_ptr<catalog::GpuNameResolver> gpu_names;
  Profiles profiles;
  std::string fingerprint;  // data_fingerprint()
};

namespace {

// The deterministic bytes of each input, one after the other, fingerprinted.
std::string DataFingerprint(const v1::ModelList& models, const cv1::GpuList& gpus,
                            const v1::SizingProfiles& profiles) {
  std::string bytes;
  const google::protobuf::Message* const messages[] = {&models, &gpus, &profiles};
  for (const google::protobuf::Message* message : messages) {
    const std::string one = DeterministicBytes(*message);
    absl::StrAppend(&bytes, one.size(), ":", one);
  }
  return FingerprintHex(bytes);
}

absl::Status CheckSpecFigure(const std::string& path, const char* field, double value,
                             bool required) {
  if (!std::isfinite(value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".", field, ": must be finite and >= 0"));
  }
  if (required && value <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".", field, ": must be > 0"));
  }
  return absl::OkStatus();
}

absl::StatusOr<GpuSpec> BuildGpuSpec(const cv1::Gpu& g, const std::string& path,
                                     const Profiles& profiles) {
  if (g.name().empty()) return absl::InvalidArgumentError(absl::StrCat(path, ".name: must be set"));
  RETURN_IF_ERROR(
      CheckSpecFigure(path, "memory_bytes", static_cast<double>(g.memory_bytes()), true));
  RETURN_IF_ERROR(CheckSpecFigure(path, "memory_bandwidth_bytes_per_second",
                                  g.memory_bandwidth_bytes_per_second(), true));
  RETURN_IF_ERROR(CheckSpecFigure(path, "bf16_flops", g.bf16_flops(), false));
  RETURN_IF_ERROR(CheckSpecFigure(path, "fp16_flops", g.fp16_flops(), false));
  RETURN_IF_ERROR(CheckSpecFigure(path, "fp8_flops", g.fp8_flops(), false));
  RETURN_IF_ERROR(CheckSpecFigure(path, "int8_ops", g.int8_ops(), false));
  RETURN_IF_ERROR(CheckSpecFigure(path, "fp32_flops", g.fp32_flops(), false));
  RETURN_IF_ERROR(
      CheckSpecFigure(path, "nvlink_bytes_per_second", g.nvlink_bytes_per_second(), false));
  if (g.bf16_flops() <= 0 && g.fp16_flops() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".fp16_flops: bf16_flops or fp16_flops must be > 0"));
  }
  if (g.supports_bf16() != (g.bf16_flops() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".supports_bf16: must be true exactly when bf16_flops > 0"));
  }
  GpuSpec s;
  s.name = g.name();
  s.vendor = g.vendor();
  s.architecture = g.architecture();
  s.memory_bytes = static_cast<double>(g.memory_bytes());
  s.memory_bandwidth = g.memory_bandwidth_bytes_per_second();
  s.bf16_flops = g.bf16_flops();
  s.fp16_flops = g.fp16_flops();
  s.fp8_flops = g.supports_fp8() ? g.fp8_flops() : 0.0;
  s.fp32_flops = g.fp32_flops();
  s.nvlink_bytes_per_second = g.nvlink_bytes_per_second();
  // Utilization model (docs/sizing.md): the generation's base on an
  // A100-balanced GPU; GPUs with less memory bandwidth per FLOP feed their
  // tensor cores less well (H100: ~0.82 of the base), scaled by
  // (bytes/FLOP)^0.3 (data/sizing/engine.textproto, kernels). Without the
  // engine constants nothing is estimated (SizingModel::Estimate).
  if (!profiles.has_engine()) return s;
  const v1::KernelConstants& k = profiles.engine().kernels();
  const double peak16 = s.bf16_flops > 0 ? s.bf16_flops : s.fp16_flops;
  const double balance =
      (s.memory_bandwidth / peak16) / (k.reference_memory_bandwidth() / k.reference_peak_flops());
  const v1::EfficiencyBase* base = profiles.Efficiency(s.vendor, s.architecture);
  const double training = base != nullptr ? base->training() : k.default_training_efficiency();
  s.decode_bandwidth_efficiency =
      base != nullptr ? base->decode_bandwidth() : k.default_decode_bandwidth();
  s.fp8_training_factor = k.default_fp8_training();
  if (base != nullptr && base->not_measured()) s.efficiency_not_measured = base->source();
  if (base != nullptr && base->fp8_training() > 0) s.fp8_training_factor = base->fp8_training();
  s.compute_efficiency = training * std::min(1.0, std::pow(std::max(balance, k.balance_floor()),
                                                           k.balance_exponent()));
  return s;
}

// A preset (or config.json) with the request's non-zero model fields over
// it. A preset's derived fields must not pin an overridden shape: when the
// caller changes the architecture, the counts are recomputed from it.
v1::Model WithOverrides(const v1::Model& preset, const v1::Model& request_model) {
  v1::Model overrides = request_model;
  overrides.clear_hf_config_json();  // resolved by the caller; not echoed back
  v1::Model merged = MergeModel(preset, overrides);
  const v1::Model& o = overrides;
  const bool shape_changed = o.layers() || o.hidden_size() || o.attention_heads() || o.kv_heads() ||
                             o.intermediate_size() || o.vocab_size() || o.experts() ||
                             o.active_experts() || o.head_dim() || o.expert_intermediate_size();
  if (shape_changed && o.params() == 0) merged.clear_params();
  if ((shape_changed || o.params() > 0) && o.active_params() == 0) merged.clear_active_params();
  return merged;
}

// The default global batch of a training task without global_batch_size
// (data/sizing/profiles.textproto batch_defaults), stated once per answer;
// each configuration's plan rounds it up to whole micro-batches per
// data-parallel rank (note "global_batch_assumed").
void AddBatchDefault(const Job& j, const v1::Workload& w, const Profiles& profiles,
                     std::vector<v1::AppliedDefault>& applied) {
  if (!j.training || w.global_batch_size() > 0 || j.train.seq <= 0) return;
  const v1::BatchDefault* d = profiles.BatchDefaultFor(j.task);
  if (d == nullptr) return;
  const int64_t tokens = static_cast<int64_t>(std::llround(d->tokens()));
  const int64_t sequences = static_cast<int64_t>(std::ceil(d->tokens() / j.train.seq));
  applied.push_back(MakeAppliedDefault(
      "workload.global_batch_size",
      absl::StrCat(sequences, " sequences (", tokens, " tokens per step)"),
      absl::StrCat("default global batch of ", v1::Task_Name(j.task),
                   " from common recipes, rounded up to whole micro-batches per data-parallel "
                   "rank: ",
                   d->source())));
}

// A parallelism hint that fits none of the configurations is a request error
// (a hint that fits only some makes the others not fit, with the reason).
absl::Status CheckHintsDivideSomeConfiguration(const Job& j, const v1::EstimateRequest& request) {
  struct Hint {
    const char* field;
    int value;
  };
  const int tp = std::max(1, j.tp_hint), pp = std::max(1, j.pp_hint);
  const Hint hints[] = {{"tensor_parallel", j.tp_hint},
                        {"pipeline_parallel", j.pp_hint},
                        {"expert_parallel", j.ep_hint}};
  for (const Hint& h : hints) {
    if (h.value <= 1) continue;
    bool divides_one = false;
    for (const v1::GpuConfiguration& c : request.configurations()) {
      const int gpus = c.gpus_per_node() * c.nodes();
      const bool ok = h.field[0] == 'e' ? gpus % (tp * pp) == 0 && (gpus / (tp * pp)) % h.value == 0
                                        : gpus % (tp * pp) == 0 && tp <= c.gpus_per_node();
      divides_one = divides_one || ok;
    }
    if (!divides_one) {
      return absl::InvalidArgumentError(absl::StrCat(
          "workload.parallelism.", h.field, ": ", h.value,
          " does not divide the GPUs of any configuration (tensor x pipeline x expert degrees must "
          "divide GPUs per node x nodes, and tensor_parallel must fit in a node)"));
    }
  }
  if (j.zero_hint > 3 || j.zero_hint < -1) {
    return absl::InvalidArgumentError("workload.parallelism.zero_stage_hint: must be 0-3");
  }
  return absl::OkStatus();
}

}  // namespace

const std::string& SizingModel::data_fingerprint() const { return data_->fingerprint; }

absl::StatusOr<SizingModel> SizingModel::Create(v1::ModelList models, cv1::GpuList gpus,
                                                v1::SizingProfiles profiles) {
  auto data = std::make_shared<Data>();
  data->fingerprint = DataFingerprint(models, gpus, profiles);
  ASSIGN_OR_RETURN(data->profiles, Profiles::Build(std::move(profiles)));
  data->presets.reserve(models.models_size());
  for (int i = 0; i < models.models_size(); ++i) {
    const v1::Model& m = models.models(i);
    const std::string path = absl::StrCat("models[", i, "]");
    if (m.preset().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".preset: must be set"));
    }
    const std::string key = absl::AsciiStrToLower(m.preset());
    if (!data->preset_index.emplace(key, i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".preset: duplicate preset \"", m.preset(), "\""));
    }
    if (m.params() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".params: must be > 0"));
    }
    ASSIGN_OR_RETURN(ModelSpec spec, BuildModelSpec(m, path));
    data->presets.push_back(std::move(spec));
  }
  data->gpus.reserve(gpus.gpus_size());
  for (int i = 0; i < gpus.gpus_size(); ++i) {
    const cv1::Gpu& g = gpus.gpus(i);
    const std::string path = absl::StrCat("gpus[", i, "]");
    ASSIGN_OR_RETURN(GpuSpec spec, BuildGpuSpec(g, path, data->profiles));
    auto add = [&](const std::string& name, const char* field) -> absl::Status {
      const std::string key = catalog::GpuNameResolver::Key(name);
      if (key.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ".", field, ": empty name"));
      }
      auto [it, inserted] = data->gpu_index.emplace(key, i);
      if (!inserted && it->second != i) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ".", field, ": \"", name, "\" already names another GPU"));
      }
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(add(g.name(), "name"));
    for (const std::string& alias : g.aliases()) RETURN_IF_ERROR(add(alias, "aliases"));
    data->gpus.push_back(std::move(spec));
  }
  data->gpu_names = std::make_unique<catalog::GpuNameResolver>(gpus);
  return SizingModel(std::move(data));
}

absl::StatusOr<SizingModel> SizingModel::FromDataDir(const std::string& data_dir) {
  return FromFiles(data_dir + "/sizing/models.textproto", data_dir + "/catalog/gpus.textproto",
                   data_dir + "/sizing/profiles.textproto",
                   data_dir + "/sizing/error_intervals.textproto",
                   data_dir + "/sizing/engine.textproto");
}

namespace {

// The sizing data besides the GPUs: profiles, error intervals, engine.
absl::StatusOr<v1::SizingProfiles> LoadProfiles(const std::string& profiles_path,
                                                const std::string& error_intervals_path,
                                                const std::string& engine_path) {
  v1::SizingProfiles profiles;
  if (!profiles_path.empty()) RETURN_IF_ERROR(LoadTextProtoFile(profiles_path, &profiles));
  if (!error_intervals_path.empty()) {
    v1::SizingProfiles errors;
    RETURN_IF_ERROR(LoadTextProtoFile(error_intervals_path, &errors));
    profiles.mutable_error_intervals()->MergeFrom(errors.error_intervals());
  }
  if (!engine_path.empty()) {
    v1::SizingProfiles engine;
    RETURN_IF_ERROR(LoadTextProtoFile(engine_path, &engine));
    *profiles.mutable_engine() = engine.engine();
  }
  return profiles;
}

}  // namespace

absl::StatusOr<SizingModel> SizingModel::FromDataDir(const std::string& data_dir,
                                                     cv1::GpuList gpus) {
  v1::ModelList models;
  RETURN_IF_ERROR(LoadTextProtoFile(data_dir + "/sizing/models.textproto", &models));
  ASSIGN_OR_RETURN(v1::SizingProfiles profiles,
                   LoadProfiles(data_dir + "/sizing/profiles.textproto",
                                data_dir + "/sizing/error_intervals.textproto",
                                data_dir + "/sizing/engine.textproto"));
  absl::StatusOr<SizingModel> model =
      Create(std::move(models), std::move(gpus), std::move(profiles));
  if (!model.ok()) {
    return absl::Status(
        model.status().code(),
        absl::StrCat(data_dir, "/sizing with the catalog's GPUs: ", model.status().message()));
  }
  return model;
}

absl::StatusOr<SizingModel> SizingModel::FromFiles(const std::string& models_path,
                                                   const std::string& gpus_path,
                                                   const std::string& profiles_path,
                                                   const std::string& error_intervals_path,
                                                   const std::string& engine_path) {
  v1::ModelList models;
  RETURN_IF_ERROR(LoadTextProtoFile(models_path, &models));
  cv1::GpuList gpus;
  RETURN_IF_ERROR(LoadTextProtoFile(gpus_path, &gpus));
  ASSIGN_OR_RETURN(v1::SizingProfiles profiles,
                   LoadProfiles(profiles_path, error_intervals_path, engine_path));
  absl::StatusOr<SizingModel> model =
      Create(std::move(models), std::move(gpus), std::move(profiles));
  if (!model.ok()) {
    return absl::Status(
        model.status().code(),
        absl::StrCat(models_path, " / ", gpus_path, profiles_path.empty() ? "" : " / ",
                     profiles_path, ": ", model.status().message()));
  }
  return model;
}

const GpuSpec* SizingModel::FindGpu(const std::string& name) const {
  auto it = data_->gpu_index.find(catalog::GpuNameResolver::Key(name));
  if (it == data_->gpu_index.end() && data_->gpu_names != nullptr) {
    if (std::optional<std::string> canonical = data_->gpu_names->Canonical(name)) {
      it = data_->gpu_index.find(catalog::GpuNameResolver::Key(*canonical));
    }
  }
  return it == data_->gpu_index.end() ? nullptr : &data_->gpus[it->second];
}

std::string SizingModel::ClosestPresets(absl::string_view name) const {
  std::vector<std::string> names;
  names.reserve(data_->presets.size());
  for (const ModelSpec& spec : data_->presets) names.push_back(spec.resolved.preset());
  return absl::StrJoin(validation::ClosestNames(name, names), ", ");
}

std::string SizingModel::ClosestGpus(absl::string_view name) const {
  std::vector<std::string> names;
  names.reserve(data_->gpus.size());
  for (const GpuSpec& gpu : data_->gpus) names.push_back(gpu.name);
  return absl::StrJoin(validation::ClosestNames(name, names), ", ");
}

v1::ListModelsResponse SizingModel::ListModels() const {
  v1::ListModelsResponse response;
  for (const ModelSpec& spec : data_->presets) *response.add_models() = spec.resolved;
  return response;
}

absl::StatusOr<v1::EstimateResponse> SizingModel::Estimate(
    const v1::EstimateRequest& request) const {
  RETURN_IF_ERROR(ValidateEstimateRequest(request));
  if (!data_->profiles.has_engine()) {
    return absl::FailedPreconditionError(
        "sizing data has no engine constants (data/sizing/engine.textproto): nothing can be "
        "estimated");
  }
  const v1::Workload& w = request.workload();

  // Resolve the model: a preset or a Hugging Face config.json with
  // overrides, or an explicit architecture.
  const v1::Model* preset = nullptr;
  v1::Model from_config;
  if (!w.model().hf_config_json().empty()) {
    ASSIGN_OR_RETURN(from_config, ModelFromHfConfig(w.model().hf_config_json(),
                                                    "workload.model.hf_config_json"));
    preset = &from_config;
  } else if (!w.model().preset().empty()) {
    auto it = data_->preset_index.find(absl::AsciiStrToLower(w.model().preset()));
    if (it == data_->preset_index.end()) {
      return absl::NotFoundError(absl::StrCat(
          "workload.model.preset: unknown preset \"", w.model().preset(),
          "\"; closest: ", ClosestPresets(w.model().preset()), " (ListModels lists them all)"));
    }
    preset = &data_->presets[it->second].resolved;
  }
  ModelSpec spec;
  if (preset != nullptr) {
    ASSIGN_OR_RETURN(spec, BuildModelSpec(WithOverrides(*preset, w.model()), "workload.model"));
  } else {
    ASSIGN_OR_RETURN(spec, BuildModelSpec(w.model(), "workload.model"));
  }

  // Every GPU must be known before any work is done.
  std::vector<const GpuSpec*> gpus(request.configurations_size());
  for (int i = 0; i < request.configurations_size(); ++i) {
    const std::string& name = request.configurations(i).gpu_model();
    gpus[i] = FindGpu(name);
    if (gpus[i] == nullptr) {
      return absl::NotFoundError(absl::StrCat("configurations[", i, "].gpu_model: unknown GPU \"",
                                              name, "\"; closest: ", ClosestGpus(name)));
    }
  }

  v1::EstimateResponse response;
  // The workload defaults sizing owns, applied to what the request left
  // unset and reported (EstimateResponse.applied_defaults).
  v1::Workload filled = w;
  std::vector<v1::AppliedDefault> applied;
  RETURN_IF_ERROR(ApplyWorkloadDefaults(filled, applied, WorkloadUse::kSize, spec.max_context));
  const double margin = request.has_vram_margin() ? request.vram_margin() : kDefaultVramMargin;
  ASSIGN_OR_RETURN(Job job, BuildJob(filled, spec, data_->profiles, margin,
                                     request.has_vram_margin(), response.mutable_totals()));
  AddDerivedDefaults(filled, job.total_tokens, applied);
  AddBatchDefault(job, filled, data_->profiles, applied);
  for (v1::AppliedDefault& a : applied) *response.add_applied_defaults() = std::move(a);
  job.model = &spec;
  if (!job.training) job.serve.slo = request.serving_slo();
  RETURN_IF_ERROR(CheckHintsDivideSomeConfiguration(job, request));
  response.mutable_estimates()->Reserve(request.configurations_size());
  for (int i = 0; i < request.configurations_size(); ++i) {
    v1::ConfigurationEstimate* out = response.add_estimates();
    *out->mutable_configuration() = request.configurations(i);
    EstimateConfiguration(job, *gpus[i], request.configurations(i), out);
  }
  *response.mutable_model() = std::move(spec.resolved);
  return response;
}

}  // namespace gpuadvisor::sizing
