#ifndef GPUADVISOR_SERVICES_SIZING_SERVING_PLAN_H_
#define GPUADVISOR_SERVICES_SIZING_SERVING_PLAN_H_

// Serving plans: memory, KV capacity and speed of one replica layout. Pure
// arithmetic; docs/sizing.md has the formulas.

#include "services/sizing/job.h"
#include "services/sizing/topology.h"

namespace gpuadvisor::sizing {

struct GpuSpec;

struct ServePlan {
  int tp = 1, pp = 1, ep = 1;
  double batch = 1;  // concurrent sequences per replica
  int replicas = 1;
};

// Per GPU at `p.batch` sequences of the job's context.
Memory ServingMemory(const Job& j, const ServePlan& p);

// KV-cache bytes one token takes on one GPU of the replica.
double KvBytesPerTokenPerGpu(const Job& j, const ServePlan& p);

// KV-cache bytes one sequence of the job's context takes on one GPU.
double KvBytesPerSequencePerGpu(const Job& j, const ServePlan& p);

struct ServeSpeed {
  double step_seconds = 0;  // one decode step (inter-token latency)
  // Time to first token at the replica's load: the unloaded prefill plus
  // the wait for prefill capacity at kTtftPercentile (PrefillWaitSeconds).
  double ttft_seconds = 0;
  double ttft_unloaded_seconds = 0;      // one prompt's prefill, nothing ahead of it
  double prefill_wait_seconds = 0;       // the wait at kTtftPercentile
  double prefill_tokens_per_second = 0;  // per replica, prompts pipelined
  double requests_per_second = 0;        // per replica
  double output_tokens_per_second = 0;   // per replica
  double communication_fraction = 0;
  // Of a replica's time at full load, the share spent prefilling prompts
  // (the rest runs the batched decode steps).
  double prefill_fraction = 0;
  // Output tokens/s each of the replica's concurrent sequences gets at full
  // load: its output spread over the cycle in which every sequence in flight
  // completes one request, less its own time to first token. At most
  // 1 / step_seconds (reached when prefill is negligible).
  double user_tokens_per_second = 0;
};

// The percentile the reported time to first token is at.
inline constexpr double kTtftPercentile = 0.9;

// Wait of a new prompt for prefill capacity on a replica serving `batch`
// closed-loop sequences whose prefills keep it `prefill_fraction` busy, each
// prompt taking `prefill_seconds` of it, at percentile `q`. Queue model
// (docs/sizing.md "Serving under load"): the prefill work is an M/D/1 queue
// fed by the other batch - 1 sequences (utilization rho = prefill_fraction x
// (batch - 1) / batch), its mean wait rho S / (2 (1 - rho)) and an
// exponential tail P(W > t) = rho exp(-t / tau) with the same mean (tau =
// S / (2 (1 - rho))), so the q-th percentile is tau ln(rho / (1 - q)) when
// rho > 1 - q, else 0; never more than the other sequences' prefills.
double PrefillWaitSeconds(double prefill_fraction, double batch, double prefill_seconds, double q);

ServeSpeed ServingSpeed(const Job& j, const GpuSpec& gpu, const Links& links, int gpus_per_node,
                        const ServePlan& p);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_SERVING_PLAN_H_
