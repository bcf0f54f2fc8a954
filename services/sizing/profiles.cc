#include "services/sizing/profiles.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;

absl::Status Range(const std::string& path, const char* field, double value, double lo, double hi,
                   bool lo_open = true) {
  const bool ok = std::isfinite(value) && (lo_open ? value > lo : value >= lo) && value <= hi;
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(path, ".", field, ": must be in ", lo_open ? "(" : "[", lo, ", ", hi, "]"));
}

absl::Status CheckFramework(const v1::FrameworkProfile& f, const std::string& path) {
  if (f.name().empty()) return absl::InvalidArgumentError(absl::StrCat(path, ".name: must be set"));
  if (f.source().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".source: must be set"));
  }
  if (f.job() == v1::JOB_KIND_TRAINING) {
    if (auto s = Range(path, "training_efficiency", f.training_efficiency(), 0, 2); !s.ok())
      return s;
    if (auto s = Range(path, "lora_efficiency", f.lora_efficiency(), 0, 2); !s.ok()) return s;
    if (auto s = Range(path, "moe_efficiency", f.moe_efficiency(), 0, 2); !s.ok()) return s;
    if (f.max_zero_stage() < 0 || f.max_zero_stage() > 3) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".max_zero_stage: must be 0-3"));
    }
    if (auto s = Range(path, "qlora_dequant_bytes_per_param", f.qlora_dequant_bytes_per_param(), 0,
                       64, false);
        !s.ok()) {
      return s;
    }
    if (auto s = Range(path, "comm_overlap", f.comm_overlap(), 0, 0.95, false); !s.ok()) return s;
    if (auto s = Range(path, "fp8_efficiency", f.fp8_efficiency(), 0, 2, false); !s.ok()) return s;
    if (auto s =
            Range(path, "logits_bytes_per_element", f.logits_bytes_per_element(), 0, 64, false);
        !s.ok()) {
      return s;
    }
  } else if (f.job() == v1::JOB_KIND_SERVING) {
    if (auto s = Range(path, "gpu_memory_utilization", f.gpu_memory_utilization(), 0, 1); !s.ok())
      return s;
    if (auto s = Range(path, "decode_efficiency", f.decode_efficiency(), 0, 2); !s.ok()) return s;
    if (auto s = Range(path, "prefill_efficiency", f.prefill_efficiency(), 0, 2); !s.ok()) return s;
    if (f.max_batched_tokens() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".max_batched_tokens: must be > 0"));
    }
    if (auto s = Range(path, "cuda_graph_bytes", f.cuda_graph_bytes(), 0, 1e12, false); !s.ok())
      return s;
    if (f.max_num_seqs() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".max_num_seqs: must be >= 0"));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat(path, ".job: must be set"));
  }
  return Range(path, "workspace_bytes", f.workspace_bytes(), 0, 1e12, false);
}

v1::FrameworkProfile Neutral(v1::JobKind job) {
  v1::FrameworkProfile f;
  f.set_name(job == v1::JOB_KIND_TRAINING ? "generic-training" : "generic-serving");
  f.set_display_name("generic (no profile data)");
  f.set_job(job);
  f.set_training_efficiency(1.0);
  f.set_lora_efficiency(1.0);
  f.set_moe_efficiency(1.0);
  f.set_qlora_dequant_bytes_per_param(0.0);
  f.set_loss(v1::LOSS_HANDLING_FP32_UPCAST);
  f.set_workspace_bytes(536870912.0);
  f.set_gpu_memory_utilization(0.9);
  f.set_max_batched_tokens(4096);
  f.set_max_num_seqs(256);
  f.set_cuda_graph_bytes(0);
  f.set_decode_efficiency(1.0);
  f.set_prefill_efficiency(1.0);
  f.set_max_zero_stage(3);
  f.set_model_parallel(true);
  f.set_source("built-in neutral profile");
  return f;
}

