#ifndef GPUADVISOR_SERVICES_SIZING_TRAINING_PLAN_H_
#define GPUADVISOR_SERVICES_SIZING_TRAINING_PLAN_H_

// Training plans: the candidates for one GPU configuration, and the memory
// and step time of each. Pure arithmetic; docs/sizing.md has the formulas.

#include <string>

#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/sizing/job.h"
#include "services/sizing/topology.h"

namespace gpuadvisor::sizing {

struct GpuSpec;

struct TrainPlan {
  int dp = 1, tp = 1, pp = 1, ep = 1, zero = 0;
  gpuadvisor::sizing::v1::GradientCheckpointing ckpt =
      gpuadvisor::sizing::v1::GRADIENT_CHECKPOINTING_NONE;
  gpuadvisor::sizing::v1::Offload offload = gpuadvisor::sizing::v1::OFFLOAD_NONE;
  int micro_batches = 1;    // per pipeline per optimizer step
  int virtual_stages = 1;   // interleaved 1F1B chunks per pipeline stage
  double global_batch = 0;  // sequences per optimizer step
  bool global_batch_defaulted = false;
  int Gpus() const { return dp * tp * pp; }
};

// Seconds of one optimizer step, by component.
struct TrainStep {
  double seconds = 0;
  double stage_compute = 0;  // one micro-batch on one stage, incl. recompute and dequantization
  double communication = 0;  // exposed: TP, EP, PP and DP
  double bubble = 0;
  double offload = 0;    // host-link traffic and CPU optimizer, exposed
  double optimizer = 0;  // the GPU's optimizer update (memory-bound), per step
  double tokens_per_second = 0;
  double utilization = 0;
  double communication_fraction = 0;
  double bubble_fraction = 0;
};

// The context a plan is evaluated in: one GPU model on one configuration.
struct TrainContext {
  const Job* job = nullptr;
  const GpuSpec* gpu = nullptr;
  Links links;
  int gpus_per_node = 1;
  int nodes = 1;
  double peak = 0;        // FLOP/s at the workload's precision
  double efficiency = 0;  // fraction of peak for the GEMM work
  double bandwidth = 0;   // achieved memory bandwidth (dequantization)
  double usable = 0;      // bytes per GPU a plan may use
};

// Seconds of the optimizer update per step on one GPU: the trainable
// parameters it holds (sharded by TP x PP, and by DP under ZeRO) times the
// bytes the update reads and writes, at the achieved memory bandwidth; 0
// when the optimizer is offloaded to the CPU.
double OptimizerStepSeconds(const TrainContext& c, const TrainPlan& p);

// Sets micro_batches and global_batch from the workload's global_batch_size
// or the default (docs/sizing.md "Batch"). False when the plan cannot
// split the requested global batch (dp x micro_batch_size > global batch).
bool SetBatch(const Job& j, TrainPlan* p);

// Interleaved 1F1B chunks per stage for the plan (1 = plain 1F1B).
int VirtualStages(const Job& j, const TrainPlan& p);

Memory TrainingMemory(const Job& j, const TrainPlan& p);
TrainStep TrainingStep(const TrainContext& c, const TrainPlan& p, const Memory& mem);

// Appends the structural candidates (dp, tp, pp, ep, zero; checkpointing
// and offload left to the caller) for the configuration, honouring hints.
// Returns the count written (at most `cap`).
int EnumerateTrainingPlans(const TrainContext& c, TrainPlan* out, int cap);

// "TP4 x PP2 x DP8 with ZeRO-1, EP8, selective activation checkpointing".
std::string DescribeTraining(const TrainPlan& p);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_TRAINING_PLAN_H_
