#include "services/sizing/job.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "services/sizing/precision.h"
#include "services/sizing/profiles.h"

namespace gpuadvisor::sizing {

double QuantizedWeightBytes(const ModelSpec& m, v1::Precision p) {
  const double n = m.params;
  const double q = WeightBytesPerParam(p);
  if (!IsQuantized(p)) return n * q;
  const double sixteen_bit = std::min(m.embedding_params + m.lm_head_params, n);
  return (n - sixteen_bit) * q + sixteen_bit * 2.0;
}

namespace {

std::string Tokens(double n) { return absl::StrFormat("%.0f", n); }

// A context (serving: context_length, or prompt + output when it is not
// given; training: sequence_length) beyond the model's maximum is an error
// naming the field, unless the model's RoPE scaling extends it: then the
// estimate says so.
absl::Status CheckContextLength(const v1::Workload& w, const ModelSpec& m, Job* j) {
  if (m.max_context <= 0) return absl::OkStatus();
  std::string field = j->training ? "workload.sequence_length" : "workload.context_length";
  double asked = j->training ? w.sequence_length() : w.context_length();
  if (!j->training && asked <= 0) {
    asked = w.prompt_tokens() + w.output_tokens();
    field = "workload.prompt_tokens";
  }
  if (asked <= m.max_context) return absl::OkStatus();
  const double scaled = m.resolved.rope_scaled_max_context_length();
  if (scaled >= asked) {
    v1::Note& note = j->notes.emplace_back();
    note.set_code("rope_scaled_context");
    note.set_severity(v1::NOTE_SEVERITY_INFO);
    note.set_text(absl::StrCat(
        "Context of ", Tokens(asked), " tokens is beyond the model's native ",
        Tokens(m.max_context), " (max_context_length); its RoPE scaling (",
        m.resolved.rope_scaling().empty() ? "rope_scaled_max_context_length"
                                          : m.resolved.rope_scaling(),
        ") extends it to ", Tokens(scaled),
        " tokens. The engine must enable that scaling; quality at this length is the scaling's."));
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", Tokens(asked), " tokens exceeds the model's maximum context of ",
                   Tokens(m.max_context), " tokens (workload.model.max_context_length",
                   scaled > 0 ? absl::StrCat("; its RoPE scaling reaches ", Tokens(scaled)) : "",
                   "; a rope_scaling in the model's config.json, or "
                   "workload.model.rope_scaled_max_context_length, extends it)"));
}

}  // namespace

absl::StatusOr<Job> BuildJob(const v1::Workload& w, const ModelSpec& m, const Profiles& profiles,
                             double vram_margin, bool vram_margin_given,
                             v1::WorkloadTotals* totals) {
  Job j;
  j.model = &m;
  j.profiles = &profiles;
  j.engine = &profiles.engine();
  j.task = w.task();
  j.vram_margin = vram_margin;
  j.vram_margin_given = vram_margin_given;
  j.lora = j.task == v1::TASK_LORA || j.task == v1::TASK_QLORA;
  j.qlora = j.task == v1::TASK_QLORA;
  j.training = j.lora || j.task == v1::TASK_PRETRAIN || j.task == v1::TASK_FULL_FINETUNE;
  j.batch = j.task == v1::TASK_BATCH_INFERENCE;
  j.moe = m.routed_expert_params > 0;
  if (j.moe) {
    j.moe_layers = m.layers - m.resolved.dense_layers();
    j.train.moe_dispatch_elements_per_token = m.hidden * std::max(1, m.resolved.active_experts());
    j.train.expert_flops_fraction = std::min(
        1.0, m.routed_expert_params * m.active_expert_fraction / std::max(m.compute_params, 1.0));
  }
  j.precision = w.precision() == v1::PRECISION_UNSPECIFIED ? v1::PRECISION_BF16 : w.precision();

  const v1::JobKind kind = j.training ? v1::JOB_KIND_TRAINING : v1::JOB_KIND_SERVING;
  if (!w.framework().empty()) {
    j.framework = profiles.Find(w.framework());
    if (j.framework == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("workload.framework: unknown framework \"",
                                                     w.framework(),
                                                     "\" (one of: ", profiles.Names(kind), ")"));
    }
    if (j.framework->job() != kind) {
      return absl::InvalidArgumentError(
          absl::StrCat("workload.framework: \"", w.framework(), "\" is a ",
                       j.training ? "serving engine" : "training framework",
                       "; for this task use one of: ", profiles.Names(kind)));
    }
  } else {
    j.framework = &profiles.DefaultFor(j.task);
    v1::Note& note = j.notes.emplace_back();
    note.set_code("framework_assumed");
    note.set_severity(v1::NOTE_SEVERITY_INFO);
    note.set_text(absl::StrCat("Framework not given: the estimate assumes ",
                               j.framework->display_name(), " (\"", j.framework->name(),
                               "\"), the default for ", v1::Task_Name(j.task), "."));
  }

  const v1::Parallelism& par = w.parallelism();
  j.zero_hint = par.has_zero_stage_hint() ? par.zero_stage_hint()
                                          : (par.zero_stage() > 0 ? par.zero_stage() : -1);
  j.tp_hint = par.tensor_parallel();
  j.pp_hint = par.pipeline_parallel();
  j.ep_hint = par.has_expert_parallel() ? par.expert_parallel() : 0;
  if (j.ep_hint > 1 && !j.moe) {
    return absl::InvalidArgumentError(
        "workload.parallelism.expert_parallel: the model has no routed experts");
  }

  if (absl::Status c = CheckContextLength(w, m, &j); !c.ok()) return c;
  absl::Status s = j.training ? BuildTrainingJob(w, &j, totals) : BuildServingJob(w, &j, totals);
  if (!s.ok()) return s;
  totals->set_params(m.params);
  totals->set_trainable_params(j.train.TrainableParams());
  totals->set_total_tokens(j.total_tokens);
  return j;
}

}  // namespace gpuadvisor::sizing