// Measured error per quantity and framework class: ratios ordered and
// positive, a source and a method, one entry per (quantity, framework) and
// at most one catch-all entry per quantity.
absl::Status CheckErrorIntervals(const v1::SizingProfiles& data) {
  absl::flat_hash_set<std::string> keys;
  for (int i = 0; i < data.error_intervals_size(); ++i) {
    const v1::ErrorInterval& e = data.error_intervals(i);
    const std::string path = absl::StrCat("error_intervals[", i, "]");
    if (e.quantity() == v1::ERROR_QUANTITY_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".quantity: must be set"));
    }
    for (const auto& [field, value] : {std::pair<const char*, double>{"p10_ratio", e.p10_ratio()},
                                       {"p50_ratio", e.p50_ratio()},
                                       {"p90_ratio", e.p90_ratio()}}) {
      if (auto s = Range(path, field, value, 0, 100); !s.ok()) return s;
    }
    if (!(e.p10_ratio() <= e.p50_ratio() && e.p50_ratio() <= e.p90_ratio())) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": must have p10_ratio <= p50_ratio <= p90_ratio"));
    }
    if (e.source().empty() || e.method().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".source, .method: must be set"));
    }
    std::vector<std::string> frameworks(e.frameworks().begin(), e.frameworks().end());
    if (frameworks.empty()) frameworks.push_back("");
    for (const std::string& f : frameworks) {
      if (!keys.insert(absl::StrCat(e.quantity(), "/", absl::AsciiStrToLower(f))).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ".frameworks: another entry already covers \"", f, "\" for this quantity"));
      }
    }
  }
  return absl::OkStatus();
}

// Framework names unique (case-insensitive), at most one default per task,
// each default a task of the profile's job kind.
absl::Status CheckFrameworks(const v1::SizingProfiles& data) {
  absl::flat_hash_set<std::string> names;
  absl::flat_hash_set<int> defaults;
  for (int i = 0; i < data.frameworks_size(); ++i) {
    const v1::FrameworkProfile& f = data.frameworks(i);
    const std::string path = absl::StrCat("frameworks[", i, "]");
    if (auto s = CheckFramework(f, path); !s.ok()) return s;
    if (!names.insert(absl::AsciiStrToLower(f.name())).second) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".name: duplicate \"", f.name(), "\""));
    }
    for (int t : f.default_for()) {
      const bool serving_task = t == v1::TASK_INFERENCE || t == v1::TASK_BATCH_INFERENCE;
      if (serving_task != (f.job() == v1::JOB_KIND_SERVING)) {
        return absl::InvalidArgumentError(absl::StrCat(path, ".default_for: ", v1::Task_Name(t),
                                                       " is not a task of this job kind"));
      }
      if (!defaults.insert(t).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ".default_for: another profile is already the default of ", v1::Task_Name(t)));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckEfficiency(const v1::SizingProfiles& data) {
  for (int i = 0; i < data.efficiency_size(); ++i) {
    const v1::EfficiencyBase& e = data.efficiency(i);
    const std::string path = absl::StrCat("efficiency[", i, "]");
    if (e.vendor().empty())
      return absl::InvalidArgumentError(absl::StrCat(path, ".vendor: must be set"));
    if (auto s = Range(path, "training", e.training(), 0, 1); !s.ok()) return s;
    if (auto s = Range(path, "decode_bandwidth", e.decode_bandwidth(), 0, 1); !s.ok()) return s;
    if (auto s = Range(path, "fp8_training", e.fp8_training(), 0, 1, false); !s.ok()) return s;
    if (e.source().empty())
      return absl::InvalidArgumentError(absl::StrCat(path, ".source: must be set"));
    // A measured base rests on two independent publications at least.
    const absl::flat_hash_set<std::string> sources(e.sources().begin(), e.sources().end());
    if (!e.not_measured() && sources.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          path,
          ".sources: a measured efficiency base needs at least two independent published "
          "measurements (or not_measured: true with a stated conservative default)"));
    }
  }
  return absl::OkStatus();
}

