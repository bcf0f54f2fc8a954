#include "services/gateway/workload_defaults.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuadvisor::gateway {
namespace {

using sizing::v1::Task;

bool IsTraining(Task task) {
  return task == sizing::v1::TASK_PRETRAIN || task == sizing::v1::TASK_FULL_FINETUNE ||
         task == sizing::v1::TASK_LORA || task == sizing::v1::TASK_QLORA;
}

std::string Tokens(double tokens) {
  if (tokens >= 1e12) return absl::StrFormat("%.3gT", tokens / 1e12);
  if (tokens >= 1e9) return absl::StrFormat("%.3gB", tokens / 1e9);
  if (tokens >= 1e6) return absl::StrFormat("%.3gM", tokens / 1e6);
  return absl::StrFormat("%.0f", tokens);
}

}  // namespace

v1::Assumption MakeAssumption(std::string field, std::string value, std::string note) {
  v1::Assumption a;
  a.set_field(std::move(field));
  a.set_value(std::move(value));
  a.set_note(std::move(note));
  return a;
}

namespace {

// Training: the job's length, epochs, sequence, batch, optimizer, rank.
absl::Status TrainingDefaults(sizing::v1::Workload& w, std::vector<v1::Assumption>& out,
                              WorkloadUse use) {
  const Task task = w.task();
  const std::string task_name = sizing::v1::Task_Name(task);
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
      task != sizing::v1::TASK_PRETRAIN) {
    if (use == WorkloadUse::kPrice) {
      return absl::InvalidArgumentError(absl::StrCat(
          "workload.train_tokens: required for ", task_name,
          " (or workload.dataset_tokens with workload.epochs, or workload.dataset_gb): "
          "without a token count the job has no length"));
    }
    out.push_back(MakeAssumption(
        "workload.train_tokens", "none",
        "no token count: estimated_hours is 0; memory and plan do not depend on it"));
  }
  if (w.train_tokens() <= 0 && (w.dataset_tokens() > 0 || w.dataset_gb() > 0) && w.epochs() <= 0) {
    w.set_epochs(1);
    out.push_back(MakeAssumption("workload.epochs", "1", "one pass over the dataset"));
  }
  if (w.sequence_length() == 0) {
    w.set_sequence_length(kDefaultTrainSequenceLength);
    out.push_back(MakeAssumption("workload.sequence_length",
                                 absl::StrCat(kDefaultTrainSequenceLength),
                                 "default training sequence length (tokens per sample)"));
  }
  if (w.micro_batch_size() == 0) {
    w.set_micro_batch_size(1);
    out.push_back(MakeAssumption("workload.micro_batch_size", "1", "sequences per GPU per step"));
  }
  if (w.optimizer() == sizing::v1::OPTIMIZER_UNSPECIFIED) {
    w.set_optimizer(sizing::v1::OPTIMIZER_ADAMW);
    out.push_back(MakeAssumption("workload.optimizer", "OPTIMIZER_ADAMW", "default optimizer"));
  }
  const bool lora = task == sizing::v1::TASK_LORA || task == sizing::v1::TASK_QLORA;
  if (lora && w.lora_rank() == 0) {
    const int rank = task == sizing::v1::TASK_QLORA ? kDefaultQloraRank : kDefaultLoraRank;
    w.set_lora_rank(rank);
    out.push_back(
        MakeAssumption("workload.lora_rank", absl::StrCat(rank),
                       task == sizing::v1::TASK_QLORA ? "QLoRA paper's rank" : "common LoRA rank"));
  }
  if (!w.has_restartable()) {
    out.push_back(MakeAssumption("workload.restartable", "true",
                                 "training resumes from its last checkpoint after a preemption"));
  }
  return absl::OkStatus();
}

// Serving: context, output and prompt lengths.
void SequenceDefaults(sizing::v1::Workload& w, std::vector<v1::Assumption>& out) {
  if (w.context_length() == 0) {
    int context = kDefaultContextLength;
    // Keep the caller's own prompt/output lengths consistent with the default.
    if (w.prompt_tokens() + w.output_tokens() > context)
      context = w.prompt_tokens() + w.output_tokens();
    if (w.output_tokens() >= context) context = w.output_tokens() + 1;
    w.set_context_length(context);
    out.push_back(MakeAssumption("workload.context_length", absl::StrCat(context),
                                 "default context per sequence (prompt + output tokens)"));
  }
  if (w.output_tokens() == 0) {
    const int output = std::min(kDefaultOutputTokens, w.context_length() / 2);
    w.set_output_tokens(output);
    out.push_back(MakeAssumption("workload.output_tokens", absl::StrCat(output),
                                 "default output per request"));
  }
  if (w.prompt_tokens() == 0) {
    out.push_back(MakeAssumption("workload.prompt_tokens",
                                 absl::StrCat(w.context_length() - w.output_tokens()),
                                 "context_length - output_tokens"));
  }
}

