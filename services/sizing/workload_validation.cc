#include "services/sizing/workload_validation.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "services/sizing/model_spec.h"

namespace gpuadvisor::sizing {
namespace {

// Largest config.json accepted as text (real ones are 1-30 KB).
constexpr size_t kMaxHfConfigBytes = 1 << 20;

namespace v1 = ::gpuadvisor::sizing::v1;

absl::Status Invalid(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

// A finite, non-negative double no larger than `max`.
absl::Status CheckAmount(absl::string_view field, double value, double max) {
  if (!std::isfinite(value)) return Invalid(field, "must be finite");
  if (value < 0) return Invalid(field, "must be >= 0");
  if (value > max) return Invalid(field, absl::StrCat("must be <= ", max));
  return absl::OkStatus();
}

absl::Status CheckCount(absl::string_view field, int value, int max) {
  if (value < 0) return Invalid(field, "must be >= 0");
  if (value > max) return Invalid(field, absl::StrCat("must be <= ", max));
  return absl::OkStatus();
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

// The model's own numbers first: they are the most common mistake.
absl::Status CheckModel(const v1::Model& model) {
  for (const auto& [field, value] :
       {std::pair<const char*, double>{"workload.model.params", model.params()},
        {"workload.model.active_params", model.active_params()}}) {
    if (!std::isfinite(value)) return Invalid(field, "must be finite");
    if (value < 0) return Invalid(field, "must be > 0");
    if (value > kMaxParams) return Invalid(field, absl::StrCat("must be <= ", kMaxParams));
  }
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

// Amounts and counts: finite, non-negative, within a physical range.
absl::Status CheckSizes(const v1::Workload& w) {
  constexpr double kMaxTokens = 1e16;
  const std::pair<const char*, std::pair<double, double>> amounts[] = {
      {"workload.train_tokens", {w.train_tokens(), kMaxTokens}},
      {"workload.dataset_tokens", {w.dataset_tokens(), kMaxTokens}},
      {"workload.epochs", {w.epochs(), 1e6}},
      {"workload.requests", {w.requests(), 1e15}},
      {"workload.dataset_gb", {w.dataset_gb(), 1e9}},
      {"workload.checkpoint_interval_minutes", {w.checkpoint_interval_minutes(), 1e7}},
      {"workload.serving_hours", {w.serving_hours(), 1e6}},
  };
  for (const auto& [field, value] : amounts) {
    if (absl::Status s = CheckAmount(field, value.first, value.second); !s.ok()) return s;
  }
  const std::pair<const char*, std::pair<int, int>> counts[] = {
      {"workload.micro_batch_size", {w.micro_batch_size(), 1 << 16}},
      {"workload.global_batch_size", {w.global_batch_size(), 1 << 26}},
      {"workload.lora_rank", {w.lora_rank(), 1 << 16}},
      {"workload.context_length", {w.context_length(), 1 << 27}},
      {"workload.concurrent_sequences", {w.concurrent_sequences(), 1 << 20}},
      {"workload.output_tokens", {w.output_tokens(), 1 << 27}},
      {"workload.prompt_tokens", {w.prompt_tokens(), 1 << 27}},
  };
  for (const auto& [field, value] : counts) {
    if (absl::Status s = CheckCount(field, value.first, value.second); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckParallelism(const v1::Workload& w) {
  const v1::Parallelism& p = w.parallelism();
  if (p.zero_stage() < 0 || p.zero_stage() > 3) {
    return Invalid("workload.parallelism.zero_stage", "must be 0-3");
  }
  if (absl::Status s =
          CheckCount("workload.parallelism.tensor_parallel", p.tensor_parallel(), 1024);
      !s.ok())
    return s;
  if (absl::Status s =
          CheckCount("workload.parallelism.pipeline_parallel", p.pipeline_parallel(), 4096);
      !s.ok())
    return s;
  if (p.has_zero_stage_hint() && (p.zero_stage_hint() < 0 || p.zero_stage_hint() > 3)) {
    return Invalid("workload.parallelism.zero_stage_hint", "must be 0-3 (0 = plain DDP)");
  }
  if (p.has_expert_parallel() && (p.expert_parallel() < 1 || p.expert_parallel() > 65536)) {
    return Invalid("workload.parallelism.expert_parallel", "must be in [1, 65536]");
  }
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
    // 0 = the default (workload_defaults.h), stated in the answer.
    if (w.sequence_length() < 0) return Invalid("workload.sequence_length", "must be >= 0");
    if (w.sequence_length() > (1 << 24)) {
      return Invalid("workload.sequence_length", absl::StrCat("must be <= ", 1 << 24));
    }
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
  if (absl::Status s = CheckSizes(w); !s.ok()) return s;
  if (absl::Status s = CheckParallelism(w); !s.ok()) return s;
  if (absl::Status s = CheckLora(w); !s.ok()) return s;
  return CheckTaskFields(w);
}

}  // namespace

absl::Status ValidateEstimateRequest(const v1::EstimateRequest& request) {
  if (absl::Status s = ValidateWorkload(request.workload()); !s.ok()) return s;
  if (request.has_vram_margin()) {
    const double m = request.vram_margin();
    if (!std::isfinite(m) || m < 0 || m >= 0.9) {
      return Invalid("vram_margin", "must be in [0, 0.9)");
    }
  }
  // Any finite value >= 0 (0 = none): the gateway forwards its constraints,
  // which it checks the same way.
  const v1::ServingSlo& slo = request.serving_slo();
  for (auto [value, field] :
       {std::pair<double, const char*>{slo.max_time_to_first_token_seconds(),
                                       "serving_slo.max_time_to_first_token_seconds"},
        {slo.min_tokens_per_second_per_user(), "serving_slo.min_tokens_per_second_per_user"},
        {slo.min_tokens_per_second(), "serving_slo.min_tokens_per_second"}}) {
    if (absl::Status s = CheckAmount(field, value, std::numeric_limits<double>::max()); !s.ok())
      return s;
  }
  if (request.configurations().empty()) return Invalid("configurations", "must not be empty");
  if (request.configurations_size() > 10000) {
    return Invalid("configurations", "at most 10000 per request");
  }
  for (int i = 0; i < request.configurations_size(); ++i) {
    const auto& c = request.configurations(i);
    const std::string path = absl::StrCat("configurations[", i, "]");
    if (c.gpu_model().empty()) return Invalid(absl::StrCat(path, ".gpu_model"), "must be set");
    if (c.gpus_per_node() < 1 || c.gpus_per_node() > 1024) {
      return Invalid(absl::StrCat(path, ".gpus_per_node"), "must be in [1, 1024]");
    }
    if (c.nodes() < 1 || c.nodes() > 100000) {
      return Invalid(absl::StrCat(path, ".nodes"), "must be in [1, 100000]");
    }
    if (absl::Status s = CheckAmount(absl::StrCat(path, ".link_bytes_per_second"),
                                     c.link_bytes_per_second(), 1e15);
        !s.ok())
      return s;
    if (absl::Status s = CheckAmount(absl::StrCat(path, ".fabric_gbps"), c.fabric_gbps(), 1e7);
        !s.ok())
      return s;
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