// Hazards need a code, a text and a source, and unique codes.
absl::Status CheckHazards(const v1::SizingProfiles& data) {
  absl::flat_hash_set<std::string> codes;
  for (int i = 0; i < data.hazards_size(); ++i) {
    const v1::Hazard& h = data.hazards(i);
    const std::string path = absl::StrCat("hazards[", i, "]");
    for (const auto& [field, value] :
         {std::pair<const char*, const std::string*>{"code", &h.code()},
          {"text", &h.text()},
          {"source", &h.source()}}) {
      if (value->empty())
        return absl::InvalidArgumentError(absl::StrCat(path, ".", field, ": must be set"));
    }
    if (!codes.insert(h.code()).second) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".code: duplicate \"", h.code(), "\""));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckGoodput(const v1::GoodputModel& g) {
  if (auto s = Range("goodput", "interruptions_per_gpu_hour", g.interruptions_per_gpu_hour(), 0, 1,
                     false);
      !s.ok())
    return s;
  if (auto s = Range("goodput", "restart_minutes", g.restart_minutes(), 0, 10000, false); !s.ok())
    return s;
  return Range("goodput", "default_checkpoint_interval_minutes",
               g.default_checkpoint_interval_minutes(), 0, 100000, false);
}

absl::Status CheckBatchDefaults(const v1::SizingProfiles& data) {
  absl::flat_hash_set<int> batch_tasks;
  for (int i = 0; i < data.batch_defaults_size(); ++i) {
    const v1::BatchDefault& d = data.batch_defaults(i);
    const std::string path = absl::StrCat("batch_defaults[", i, "]");
    if (auto s = Range(path, "tokens", d.tokens(), 0, 1e9); !s.ok()) return s;
    if (d.source().empty() || d.tasks().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".tasks, .source: must be set"));
    }
    for (int t : d.tasks()) {
      if (!batch_tasks.insert(t).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ".tasks: ", v1::Task_Name(t), " already has a default"));
      }
    }
  }
  return absl::OkStatus();
}

// Every number of a constants group: set, positive and finite; the ones
// named in `fractions` also at most 1. And a source.
absl::Status CheckConstants(const google::protobuf::Message& m, const std::string& path,
                            std::initializer_list<absl::string_view> fractions) {
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  const google::protobuf::Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_STRING &&
        f->name() == "source") {
      if (r->GetString(m, f).empty()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ".source: must be set"));
      }
      continue;
    }
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) continue;
    const bool fraction =
        std::find(fractions.begin(), fractions.end(), f->name()) != fractions.end();
    const std::string name(f->name());
    if (auto s = Range(path, name.c_str(), r->GetDouble(m, f), 0, fraction ? 1.0 : 1e18); !s.ok())
      return s;
  }
  return absl::OkStatus();
}

