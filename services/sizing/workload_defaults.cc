#include "services/sizing/workload_defaults.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuadvisor::sizing {
namespace {

using v1::Task;

bool IsTraining(Task task) {
  return task == v1::TASK_PRETRAIN || task == v1::TASK_FULL_FINETUNE || task == v1::TASK_LORA ||
         task == v1::TASK_QLORA;
}

std::string Tokens(double tokens) {
  if (tokens >= 1e12) return absl::StrFormat("%.3gT", tokens / 1e12);
  if (tokens >= 1e9) return absl::StrFormat("%.3gB", tokens / 1e9);
  if (tokens >= 1e6) return absl::StrFormat("%.3gM", tokens / 1e6);
  return absl::StrFormat("%.0f", tokens);
}

}  // namespace

v1::AppliedDefault MakeAppliedDefault(std::string field, std::string value, std::string reason) {
  v1::AppliedDefault a;
  a.set_field(std::move(field));
  a.set_value(std::move(value));
  a.set_reason(std::move(reason));
  return a;
}

namespace {

// Training: the job's length, epochs, sequence, batch, optimizer, rank.
absl::Status TrainingDefaults(v1::Workload& w, std::vector<v1::AppliedDefault>& out,
                              WorkloadUse use, double max_context) {
  const Task task = w.task();
  const std::string task_name = v1::Task_Name(task);
  // A negative amount is a wrong value, not a missing one.
  for (const auto& [field, value] :
       {std::pair<const char*, double>{"workload.train_tokens", w.train_tokens()},
        {"workload.dataset_tokens", w.dataset_tokens()},
        {"workload.dataset_gb", w.dataset_gb()}}) {
    if (!(value >= 0))
      return absl::InvalidArgumentError(absl::StrCat(field, ": must be finite and >= 0"));
  }
  // The job's length: without it a training job costs nothing. Pretraining
  // alone has a recognised default (compute-optimal tokens, stated after
  // sizing); dataset_gb is converted by sizing (stated after sizing).
  if (w.train_tokens() <= 0 && w.dataset_tokens() <= 0 && w.dataset_gb() <= 0 &&
      task != v1::TASK_PRETRAIN) {
    if (use == WorkloadUse::kPrice) {
      return absl::InvalidArgumentError(absl::StrCat(
          "workload.train_tokens: required for ", task_name,
          " (or workload.dataset_tokens with workload.epochs, or workload.dataset_gb): "
          "without a token count the job has no length"));
    }
    out.push_back(MakeAppliedDefault(
        "workload.train_tokens", "none",
        "no token count: estimated_hours is 0; memory and plan do not depend on it"));
  }
  if (w.train_tokens() <= 0 && (w.dataset_tokens() > 0 || w.dataset_gb() > 0) && w.epochs() <= 0) {
    w.set_epochs(1);
    out.push_back(MakeAppliedDefault("workload.epochs", "1", "one pass over the dataset"));
  }
  if (w.sequence_length() == 0) {
    // No longer than the model's own maximum when it is known.
    const int seq = max_context > 0 && max_context < kDefaultTrainSequenceLength
                        ? static_cast<int>(max_context)
                        : kDefaultTrainSequenceLength;
    w.set_sequence_length(seq);
    out.push_back(MakeAppliedDefault("workload.sequence_length", absl::StrCat(seq),
                                     "default training sequence length (tokens per sample)"));
  }
  if (w.micro_batch_size() == 0) {
    w.set_micro_batch_size(1);
    out.push_back(
        MakeAppliedDefault("workload.micro_batch_size", "1", "sequences per GPU per step"));
  }
  if (w.optimizer() == v1::OPTIMIZER_UNSPECIFIED) {
    w.set_optimizer(v1::OPTIMIZER_ADAMW);
    out.push_back(MakeAppliedDefault("workload.optimizer", "OPTIMIZER_ADAMW", "default optimizer"));
  }
  const bool lora = task == v1::TASK_LORA || task == v1::TASK_QLORA;
  if (lora && w.lora_rank() == 0) {
    const int rank = task == v1::TASK_QLORA ? kDefaultQloraRank : kDefaultLoraRank;
    w.set_lora_rank(rank);
    out.push_back(
        MakeAppliedDefault("workload.lora_rank", absl::StrCat(rank),
                           task == v1::TASK_QLORA ? "QLoRA paper's rank" : "common LoRA rank"));
  }
  return absl::OkStatus();
}

// Serving: context, output and prompt lengths.
void SequenceDefaults(v1::Workload& w, std::vector<v1::AppliedDefault>& out, double max_context) {
  if (w.context_length() == 0) {
    int context = kDefaultContextLength;
    // No longer than the model's own maximum when it is known.
    if (max_context > 0 && max_context < context) context = static_cast<int>(max_context);
    // Keep the caller's own prompt/output lengths consistent with the default.
    if (w.prompt_tokens() + w.output_tokens() > context)
      context = w.prompt_tokens() + w.output_tokens();
    if (w.output_tokens() >= context) context = w.output_tokens() + 1;
    // The caller's own lengths exceed the model: no default, the estimate
    // names the field they set.
    if (max_context > 0 && context > max_context) return;
    w.set_context_length(context);
    out.push_back(MakeAppliedDefault("workload.context_length", absl::StrCat(context),
                                     "default context per sequence (prompt + output tokens)"));
  }
  if (w.output_tokens() == 0) {
    const int output = std::min(kDefaultOutputTokens, w.context_length() / 2);
    w.set_output_tokens(output);
    out.push_back(MakeAppliedDefault("workload.output_tokens", absl::StrCat(output),
                                     "default output per request"));
  }
  if (w.prompt_tokens() == 0) {
    out.push_back(MakeAppliedDefault("workload.prompt_tokens",
                                     absl::StrCat(w.context_length() - w.output_tokens()),
                                     "context_length - output_tokens"));
  }
}

// Serving: the job's length, sequences, concurrency, hours, restarts.
absl::Status ServingDefaults(v1::Workload& w, std::vector<v1::AppliedDefault>& out, WorkloadUse use,
                             double max_context) {
  const Task task = w.task();
  if (task == v1::TASK_BATCH_INFERENCE && w.requests() <= 0) {
    if (use == WorkloadUse::kPrice) {
      return absl::InvalidArgumentError(
          "workload.requests: required (> 0) for TASK_BATCH_INFERENCE: without it the job has no "
          "length");
    }
    out.push_back(MakeAppliedDefault(
        "workload.requests", "none",
        "no request count: estimated_hours is 0; memory and plan do not depend on it"));
  }
  SequenceDefaults(w, out, max_context);
  if (task == v1::TASK_INFERENCE) {
    if (w.concurrent_sequences() == 0) {
      w.set_concurrent_sequences(1);
      out.push_back(MakeAppliedDefault("workload.concurrent_sequences", "1", "one user at a time"));
    }
    if (w.serving_hours() == 0) {
      w.set_serving_hours(kDefaultServingHours);
      out.push_back(MakeAppliedDefault("workload.serving_hours",
                                       absl::StrFormat("%.0f", kDefaultServingHours),
                                       "an always-on endpoint priced for a 30-day month"));
    }
    return absl::OkStatus();
  }
  if (w.concurrent_sequences() == 0) {
    out.push_back(
        MakeAppliedDefault("workload.concurrent_sequences", "as many as fit",
                           "batch size chosen per GPU configuration from the free memory"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyWorkloadDefaults(v1::Workload& w, std::vector<v1::AppliedDefault>& out,
                                   WorkloadUse use, double max_context) {
  const Task task = w.task();
  if (task == v1::TASK_UNSPECIFIED) return absl::InvalidArgumentError("workload.task: required");
  if (!v1::Task_IsValid(task)) return absl::InvalidArgumentError("workload.task: unknown value");
  if (w.precision() == v1::PRECISION_UNSPECIFIED) {
    w.set_precision(v1::PRECISION_BF16);
    out.push_back(MakeAppliedDefault("workload.precision", "PRECISION_BF16", "default precision"));
  }
  return IsTraining(task) ? TrainingDefaults(w, out, use, max_context)
                          : ServingDefaults(w, out, use, max_context);
}

void AddDerivedDefaults(const v1::Workload& w, double tokens,
                        std::vector<v1::AppliedDefault>& out) {
  if (!IsTraining(w.task()) || w.train_tokens() > 0 || tokens <= 0) return;
  if (w.dataset_tokens() > 0) {
    out.push_back(
        MakeAppliedDefault("workload.train_tokens", Tokens(tokens), "dataset_tokens x epochs"));
  } else if (w.dataset_gb() > 0) {
    out.push_back(
        MakeAppliedDefault("workload.train_tokens", Tokens(tokens),
                           "from dataset_gb at about 4 bytes of text per token, x epochs"));
  } else if (w.task() == v1::TASK_PRETRAIN) {
    out.push_back(
        MakeAppliedDefault("workload.train_tokens", Tokens(tokens),
                           "compute-optimal 20 tokens per parameter (Hoffmann et al. 2022)"));
  }
}

}  // namespace gpuadvisor::sizing
