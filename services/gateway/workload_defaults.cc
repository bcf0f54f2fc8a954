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

}  // namespace

v1::Assumption MakeAssumption(std::string field, std::string value, std::string note) {
  v1::Assumption a;
  a.set_field(std::move(field));
  a.set_value(std::move(value));
  a.set_note(std::move(note));
  return a;
}

namespace {

v1::Assumption FromSizing(const sizing::v1::AppliedDefault& d) {
  return MakeAssumption(d.field(), d.value(), d.reason());
}

// Whether the job resumes after a preemption: how it is priced on spot.
void RestartableAssumption(const sizing::v1::Workload& w, std::vector<v1::Assumption>& out) {
  if (w.has_restartable()) return;
  if (IsTraining(w.task())) {
    out.push_back(MakeAssumption("workload.restartable", "true",
                                 "training resumes from its last checkpoint after a preemption"));
  } else if (w.task() == sizing::v1::TASK_INFERENCE) {
    out.push_back(MakeAssumption("workload.restartable", "false",
                                 "an endpoint cannot pause: a preemption drops its traffic"));
  } else {
    out.push_back(MakeAssumption("workload.restartable", "true",
                                 "a batch job resumes with the requests not yet done"));
  }
}

}  // namespace

absl::Status ApplyWorkloadDefaults(sizing::v1::Workload& w, std::vector<v1::Assumption>& out,
                                   WorkloadUse use) {
  std::vector<sizing::v1::AppliedDefault> applied;
  const absl::Status s = sizing::ApplyWorkloadDefaults(w, applied, use);
  if (!s.ok()) return s;
  for (const sizing::v1::AppliedDefault& d : applied) out.push_back(FromSizing(d));
  RestartableAssumption(w, out);
  return absl::OkStatus();
}

void AddSizedAssumptions(const sizing::v1::Workload& w, const sizing::v1::EstimateResponse& sized,
                         std::vector<v1::Assumption>& out) {
  // Sizing's own account of the defaults it applied or derived, for the
  // fields not stated above.
  for (const sizing::v1::AppliedDefault& d : sized.applied_defaults()) {
    const bool stated = std::any_of(
        out.begin(), out.end(), [&](const v1::Assumption& a) { return a.field() == d.field(); });
    if (!stated) out.push_back(FromSizing(d));
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