absl::Status CheckEngine(const v1::SizingProfiles& data) {
  if (!data.has_engine()) return absl::OkStatus();
  const v1::EngineConstants& e = data.engine();
  if (e.taken().empty()) return absl::InvalidArgumentError("engine.taken: must be set");
  if (auto s = CheckConstants(
          e.links(), "engine.links",
          {"scale_up_bus_efficiency", "pcie_bus_efficiency", "pcie_no_p2p_bus_efficiency",
           "fabric_bus_efficiency", "host_link_efficiency"});
      !s.ok())
    return s;
  if (auto s = CheckConstants(e.memory(), "engine.memory", {}); !s.ok()) return s;
  if (auto s = CheckConstants(
          e.kernels(), "engine.kernels",
          {"decode_gemm_efficiency", "dp_overlap_window", "dp_never_hidden",
           "activation_offload_overlap", "balance_floor", "default_training_efficiency",
           "default_decode_bandwidth", "default_fp8_training"});
      !s.ok())
    return s;
  if (auto s = Range("engine", "bf16_bandwidth_fraction", e.bf16_bandwidth_fraction(), 0, 1);
      !s.ok())
    return s;
  for (int i = 0; i < e.precision_bandwidth_size(); ++i) {
    const std::string path = absl::StrCat("engine.precision_bandwidth[", i, "]");
    if (auto s = CheckConstants(e.precision_bandwidth(i), path, {"bandwidth_fraction"}); !s.ok())
      return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Profiles> Profiles::Build(v1::SizingProfiles data) {
  if (auto s = CheckFrameworks(data); !s.ok()) return s;
  if (auto s = CheckEfficiency(data); !s.ok()) return s;
  if (auto s = CheckHazards(data); !s.ok()) return s;
  if (auto s = CheckGoodput(data.goodput()); !s.ok()) return s;
  if (auto s = CheckErrorIntervals(data); !s.ok()) return s;
  if (auto s = CheckBatchDefaults(data); !s.ok()) return s;
  if (auto s = CheckEngine(data); !s.ok()) return s;
  Profiles p;
  p.data_ = std::move(data);
  p.neutral_training_ = Neutral(v1::JOB_KIND_TRAINING);
  p.neutral_serving_ = Neutral(v1::JOB_KIND_SERVING);
  return p;
}

const v1::FrameworkProfile* Profiles::Find(const std::string& name) const {
  const std::string key = absl::AsciiStrToLower(name);
  for (const v1::FrameworkProfile& f : data_.frameworks()) {
    if (absl::AsciiStrToLower(f.name()) == key) return &f;
  }
  return nullptr;
}

const v1::FrameworkProfile& Profiles::DefaultFor(v1::Task task) const {
  for (const v1::FrameworkProfile& f : data_.frameworks()) {
    for (int t : f.default_for()) {
      if (t == task) return f;
    }
  }
  const bool serving = task == v1::TASK_INFERENCE || task == v1::TASK_BATCH_INFERENCE;
  return serving ? neutral_serving_ : neutral_training_;
}

std::vector<const v1::Hazard*> Profiles::HazardsFor(v1::Task task, const std::string& vendor,
                                                    v1::Precision precision,
                                                    const std::string& framework) const {
  std::vector<const v1::Hazard*> out;
  for (const v1::Hazard& h : data_.hazards()) {
    if (!h.tasks().empty() &&
        std::find(h.tasks().begin(), h.tasks().end(), task) == h.tasks().end())
      continue;
    if (!h.vendor().empty() && !absl::EqualsIgnoreCase(h.vendor(), vendor)) continue;
    if (!h.precisions().empty() && std::find(h.precisions().begin(), h.precisions().end(),
                                             precision) == h.precisions().end()) {
      continue;
    }
    if (!framework.empty() && !h.frameworks().empty() &&
        std::none_of(h.frameworks().begin(), h.frameworks().end(),
                     [&](const std::string& f) { return absl::EqualsIgnoreCase(f, framework); })) {
      continue;
    }
    out.push_back(&h);
  }
  return out;
}

const v1::EfficiencyBase* Profiles::Efficiency(const std::string& vendor,
                                               const std::string& architecture) const {
  const v1::EfficiencyBase* any = nullptr;
  for (const v1::EfficiencyBase& e : data_.efficiency()) {
    if (!absl::EqualsIgnoreCase(e.vendor(), vendor)) continue;
    if (e.architecture().empty()) {
      if (any == nullptr) any = &e;
    } else if (absl::EqualsIgnoreCase(e.architecture(), architecture)) {
      return &e;
    }
  }
  return any;
}

const v1::ErrorInterval* Profiles::ErrorIntervalFor(v1::ErrorQuantity quantity,
                                                    const std::string& framework) const {
  const v1::ErrorInterval* any = nullptr;
  for (const v1::ErrorInterval& e : data_.error_intervals()) {
    if (e.quantity() != quantity) continue;
    if (e.frameworks().empty()) {
      any = &e;
      continue;
    }
    for (const std::string& f : e.frameworks()) {
      if (absl::EqualsIgnoreCase(f, framework)) return &e;
    }
  }
  return any;
}

const v1::BatchDefault* Profiles::BatchDefaultFor(v1::Task task) const {
  for (const v1::BatchDefault& d : data_.batch_defaults()) {
    if (std::find(d.tasks().begin(), d.tasks().end(), task) != d.tasks().end()) return &d;
  }
  return nullptr;
}

std::string Profiles::Names(v1::JobKind job) const {
  std::vector<std::string> names;
  for (const v1::FrameworkProfile& f : data_.frameworks()) {
    if (f.job() == job) names.push_back(f.name());
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace gpuadvisor::sizing
