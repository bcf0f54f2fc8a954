#ifndef GPUADVISOR_SERVICES_SIZING_ESTIMATOR_H_
#define GPUADVISOR_SERVICES_SIZING_ESTIMATOR_H_

// Sizes one Job on one GPU configuration: enumerate candidate plans, choose
// the fastest that fits (tie: less memory), fill the estimate with the plan,
// the runner-up and the notes a user needs. "Fastest": training, the most
// tokens/s; batch inference, the most output tokens/s of the configuration;
// a serving endpoint, the highest full-load per-user speed
// (ServingEstimate.tokens_per_second_per_user, which the gateway's per-user
// floor checks), then the shorter inter-token latency. With serving SLOs
// (EstimateRequest.serving_slo, Job::slo) a serving plan is the fastest of
// those that meet them all; when none does, the one that misses them least
// (smallest sum of relative shortfalls), then the fastest; a note says which
// ("serving_slo", "serving_slo_missed") and the runner-up reason names the
// SLO a faster layout misses. Training and serving are separate job types
// (training_estimate.cc, serving_estimate.cc).

#include <string>

#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/sizing/job.h"

namespace gpuadvisor::sizing {

struct GpuSpec;

// Sizes `job` on one configuration into `out` (configuration already copied).
void EstimateConfiguration(const Job& job, const GpuSpec& gpu,
                           const gpuadvisor::sizing::v1::GpuConfiguration& config,
                           gpuadvisor::sizing::v1::ConfigurationEstimate* out);

void EstimateTraining(const Job& job, const GpuSpec& gpu,
                      const gpuadvisor::sizing::v1::GpuConfiguration& config,
                      gpuadvisor::sizing::v1::ConfigurationEstimate* out);
void EstimateServing(const Job& job, const GpuSpec& gpu,
                     const gpuadvisor::sizing::v1::GpuConfiguration& config,
                     gpuadvisor::sizing::v1::ConfigurationEstimate* out);

// Helpers shared by both job types.
void SetMemory(double weights, double grads, double optimizer, double activations, double kv,
               double overhead, gpuadvisor::sizing::v1::MemoryBreakdown* out);
// Adds a note: its text to `notes` (every note, in order, for clients that
// read text only) and the same text with a stable `code` and a severity to
// `structured_notes`. WARNING: it changes whether the job works or what it
// costs, or needs a check before renting; INFO: context for the numbers.
void AddNote(gpuadvisor::sizing::v1::NoteSeverity severity, const char* code, std::string text,
             gpuadvisor::sizing::v1::ConfigurationEstimate* out);
// Marks the estimate as not fitting, with `reason` as a warning note
// ("does_not_fit").
void NotFit(const std::string& reason, gpuadvisor::sizing::v1::ConfigurationEstimate* out);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_ESTIMATOR_H_
