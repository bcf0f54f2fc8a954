#include "services/sizing/workload_validation.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/validation/field_ranges.h"
#include "services/sizing/model_spec.h"

namespace gpuadvisor::sizing {
namespace {

// Largest config.json accepted as text (real ones are 1-30 KB).
constexpr size_t kMaxHfConfigBytes = 1 << 20;

namespace v1 = ::gpuadvisor::sizing::v1;

absl::Status Invalid(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

bool IsTraining(v1::Task task) {
  return task == v1::TASK_PRETRAIN || task == v1::TASK_FULL_FINETUNE || task == v1::TASK_LORA ||
         task == v1::TASK_QLORA;
}

bool KnownLoraModule(const std::string& name) {
  absl::string_view n = name;
  if (n.size() > 5 && n.substr(n.size() - 5) == "_proj") n.remove_suffix(5);
  return n == "q" || n == "k" || n == "v" || n == "o" || n == "gate" || n == "up" || n == "down";
}

absl::Status CheckEnums(const v1::Workload& w) {
  if (w.task() == v1::TASK_UNSPECIFIED) return Invalid("workload.task", "must be set");
  if (!v1::Task_IsValid(w.task())) return Invalid("workload.task", "unknown value");
  if (!v1::Precision_IsValid(w.precision())) return Invalid("workload.precision", "unknown value");
  if (!v1::Precision_IsValid(w.kv_cache_precision())) {
    return Invalid("workload.kv_cache_precision", "unknown value");
  }
  if (!v1::Optimizer_IsValid(w.optimizer())) return Invalid("workload.optimizer", "unknown value");
  if (!v1::GradientCheckpointing_IsValid(w.gradient_checkpointing())) {
    return Invalid("workload.gradient_checkpointing", "unknown value");
  }
  return absl::OkStatus();
}

// What a model needs besides its numbers' ranges: one way to name it.
absl::Status CheckModel(const v1::Model& model) {
  if (!model.hf_config_json().empty()) {
    if (!model.preset().empty()) {
      return Invalid("workload.model.hf_config_json", "give a preset or a config.json, not both");
    }
    if (model.hf_config_json().size() > kMaxHfConfigBytes) {
      return Invalid("workload.model.hf_config_json",
                     absl::StrCat("must be at most ", kMaxHfConfigBytes, " bytes"));
    }
  } else if (model.preset().empty() && model.params() == 0 && model.layers() == 0 &&
             model.hidden_size() == 0) {
    return Invalid("workload.model",
                   "needs a preset, a hf_config_json or an architecture (params or layers)");
  }
  if (!v1::ModelKind_IsValid(model.kind())) {
    return Invalid("workload.model.kind", "unknown value");
  }
  return absl::OkStatus();
}

absl::Status CheckParallelism(const v1::Workload& w) {
  const v1::Parallelism& p = w.parallelism();
  if (w.framework().size() > 64) return Invalid("workload.framework", "at most 64 characters");
  if (!v1::LossHandling_IsValid(w.loss())) return Invalid("workload.loss", "unknown value");
  if (!v1::Offload_IsValid(p.offload())) {
    return Invalid("workload.parallelism.offload", "unknown value");
  }
  return absl::OkStatus();
}

absl::Status CheckLora(const v1::Workload& w) {
  for (int i = 0; i < w.lora_target_modules_size(); ++i) {
    if (!KnownLoraModule(w.lora_target_modules(i))) {
      return Invalid(absl::StrCat("workload.lora_target_modules[", i, "]"),
                     absl::StrCat("unknown module \"", w.lora_target_modules(i),
                                  "\" (use q, k, v, o, gate, up, down)"));
    }
  }
  const bool lora = w.task() == v1::TASK_LORA || w.task() == v1::TASK_QLORA;
  if (!lora && w.lora_rank() > 0) {
    return Invalid("workload.lora_rank", "only valid for TASK_LORA and TASK_QLORA");
  }
  if (!lora && w.lora_target_modules_size() > 0) {
    return Invalid("workload.lora_target_modules", "only valid for TASK_LORA and TASK_QLORA");
  }
  return absl::OkStatus();
}

// What the task needs of the sequence fields and the precision.
absl::Status CheckTaskFields(const v1::Workload& w) {
  if (IsTraining(w.task())) {
    // 0 = the default (workload_defaults.h), stated in the answer; the
    // range (<= 1 << 24) is the shared table's.
    if (w.sequence_length() < 0) return Invalid("workload.sequence_length", "must be >= 0");
    const bool full = w.task() == v1::TASK_PRETRAIN || w.task() == v1::TASK_FULL_FINETUNE;
    const v1::Precision prec = w.precision();
    if (full &&
        (prec == v1::PRECISION_INT8 || prec == v1::PRECISION_INT4 || prec == v1::PRECISION_NF4)) {
      return Invalid("workload.precision",
                     "integer/NF4 weights cannot be trained in full; use TASK_QLORA or BF16");
    }
    return absl::OkStatus();
  }
  if (w.sequence_length() < 0) return Invalid("workload.sequence_length", "must be >= 0");
  if (w.context_length() > 0 && w.output_tokens() >= w.context_length()) {
    return Invalid("workload.output_tokens", "must be < context_length");
  }
  if (w.context_length() > 0 && w.prompt_tokens() + w.output_tokens() > w.context_length()) {
    return Invalid("workload.prompt_tokens",
                   "prompt_tokens + output_tokens must be <= context_length");
  }
  return absl::OkStatus();
}

absl::Status ValidateWorkload(const v1::Workload& w) {
  if (absl::Status s = CheckEnums(w); !s.ok()) return s;
  if (absl::Status s = CheckModel(w.model()); !s.ok()) return s;
  if (absl::Status s = CheckParallelism(w); !s.ok()) return s;
  if (absl::Status s = CheckLora(w); !s.ok()) return s;
  return CheckTaskFields(w);
}

}  // namespace

absl::Status ValidateEstimateRequest(const v1::EstimateRequest& request) {
  // Every number's physical range (the workload's, the SLO's, each
  // configuration's), from the table all services share.
  if (absl::Status s = validation::CheckRanges(request); !s.ok()) return s;
  if (absl::Status s = ValidateWorkload(request.workload()); !s.ok()) return s;
  if (request.configurations().empty()) return Invalid("configurations", "must not be empty");
  if (request.configurations_size() > 10000) {
    return Invalid("configurations", "at most 10000 per request");
  }
  for (int i = 0; i < request.configurations_size(); ++i) {
    const auto& c = request.configurations(i);
    const std::string path = absl::StrCat("configurations[", i, "]");
    if (c.gpu_model().empty()) return Invalid(absl::StrCat(path, ".gpu_model"), "must be set");
    if (!catalog::v1::LinkType_IsValid(c.link())) {
      return Invalid(absl::StrCat(path, ".link"), "unknown value");
    }
    if (!catalog::v1::FabricType_IsValid(c.fabric())) {
      return Invalid(absl::StrCat(path, ".fabric"), "unknown value");
    }
  }
  return absl::OkStatus();
}

}  // namespace gpuadvisor::sizing
