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
  double step_seconds = 0;               // one decode step (inter-token latency)
  double ttft_seconds = 0;               // one prompt's prefill + one decode step
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

ServeSpeed ServingSpeed(const Job& j, const GpuSpec& gpu, const Links& links, int gpus_per_node,
                        const ServePlan& p);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_SERVING_PLAN_H_
