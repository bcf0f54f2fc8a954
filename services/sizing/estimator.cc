#include "services/sizing/estimator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/strings/str_format.h"
#include "services/sizing/intervals.h"
#include "services/sizing/profiles.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {

void SetMemory(double weights, double grads, double optimizer, double activations, double kv,
               double overhead, v1::MemoryBreakdown* out) {
  auto b = [](double x) { return static_cast<int64_t>(std::llround(std::max(0.0, x))); };
  out->set_weights_bytes(b(weights));
  out->set_gradients_bytes(b(grads));
  out->set_optimizer_bytes(b(optimizer));
  out->set_activations_bytes(b(activations));
  out->set_kv_cache_bytes(b(kv));
  out->set_overhead_bytes(b(overhead));
  out->set_total_bytes(out->weights_bytes() + out->gradients_bytes() + out->optimizer_bytes() +
                       out->activations_bytes() + out->kv_cache_bytes() + out->overhead_bytes());
}

void AddNote(v1::NoteSeverity severity, const char* code, std::string text,
             v1::ConfigurationEstimate* out) {
  v1::Note* note = out->add_structured_notes();
  note->set_code(code);
  note->set_severity(severity);
  out->add_notes(text);
  note->set_text(std::move(text));
}

void NotFit(const std::string& reason, v1::ConfigurationEstimate* out) {
  out->set_fits(false);
  out->set_not_fit_reason(reason);
  AddNote(v1::NOTE_SEVERITY_WARNING, "does_not_fit", reason, out);
}

void EstimateConfiguration(const Job& job, const GpuSpec& gpu, const v1::GpuConfiguration& config,
                           v1::ConfigurationEstimate* out) {
  out->set_framework(job.framework->name());
  if (job.training) {
    EstimateTraining(job, gpu, config, out);
  } else {
    EstimateServing(job, gpu, config, out);
  }
  FillIntervals(job, out);
  if (!gpu.efficiency_not_measured.empty()) {
    v1::Note* note = out->add_structured_notes();
    note->set_code("efficiency_not_measured");
    note->set_severity(v1::NOTE_SEVERITY_WARNING);
    note->set_text(absl::StrFormat(
        "Efficiency not measured: no two independent published measurements of %s (%s %s) "
        "training or serving speed; the estimate uses a stated conservative default (%.2f of "
        "the dense 16-bit peak before model-size effects, %.2f of memory bandwidth). Treat its "
        "speed and hours as uncertain.",
        gpu.name, gpu.vendor, gpu.architecture, gpu.compute_efficiency,
        gpu.decode_bandwidth_efficiency));
    note->set_source(gpu.efficiency_not_measured);
    out->add_notes(note->text());
  }
  // Known problems of the task on this GPU's software stack (data).
  if (job.profiles == nullptr) return;
  for (const v1::Hazard* h :
       job.profiles->HazardsFor(job.task, gpu.vendor, job.precision, job.framework->name())) {
    v1::Note* note = out->add_structured_notes();
    note->set_code(h->code());
    note->set_severity(h->severity() == v1::NOTE_SEVERITY_UNSPECIFIED ? v1::NOTE_SEVERITY_WARNING
                                                                      : h->severity());
    note->set_text(h->text());
    note->set_source(h->source());
    out->add_notes(h->text());
  }
}

}  // namespace gpuadvisor::sizing