// Serving: the job's length, sequences, concurrency, hours, restarts.
absl::Status ServingDefaults(sizing::v1::Workload& w, std::vector<v1::Assumption>& out,
                             WorkloadUse use) {
  const Task task = w.task();
  if (task == sizing::v1::TASK_BATCH_INFERENCE && w.requests() <= 0) {
    if (use == WorkloadUse::kPrice) {
      return absl::InvalidArgumentError(
          "workload.requests: required (> 0) for TASK_BATCH_INFERENCE: without it the job has no "
          "length");
    }
    out.push_back(MakeAssumption(
        "workload.requests", "none",
        "no request count: estimated_hours is 0; memory and plan do not depend on it"));
  }
  SequenceDefaults(w, out);
  if (task == sizing::v1::TASK_INFERENCE) {
    if (w.concurrent_sequences() == 0) {
      w.set_concurrent_sequences(1);
      out.push_back(MakeAssumption("workload.concurrent_sequences", "1", "one user at a time"));
    }
    if (w.serving_hours() == 0) {
      w.set_serving_hours(kDefaultServingHours);
      out.push_back(MakeAssumption("workload.serving_hours",
                                   absl::StrFormat("%.0f", kDefaultServingHours),
                                   "an always-on endpoint priced for a 30-day month"));
    }
    if (!w.has_restartable()) {
      out.push_back(MakeAssumption("workload.restartable", "false",
                                   "an endpoint cannot pause: a preemption drops its traffic"));
    }
    return absl::OkStatus();
  }
  if (w.concurrent_sequences() == 0) {
    out.push_back(MakeAssumption("workload.concurrent_sequences", "as many as fit",
                                 "batch size chosen per GPU configuration from the free memory"));
  }
  if (!w.has_restartable()) {
    out.push_back(MakeAssumption("workload.restartable", "true",
                                 "a batch job resumes with the requests not yet done"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyWorkloadDefaults(sizing::v1::Workload& w, std::vector<v1::Assumption>& out,
                                   WorkloadUse use) {
  const Task task = w.task();
  if (task == sizing::v1::TASK_UNSPECIFIED)
    return absl::InvalidArgumentError("workload.task: required");
  if (!sizing::v1::Task_IsValid(task))
    return absl::InvalidArgumentError("workload.task: unknown value");
  if (w.precision() == sizing::v1::PRECISION_UNSPECIFIED) {
    w.set_precision(sizing::v1::PRECISION_BF16);
    out.push_back(MakeAssumption("workload.precision", "PRECISION_BF16", "default precision"));
  }
  return IsTraining(task) ? TrainingDefaults(w, out, use) : ServingDefaults(w, out, use);
}

void AddSizedAssumptions(const sizing::v1::Workload& w, const sizing::v1::EstimateResponse& sized,
                         std::vector<v1::Assumption>& out) {
  const double tokens = sized.totals().total_tokens();
  if (IsTraining(w.task()) && w.train_tokens() <= 0 && tokens > 0) {
    if (w.dataset_tokens() > 0) {
      out.push_back(
          MakeAssumption("workload.train_tokens", Tokens(tokens), "dataset_tokens x epochs"));
    } else if (w.dataset_gb() > 0) {
      out.push_back(MakeAssumption("workload.train_tokens", Tokens(tokens),
                                   "from dataset_gb at about 4 bytes of text per token, x epochs"));
    } else if (w.task() == sizing::v1::TASK_PRETRAIN) {
      out.push_back(
          MakeAssumption("workload.train_tokens", Tokens(tokens),
                         "compute-optimal 20 tokens per parameter (Hoffmann et al. 2022)"));
    }
  }
  const int max_context = sized.model().max_context_length();
  const bool context_defaulted = std::any_of(out.begin(), out.end(), [](const v1::Assumption& a) {
    return a.field() == "workload.context_length";
  });
  if (!IsTraining(w.task()) && context_defaulted && max_context > 0 &&
      w.context_length() > max_context) {
    out.push_back(MakeAssumption("workload.context_length", absl::StrCat(w.context_length()),
                                 absl::StrCat("longer than the model's maximum context (",
                                              max_context, "): set context_length")));
  }
}

}  // namespace gpuadvisor::gateway
