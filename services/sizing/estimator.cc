#include "services/sizing/estimator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "services/sizing/formulas.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
namespace cv1 = ::gpuadvisor::catalog::v1;

constexpr double kGiB = 1073741824.0;

// Memory that is not model state (HANDBOOK B-series: 0.5-1 GiB of CUDA
// context, kernels and allocator slack on a real stack).
constexpr double kCudaContextBytes = 0.5 * kGiB;
constexpr double kTrainingFrameworkBytes = 0.5 * kGiB;  // allocator, kernels, temp buffers
constexpr double kServingEngineBytes = 0.5 * kGiB;      // CUDA graphs, sampler, block tables
constexpr double kNcclBytes = 0.25 * kGiB;              // communicator buffers, multi-GPU only

// Logits for the loss, per element of [tokens x vocab]: bf16 logits (2) +
// fp32 upcast (4) + fp32 log-softmax kept for backward (4). A chunked/fused
// loss keeps only the bf16 logits chunks.
constexpr double kLogitsBytesPerElement = 10.0;
constexpr double kLogitsBytesPerElementFp32 = 12.0;
constexpr double kChunkedLogitsBytesPerElement = 2.0;

// Decode: fixed per-layer cost of a step (kernel launches, norms, sampling
// amortised; gpt-fast with torch.compile/CUDA graphs) and collective latency.
constexpr double kPerLayerStepSeconds = 20e-6;
constexpr double kScaleUpLatencySeconds = 12e-6;  // NVLink / Infinity Fabric all-reduce
constexpr double kPcieLatencySeconds = 30e-6;
constexpr double kFabricLatencySeconds = 25e-6;

// Achievable fraction of a link's one-direction bandwidth as NCCL bus
// bandwidth (HANDBOOK A2.4: 70-85% NVLink, 80-90% NIC line rate; PCIe lower,
// traffic crosses host bridges).
constexpr double kScaleUpBusEfficiency = 0.8;
constexpr double kPcieBusEfficiency = 0.6;
constexpr double kFabricBusEfficiency = 0.85;
constexpr double kDefaultPcieBytesPerSecond = 64e9;  // Gen4 x16, both directions

// Offload: host link per GPU and CPU Adam update rate per GPU's share of cores.
constexpr double kHostLinkBytesPerSecond = 20e9;
constexpr double kNvmeBytesPerSecond = 3e9;
constexpr double kCpuAdamParamsPerSecond = 1e9;

double WeightBytesPerParam(v1::Precision p) {
  switch (p) {
    case v1::PRECISION_FP32:
      return 4.0;
    case v1::PRECISION_FP8:
    case v1::PRECISION_INT8:
      return 1.0;
    case v1::PRECISION_INT4:
      return 0.5 + 4.0 / 128.0;  // group 128, bf16 scale + zero point (AWQ/GPTQ)
    case v1::PRECISION_NF4:
      return 4.127 / 8.0;  // QLoRA NF4, block 64, double-quantized constants
    default:
      return 2.0;
  }
}

bool IsQuantized(v1::Precision p) {
  return p == v1::PRECISION_FP8 || p == v1::PRECISION_INT8 || p == v1::PRECISION_INT4 ||
         p == v1::PRECISION_NF4;
}

// Measured effective/peak memory bandwidth of batch-1 decode kernels
// (gpt-fast on A100, HANDBOOK B-20): 16-bit GEMV reaches ~72% once the
// per-layer overhead is separated; weight-only int8/int4 kernels are
// dequantization-bound and reach less.
double BandwidthEfficiency(v1::Precision p) {
  switch (p) {
    case v1::PRECISION_FP8:
      return 0.65;
    case v1::PRECISION_INT8:
      return 0.55;
    case v1::PRECISION_INT4:
    case v1::PRECISION_NF4:
      return 0.47;
    default:
      return 0.72;
  }
}

const char* CheckpointingName(v1::GradientCheckpointing c) {
  switch (c) {
    case v1::GRADIENT_CHECKPOINTING_SELECTIVE:
      return "selective";
    case v1::GRADIENT_CHECKPOINTING_FULL:
      return "full";
    default:
      return "no";
  }
}

// ---------------------------------------------------------------------------
// LoRA

double LoraParams(const ModelSpec& m, int rank, const v1::Workload& w) {
  bool q = true, k = true, v = true, o = true, gate = true, up = true, down = true;
  if (w.lora_target_modules_size() > 0) {
    q = k = v = o = gate = up = down = false;
    for (const std::string& name : w.lora_target_modules()) {
      const std::string n = name.size() > 5 && name.compare(name.size() - 5, 5, "_proj") == 0
                                ? name.substr(0, name.size() - 5)
                                : name;
      q |= n == "q";
      k |= n == "k";
      v |= n == "v";
      o |= n == "o";
      gate |= n == "gate";
      up |= n == "up";
      down |= n == "down";
    }
  }
  const double r = rank, h = m.hidden, aw = m.attention_width;
  const double kvw = m.kv_heads * m.head_dim;
  double attn = 0;
  if (q) attn += r * (h + aw);
  if (k) attn += r * (h + kvw);
  if (v) attn += r * (h + kvw);
  if (o) attn += r * (aw + h);
  auto mlp = [&](double inter, bool gated) {
    double p = 0;
    if (gate && gated) p += r * (h + inter);
    if (up) p += r * (h + inter);
    if (down) p += r * (inter + h);
    return p;
  };
  const v1::Model& rm = m.resolved;
  const double moe_layers = rm.experts() > 0 ? m.layers - rm.dense_layers() : 0.0;
  const double dense_layers = m.layers - moe_layers;
  const double expert_copies = rm.experts() + rm.shared_experts();
  return m.layers * attn + dense_layers * mlp(m.intermediate, m.gated_mlp) +
         moe_layers * expert_copies * mlp(rm.expert_intermediate_size(), true);
}

// ---------------------------------------------------------------------------
// Links

struct Links {
  double intra_bus = 0;      // bytes/s NCCL bus bandwidth inside a node
  double intra_latency = 0;  // s per collective
  double inter_bus = 0;      // bytes/s across nodes (whole node's NICs)
  bool nvlink = false;       // scale-up link (NVLink / Infinity Fabric)
  bool fabric = false;       // a usable inter-node network
  bool default_fabric = false;
};

Links ResolveLinks(const GpuSpec& gpu, const v1::GpuConfiguration& c) {
  Links l;
  double raw = c.link_bytes_per_second();
  switch (c.link()) {
    case cv1::LINK_TYPE_NVLINK:
    case cv1::LINK_TYPE_INFINITY_FABRIC:
      l.nvlink = true;
      if (raw <= 0) raw = gpu.nvlink_bytes_per_second > 0 ? gpu.nvlink_bytes_per_second : 300e9;
      l.intra_bus = raw / 2.0 * kScaleUpBusEfficiency;
      l.intra_latency = kScaleUpLatencySeconds;
      break;
    default:
      if (raw <= 0) raw = kDefaultPcieBytesPerSecond;
      l.intra_bus = raw / 2.0 * kPcieBusEfficiency;
      l.intra_latency = kPcieLatencySeconds;
  }
  double gbps = c.fabric_gbps();
  switch (c.fabric()) {
    case cv1::FABRIC_TYPE_NONE:
      gbps = 0;
      break;
    case cv1::FABRIC_TYPE_INFINIBAND:
      if (gbps <= 0) gbps = 1600;  // 8 x 200 Gb/s HDR
      break;
    case cv1::FABRIC_TYPE_EFA:
      if (gbps <= 0) gbps = 3200;  // p5: 32 x 100 Gb/s
      break;
    case cv1::FABRIC_TYPE_ROCE:
      if (gbps <= 0) gbps = 800;
      break;
    case cv1::FABRIC_TYPE_ETHERNET:
      if (gbps <= 0) gbps = 100;
      break;
    default:
      if (gbps <= 0) {
        gbps = 100;  // unknown network: assume plain 100 GbE
        l.default_fabric = true;
      }
  }
  l.fabric = gbps > 0;
  l.inter_bus = gbps * 1e9 / 8.0 * kFabricBusEfficiency;
  return l;
}

// ---------------------------------------------------------------------------
// Compute

double Peak16(const GpuSpec& g) { return g.bf16_flops > 0 ? g.bf16_flops : g.fp16_flops; }

// Dense peak FLOP/s the workload's matmuls run at, with a note when the GPU
// lacks the precision.
double PeakFlops(const GpuSpec& g, v1::Precision p, bool training, std::string* note) {
  switch (p) {
    case v1::PRECISION_FP32:
      // NVIDIA Ampere and later run fp32 matmuls on TF32 tensor cores at half
      // the 16-bit rate; elsewhere the vector FP32 rate applies.
      if (g.vendor == "NVIDIA" && g.bf16_flops > 0) return g.bf16_flops / 2.0;
      return g.fp32_flops > 0 ? g.fp32_flops : Peak16(g) / 4.0;
    case v1::PRECISION_FP8:
      if (g.fp8_flops > 0) return g.fp8_flops;
      *note = absl::StrCat(g.name, " has no FP8: runs at the 16-bit rate");
      return Peak16(g);
    case v1::PRECISION_FP16:
      return g.fp16_flops > 0 ? g.fp16_flops : g.bf16_flops;
    default:
      if (g.bf16_flops > 0) return g.bf16_flops;
      *note = absl::StrCat(g.name, " has no BF16: FP16",
                           training ? " with loss scaling (overflow risk in training)" : "");
      return g.fp16_flops;
  }
}

// Fraction of peak a transformer reaches: the GPU's efficiency, lower for
// narrow models (small GEMMs) and few tokens per micro-batch.
double ComputeEfficiency(const GpuSpec& g, const ModelSpec& m, double tokens_per_microbatch) {
  const double width = m.hidden / (m.hidden + 512.0);
  const double batch = tokens_per_microbatch / (tokens_per_microbatch + 64.0);
  return g.compute_efficiency * width * batch;
}

// ---------------------------------------------------------------------------
// Training

struct TrainPlan {
  int dp = 1, tp = 1, pp = 1, zero = 0;
  v1::GradientCheckpointing ckpt = v1::GRADIENT_CHECKPOINTING_NONE;
};

struct Memory {
  double weights = 0, grads = 0, optimizer = 0, activations = 0, kv = 0, overhead = 0;
  double Total() const { return weights + grads + optimizer + activations + kv + overhead; }
};

Memory TrainingMemory(const Job& j, const TrainPlan& p) {
  const ModelSpec& m = *j.model;
  const double shard = static_cast<double>(p.tp) * p.pp;
  const double dp = p.dp;
  const bool offload_opt = j.offload != v1::OFFLOAD_NONE;
  const bool offload_params = j.offload == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_CPU ||
                              j.offload == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_NVME;
  Memory mem;
  // ZeRO-3 gathers the current and the prefetched layer (DeepSpeed's
  // 4 x largest_layer_params bytes at 16-bit).
  const double gather = 2.0 * m.largest_layer_params * j.weight_bytes_per_param / p.tp;
  if (offload_params && p.zero >= 3) {
    mem.weights = gather;
  } else if (p.zero >= 3) {
    mem.weights = j.weight_bytes / shard / dp + gather;
  } else {
    mem.weights = j.weight_bytes / shard;
  }
  const double trainable = j.trainable_params / shard;
  mem.grads = offload_opt ? 0.0 : trainable * j.grad_bytes_per_param / (p.zero >= 2 ? dp : 1.0);
  mem.optimizer =
      offload_opt ? 0.0 : trainable * j.optimizer_bytes_per_param / (p.zero >= 1 ? dp : 1.0);

  // Activations of one micro-batch, sequence-parallel under TP. With 1F1B
  // pipelining the first stage holds p micro-batches of L/p layers: L layers'
  // worth whatever p is (Korthikanti §4.2.3).
  const double tokens = j.micro_batch * j.seq;
  const double per_layer =
      m.activation_elements_per_token_layer * j.act_bytes_per_element * tokens / p.tp;
  switch (p.ckpt) {
    case v1::GRADIENT_CHECKPOINTING_FULL:
      mem.activations = m.hidden * j.act_bytes_per_element * tokens / p.tp * m.layers + per_layer;
      break;
    case v1::GRADIENT_CHECKPOINTING_SELECTIVE:
      mem.activations = 0.5 * per_layer * m.layers;
      break;
    default:
      mem.activations = per_layer * m.layers;
  }
  mem.activations += j.logits_bytes_per_token * tokens / p.tp;
  const int gpus = p.dp * p.tp * p.pp;
  mem.overhead = kCudaContextBytes + kTrainingFrameworkBytes + (gpus > 1 ? kNcclBytes : 0.0) +
                 j.extra_overhead_bytes;
  return mem;
}

struct TrainSpeed {
  double tokens_per_second = 0;
  double utilization = 0;
  double communication_fraction = 0;
};

TrainSpeed TrainingSpeed(const Job& j, const Links& links, int gpus_per_node,
                         const TrainPlan& p, double peak, double efficiency) {
  const ModelSpec& m = *j.model;
  const double tokens_micro = j.micro_batch * j.seq;
  // Sequences per optimizer step: requested, else one micro-batch per
  // replica (fine-tuning) or ~1M tokens (pretraining practice).
  double global = j.global_batch;
  const double per_step_min = p.dp * j.micro_batch;
  if (global <= 0) {
    global = per_step_min;
    if (j.task == v1::TASK_PRETRAIN) {
      global = std::max(global, std::ceil((1 << 20) / j.seq / per_step_min) * per_step_min);
    }
  }
  const double n_micro = std::max(1.0, std::ceil(global / per_step_min));

  const double flops = j.hw_flops_per_token[p.ckpt];
  const double stage_compute = tokens_micro * flops / (p.tp * p.pp) / (peak * efficiency);

  // Tensor parallel: 4 all-reduces of s*b*h activations per layer per
  // micro-batch (Korthikanti §4.2.2), 2 more when recomputing the forward.
  double stage_tp = 0;
  if (p.tp > 1) {
    const double k = p.ckpt == v1::GRADIENT_CHECKPOINTING_FULL ? 6.0 : 4.0;
    const double bytes = tokens_micro * m.hidden * j.act_bytes_per_element;
    stage_tp = m.layers / p.pp * k *
               (links.intra_latency + AllReduceSeconds(bytes, p.tp, links.intra_bus));
  }
  // Pipeline: activations sent forward and gradients back per micro-batch.
  double stage_pp = 0;
  if (p.pp > 1) {
    const double bytes = tokens_micro * m.hidden * j.act_bytes_per_element / p.tp;
    const bool across_nodes = p.dp * p.tp * p.pp > gpus_per_node;
    stage_pp = across_nodes ? 2.0 * (kFabricLatencySeconds + bytes / links.inter_bus)
                            : 2.0 * (links.intra_latency + bytes / links.intra_bus);
  }
  // 1F1B: (m + p - 1) slots of one micro-batch per stage (bubble (p-1)/m).
  const double slots = n_micro + p.pp - 1;
  const double pipeline_time = slots * (stage_compute + stage_tp + stage_pp);

  // Data parallel: gradient all-reduce (ZeRO-1/2: reduce-scatter +
  // all-gather, same volume) once per step; ZeRO-3 moves 1.5x per
  // micro-batch. The DP ring crosses nodes when a replica group spans them.
  double dp_time = 0, dp_exposed = 0;
  if (p.dp > 1) {
    const bool spans_nodes = p.dp * p.tp > gpus_per_node;
    const double bus = spans_nodes ? std::min(links.intra_bus, links.inter_bus) : links.intra_bus;
    const double bytes = j.trainable_params * j.grad_comm_bytes_per_param / (p.tp * p.pp);
    const double per_pass = AllReduceSeconds(bytes, p.dp, bus) * ZeroCommunicationFactor(p.zero);
    dp_time = p.zero >= 3 ? n_micro * per_pass : per_pass;
    // Overlap: buckets are reduced during the last backward (2/3 of a
    // micro-batch); ZeRO-3 prefetches during the whole step. ~10% is never
    // hidden (first and last buckets).
    const double window = 0.8 * (p.zero >= 3 ? pipeline_time : (2.0 / 3.0) * stage_compute);
    dp_exposed = std::max(dp_time - window, 0.1 * dp_time);
  }
  // Offload: gradients out and parameters back over the host link, and the
  // CPU optimizer step, per optimizer step; not overlapped.
  double offload_time = 0;
  if (j.offload != v1::OFFLOAD_NONE) {
    const bool nvme = j.offload == v1::OFFLOAD_OPTIMIZER_NVME ||
                      j.offload == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_NVME;
    const double shard_params = j.trainable_params / (p.tp * p.pp * std::max(1, p.dp));
    const double bytes = shard_params * (j.grad_bytes_per_param + j.weight_bytes_per_param);
    offload_time = bytes / kHostLinkBytesPerSecond + shard_params / kCpuAdamParamsPerSecond;
    if (nvme) {
      offload_time += shard_params * j.optimizer_bytes_per_param * 2.0 /
                      (kNvmeBytesPerSecond / std::max(1, gpus_per_node));
    }
    if (j.offload == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_CPU ||
        j.offload == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_NVME) {
      // Parameters streamed in for forward and backward of every micro-batch.
      offload_time += n_micro * 2.0 * j.weight_bytes / (p.tp * p.pp) / kHostLinkBytesPerSecond;
    }
  }
  const double step = pipeline_time + dp_exposed + offload_time;
  TrainSpeed s;
  if (step <= 0) return s;
  s.tokens_per_second = global * j.seq / step;
  const int gpus = p.dp * p.tp * p.pp;
  s.utilization = s.tokens_per_second * j.model_flops_per_token / (gpus * peak);
  s.communication_fraction = (slots * (stage_tp + stage_pp) + dp_exposed) / step;
  return s;
}

std::string DescribeTraining(const TrainPlan& p, v1::Offload offload) {
  const int gpus = p.dp * p.tp * p.pp;
  std::string d;
  if (gpus == 1) {
    d = "Single GPU";
  } else if (p.tp == 1 && p.pp == 1) {
    if (p.zero == 0) {
      d = absl::StrCat("Data parallel over ", p.dp, " GPUs (DDP)");
    } else if (p.zero == 3) {
      d = absl::StrCat("ZeRO-3 over ", p.dp, " GPUs (FSDP full shard)");
    } else {
      d = absl::StrCat("ZeRO-", p.zero, " over ", p.dp, " GPUs");
    }
  } else {
    d = absl::StrCat("TP", p.tp, " x PP", p.pp, " x DP", p.dp);
    if (p.zero > 0) absl::StrAppend(&d, " with ZeRO-", p.zero);
  }
  absl::StrAppend(&d, ", ", CheckpointingName(p.ckpt), " activation checkpointing");
  if (offload != v1::OFFLOAD_NONE) {
    absl::StrAppend(&d, ", ", v1::Offload_Name(offload));
  }
  return d;
}

struct Candidates {
  std::array<TrainPlan, 96> plans;
  int size = 0;
  void Add(const TrainPlan& p) {
    if (size < static_cast<int>(plans.size())) plans[size++] = p;
  }
};

void SetMemory(const Memory& mem, v1::MemoryBreakdown* out) {
  auto b = [](double x) { return static_cast<int64_t>(std::llround(std::max(0.0, x))); };
  out->set_weights_bytes(b(mem.weights));
  out->set_gradients_bytes(b(mem.grads));
  out->set_optimizer_bytes(b(mem.optimizer));
  out->set_activations_bytes(b(mem.activations));
  out->set_kv_cache_bytes(b(mem.kv));
  out->set_overhead_bytes(b(mem.overhead));
  out->set_total_bytes(out->weights_bytes() + out->gradients_bytes() + out->optimizer_bytes() +
                       out->activations_bytes() + out->kv_cache_bytes() + out->overhead_bytes());
}

std::string Gb(double bytes) { return absl::StrFormat("%.1f GB", bytes / 1e9); }

void EstimateTraining(const Job& j, const GpuSpec& gpu, const v1::GpuConfiguration& c,
                      v1::ConfigurationEstimate* out) {
  const ModelSpec& m = *j.model;
  const int gpn = c.gpus_per_node();
  const int nodes = c.nodes();
  const int gpus = gpn * nodes;
  const Links links = ResolveLinks(gpu, c);
  const double capacity = gpu.memory_bytes;
  const double usable = capacity * (1.0 - j.vram_margin);

  // Candidate plans, simplest first: ZeRO stages on all GPUs, then tensor
  // parallel inside a node, then pipeline stages across nodes.
  Candidates cands;
  const bool hinted = j.tp_hint > 0 || j.pp_hint > 0;
  auto add_plan = [&](int tp, int pp, int zero) {
    if (tp < 1 || pp < 1 || gpus % (tp * pp) != 0) return;
    const int dp = gpus / (tp * pp);
    if (dp == 1 && zero > 0 && j.zero_hint < 0) return;  // ZeRO needs DP
    TrainPlan p;
    p.tp = tp;
    p.pp = pp;
    p.dp = dp;
    p.zero = j.zero_hint >= 0 ? j.zero_hint : zero;
    if ((j.offload == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_CPU ||
         j.offload == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_NVME)) {
      p.zero = 3;  // parameter offload is a ZeRO-3 feature
    }
    cands.Add(p);
  };
  const int zero_options[] = {0, 1, 2, 3};
  if (hinted) {
    const int tp = j.tp_hint > 0 ? j.tp_hint : 1;
    const int pp = j.pp_hint > 0 ? j.pp_hint : 1;
    for (int z : zero_options) {
      if (j.zero_hint >= 0 && z > 0) break;
      add_plan(tp, pp, z);
    }
  } else if (j.qlora) {
    // QLoRA as people run it (bitsandbytes + PEFT) keeps a whole 4-bit base
    // on every GPU: data parallel replicas, with ZeRO-1/2 sharding only the
    // adapters' optimizer state and gradients. Sharding the quantized base
    // (FSDP-QLoRA) needs special support, so it is planned only when the
    // workload asks for it through parallelism hints.
    for (int z : {0, 1, 2}) {
      if (j.zero_hint >= 0 && z > 0) break;
      add_plan(1, 1, z);
    }
  } else {
    for (int z : zero_options) {
      if (j.zero_hint >= 0 && z > 0) break;
      add_plan(1, 1, z);
    }
    for (int tp = 2; tp <= gpn; tp *= 2) {
      if (gpn % tp != 0) continue;
      add_plan(tp, 1, 1);
      add_plan(tp, 1, 3);
      if (gpus / tp == 1) add_plan(tp, 1, 0);
    }
    for (int pp = 2; pp <= nodes; ++pp) {
      if (nodes % pp != 0) continue;
      for (int tp = 1; tp <= gpn; tp *= 2) {
        if (gpn % tp == 0) add_plan(tp, pp, 1);
      }
    }
  }

  v1::GradientCheckpointing ckpts[3] = {v1::GRADIENT_CHECKPOINTING_NONE,
                                        v1::GRADIENT_CHECKPOINTING_SELECTIVE,
                                        v1::GRADIENT_CHECKPOINTING_FULL};
  int n_ckpts = 3;
  if (j.checkpointing != v1::GRADIENT_CHECKPOINTING_UNSPECIFIED) {
    ckpts[0] = j.checkpointing;
    n_ckpts = 1;
  }

  // Tiers: plans without model parallelism, TP, PP. Inside a tier, cheaper
  // checkpointing wins over a more sharded plan (ZeRO-3 without recompute
  // before DP with recompute).
  auto tier = [](const TrainPlan& p) { return p.pp > 1 ? 2 : (p.tp > 1 ? 1 : 0); };
  bool found = false;
  TrainPlan best;
  Memory best_mem;
  double min_total = std::numeric_limits<double>::infinity();
  TrainPlan min_plan;
  Memory min_mem;
  double min_tier0 = std::numeric_limits<double>::infinity();
  TrainPlan min_tier0_plan;
  Memory min_tier0_mem;
  for (int t = 0; t < 3 && !found; ++t) {
    for (int ci = 0; ci < n_ckpts && !found; ++ci) {
      for (int i = 0; i < cands.size && !found; ++i) {
        TrainPlan p = cands.plans[i];
        if (tier(p) != t) continue;
        p.ckpt = ckpts[ci];
        const Memory mem = TrainingMemory(j, p);
        const double total = mem.Total();
        if (total < min_total) {
          min_total = total;
          min_plan = p;
          min_mem = mem;
        }
        if (t == 0 && total < min_tier0) {
          min_tier0 = total;
          min_tier0_plan = p;
          min_tier0_mem = mem;
        }
        if (total <= usable) {
          found = true;
          best = p;
          best_mem = mem;
        }
      }
    }
  }
  if (!found) {
    // Nothing fits: show the simplest plan within 15% of the least memory.
    if (cands.size == 0) {
      out->set_fits(false);
      out->set_not_fit_reason(absl::StrCat("parallelism hints do not divide ", gpus, " GPUs"));
      out->add_notes(out->not_fit_reason());
      out->set_gpu_memory_bytes(static_cast<int64_t>(capacity));
      return;
    }
    if (min_tier0 <= 1.15 * min_total) {
      best = min_tier0_plan;
      best_mem = min_tier0_mem;
    } else {
      best = min_plan;
      best_mem = min_mem;
    }
  }

  v1::ParallelPlan* plan = out->mutable_plan();
  plan->set_data_parallel(best.dp);
  plan->set_tensor_parallel(best.tp);
  plan->set_pipeline_parallel(best.pp);
  plan->set_zero_stage(best.zero);
  plan->set_offload(j.offload);
  plan->set_gradient_checkpointing(best.ckpt);
  plan->set_needs_nvlink(best.tp > 1);
  plan->set_needs_fabric(nodes > 1);
  plan->set_replicas(1);
  plan->set_description(DescribeTraining(best, j.offload));
  SetMemory(best_mem, out->mutable_memory());
  const double total = best_mem.Total();
  out->set_gpu_memory_bytes(static_cast<int64_t>(capacity));
  out->set_memory_margin(1.0 - total / capacity);

  std::string reason;
  if (!found) {
    reason = absl::StrCat("needs ", Gb(total), " per GPU with the leanest plan; ", gpu.name,
                          " has ", Gb(capacity), " (", Gb(usable), " usable at margin ",
                          j.vram_margin, ")");
  } else if (nodes > 1 && !links.fabric) {
    reason = "multi-node training needs an inter-node fabric; this configuration has none";
  } else if (j.tp_hint > gpn) {
    reason = "tensor_parallel hint exceeds the GPUs of one node";
  }
  out->set_fits(reason.empty());
  if (!reason.empty()) {
    out->set_not_fit_reason(reason);
    out->add_notes(reason);
    if (!found && j.offload == v1::OFFLOAD_NONE && j.task != v1::TASK_QLORA) {
      out->add_notes(
          "consider more GPUs, OFFLOAD_OPTIMIZER_CPU, an 8-bit optimizer, LoRA or QLoRA");
    }
  }
  if (best.tp > 1 && !links.nvlink) {
    out->add_notes("tensor parallel over PCIe: all-reduces are slow; NVLink recommended");
  }
  if (gpus > 1 && !links.nvlink && best.dp > 1) {
    out->add_notes("PCIe-only multi-GPU: gradient all-reduce bound");
  }
  if (nodes > 1 && links.default_fabric) {
    out->add_notes("fabric unspecified: assumed 100 Gb/s Ethernet between nodes");
  }
  if (!j.precision_note.empty()) out->add_notes(j.precision_note);

  std::string peak_note;
  double peak = PeakFlops(gpu, j.precision, true, &peak_note);
  if (!peak_note.empty()) out->add_notes(peak_note);
  double efficiency = ComputeEfficiency(gpu, m, j.micro_batch * j.seq);
  if (j.precision == v1::PRECISION_FP8 && gpu.fp8_flops > 0) {
    // Only the GEMMs run in FP8; attention, norms and casts do not (HANDBOOK
    // A2.2): ~1.4x the BF16 speed rather than 2x.
    efficiency *= 0.7;
  }
  if (peak <= 0) return;
  const TrainSpeed speed = TrainingSpeed(j, links, gpn, best, peak, efficiency);
  out->set_tokens_per_second(speed.tokens_per_second);
  out->set_utilization(speed.utilization);
  out->set_communication_fraction(speed.communication_fraction);
  if (speed.tokens_per_second > 0 && j.total_tokens > 0) {
    out->set_estimated_hours(j.total_tokens / speed.tokens_per_second / 3600.0);
  }
  if (j.total_tokens <= 0) {
    out->add_notes("no train_tokens or dataset size given: estimated_hours is 0");
  }
}

// ---------------------------------------------------------------------------
// Serving

struct ServePlan {
  int tp = 1, pp = 1;
  double batch = 1;
};

double ServingContext(const Job& j) {
  const double window = j.model->sliding_window;
  return window > 0 ? std::min(j.context, window) : j.context;
}

Memory ServingMemory(const Job& j, const ServePlan& p) {
  const ModelSpec& m = *j.model;
  Memory mem;
  const double shards = static_cast<double>(p.tp) * p.pp;
  mem.weights = j.serving_weight_bytes / shards;
  const double kv_split = std::min(static_cast<double>(p.tp), m.kv_tp_shards) * p.pp;
  mem.kv = p.batch * ServingContext(j) * j.kv_bytes_per_token / kv_split;
  // Workspace: one layer's activations for a prefill chunk (vLLM profiles
  // max_num_batched_tokens) plus fp32 logits of the sampled positions.
  const double chunk = std::min(p.batch * j.context, 4096.0);
  mem.activations = chunk * m.activation_elements_per_token_layer * 2.0 / p.tp +
                    p.batch * m.vocab * 4.0;
  mem.overhead = kCudaContextBytes + kServingEngineBytes + (shards > 1 ? kNcclBytes : 0.0);
  return mem;
}

struct ServeSpeed {
  double decode_tps = 0;   // all replicas
  double prefill_tps = 0;  // all replicas
  double utilization = 0;
  double communication_fraction = 0;
};

ServeSpeed ServingSpeed(const Job& j, const GpuSpec& gpu, const Links& links, const ServePlan& p,
                        int replicas) {
  const ModelSpec& m = *j.model;
  ServeSpeed s;
  std::string ignored;
  const double peak = PeakFlops(gpu, j.precision, false, &ignored);
  if (peak <= 0) return s;
  const double b = p.batch;
  // Weights read per decode step: the dense part plus the routed experts
  // that at least one of the b tokens selects.
  double weights = j.dense_read_bytes;
  if (j.expert_read_bytes > 0) {
    const double touched = 1.0 - std::pow(1.0 - m.active_expert_fraction, b);
    weights += j.expert_read_bytes * touched;
  }
  const double ctx_avg = std::min(j.prompt + j.output / 2.0, ServingContext(j));
  const double kv_split = std::min(static_cast<double>(p.tp), m.kv_tp_shards);
  const double kv = b * ctx_avg * j.kv_bytes_per_token / kv_split;
  const double bw = gpu.memory_bandwidth * j.bw_efficiency;
  // Pipeline stages run one after another for a token: their times add up,
  // so only TP divides the per-step bytes and FLOPs.
  const double t_mem = (weights / p.tp + kv) / bw;
  const double decode_efficiency = 0.5 * m.hidden / (m.hidden + 512.0);
  const double t_compute = b * j.decode_flops_per_token / (p.tp * peak * decode_efficiency);
  double t_comm = 0;
  if (p.tp > 1) {
    const double bytes = b * m.hidden * 2.0;
    t_comm += 2.0 * m.layers * (links.intra_latency + AllReduceSeconds(bytes, p.tp, links.intra_bus));
  }
  if (p.pp > 1) {
    t_comm += (p.pp - 1) * (kFabricLatencySeconds + b * m.hidden * 2.0 / links.inter_bus);
  }
  const double step = std::max(t_mem, t_compute) + m.layers * kPerLayerStepSeconds + t_comm;
  s.decode_tps = replicas * b / step;
  s.communication_fraction = t_comm / step;
  const double prefill_efficiency = ComputeEfficiency(gpu, m, std::max(j.prompt, 1.0));
  s.prefill_tps = replicas * p.tp * p.pp * peak * prefill_efficiency / j.prefill_flops_per_token;
  const int gpus = replicas * p.tp * p.pp;
  s.utilization = s.decode_tps * 2.0 * m.compute_params / (gpus * peak);
  return s;
}

void EstimateServing(const Job& j, const GpuSpec& gpu, const v1::GpuConfiguration& c,
                     v1::ConfigurationEstimate* out) {
  const ModelSpec& m = *j.model;
  const int gpn = c.gpus_per_node();
  const int nodes = c.nodes();
  const int gpus = gpn * nodes;
  const Links links = ResolveLinks(gpu, c);
  const double capacity = gpu.memory_bytes;
  const double usable = capacity * (1.0 - j.vram_margin);

  // Candidate (tp, pp), simplest first: one GPU per replica, TP inside a
  // node, then pipeline stages across nodes.
  std::array<ServePlan, 64> cands;
  int n = 0;
  auto add = [&](int tp, int pp) {
    if (n < static_cast<int>(cands.size()) && tp >= 1 && pp >= 1 && gpus % (tp * pp) == 0) {
      cands[n].tp = tp;
      cands[n].pp = pp;
      ++n;
    }
  };
  if (j.tp_hint > 0 || j.pp_hint > 0) {
    add(std::max(1, j.tp_hint), std::max(1, j.pp_hint));
  } else {
    for (int tp = 1; tp <= gpn; tp *= 2) {
      if (gpn % tp == 0) add(tp, 1);
    }
    for (int pp = 2; pp <= nodes; ++pp) {
      if (nodes % pp == 0) add(gpn, pp);
    }
  }
  if (n == 0) {
    out->set_fits(false);
    out->set_not_fit_reason(absl::StrCat("parallelism hints do not divide ", gpus, " GPUs"));
    out->add_notes(out->not_fit_reason());
    out->set_gpu_memory_bytes(static_cast<int64_t>(capacity));
    return;
  }

  constexpr double kMaxBatch = 256;
  bool found = false;
  ServePlan best = cands[n - 1];
  for (int i = 0; i < n && !found; ++i) {
    ServePlan p = cands[i];
    if (j.concurrency > 0) {
      p.batch = j.concurrency;
      if (ServingMemory(j, p).Total() <= usable) {
        found = true;
        best = p;
      }
    } else {
      // Batch job: as many concurrent sequences as the KV budget allows.
      p.batch = 1;
      const Memory one = ServingMemory(j, p);
      if (one.Total() <= usable) {
        p.batch = kMaxBatch;
        const Memory full = ServingMemory(j, p);
        const double per_seq = (full.Total() - one.Total()) / (kMaxBatch - 1);
        p.batch = per_seq > 0 ? std::min(kMaxBatch, 1.0 + std::floor((usable - one.Total()) / per_seq))
                              : kMaxBatch;
        found = true;
        best = p;
      }
    }
  }
  if (!found) best.batch = j.concurrency > 0 ? j.concurrency : 1;
  const Memory mem = ServingMemory(j, best);
  const int replicas = gpus / (best.tp * best.pp);

  v1::ParallelPlan* plan = out->mutable_plan();
  plan->set_data_parallel(replicas);
  plan->set_tensor_parallel(best.tp);
  plan->set_pipeline_parallel(best.pp);
  plan->set_zero_stage(0);
  plan->set_offload(v1::OFFLOAD_NONE);
  plan->set_needs_nvlink(best.tp > 1);
  plan->set_needs_fabric(best.pp > 1);
  plan->set_replicas(replicas);
  std::string d = best.tp * best.pp == 1
                      ? absl::StrCat(replicas, replicas == 1 ? " replica" : " replicas",
                                     " on 1 GPU each")
                      : absl::StrCat(replicas, replicas == 1 ? " replica" : " replicas", " of TP",
                                     best.tp, " x PP", best.pp);
  absl::StrAppend(&d, ", ", static_cast<int64_t>(best.batch), " concurrent sequences per replica");
  plan->set_description(std::move(d));
  SetMemory(mem, out->mutable_memory());
  out->set_gpu_memory_bytes(static_cast<int64_t>(capacity));
  out->set_memory_margin(1.0 - mem.Total() / capacity);

  std::string reason;
  if (!found) {
    reason = absl::StrCat("needs ", Gb(mem.Total()), " per GPU with ", best.tp * best.pp,
                          "-way sharding; ", gpu.name, " has ", Gb(capacity), " (", Gb(usable),
                          " usable)");
  } else if (best.pp > 1 && !links.fabric) {
    reason = "pipeline stages across nodes need an inter-node fabric; this configuration has none";
  } else if (best.tp > gpn) {
    reason = "tensor_parallel hint exceeds the GPUs of one node";
  }
  out->set_fits(reason.empty());
  if (!reason.empty()) {
    out->set_not_fit_reason(reason);
    out->add_notes(reason);
  }
  if (best.tp > 1 && !links.nvlink) {
    out->add_notes("tensor parallel over PCIe: slow per-layer all-reduces; NVLink recommended");
  }
  if (!j.precision_note.empty()) out->add_notes(j.precision_note);
  std::string peak_note;
  PeakFlops(gpu, j.precision, false, &peak_note);
  if (!peak_note.empty()) out->add_notes(peak_note);
  if (m.kind == v1::MODEL_KIND_DIFFUSION || m.kind == v1::MODEL_KIND_ENCODER) {
    out->add_notes("not an autoregressive model: token rates are indicative only");
  }

  const ServeSpeed s = ServingSpeed(j, gpu, links, best, replicas);
  out->set_tokens_per_second(s.decode_tps);
  out->set_prefill_tokens_per_second(s.prefill_tps);
  out->set_utilization(s.utilization);
  out->set_communication_fraction(s.communication_fraction);
  if (j.batch) {
    if (j.requests > 0 && s.decode_tps > 0 && s.prefill_tps > 0) {
      const double seconds =
          j.requests * (j.prompt / s.prefill_tps + j.output / s.decode_tps);
      out->set_estimated_hours(seconds / 3600.0);
    } else {
      out->add_notes("no requests given: estimated_hours is 0");
    }
  } else {
    out->set_estimated_hours(j.serving_hours);
  }
}

}  // namespace

absl::StatusOr<Job> BuildJob(const v1::Workload& w, const ModelSpec& m, double vram_margin,
                             v1::WorkloadTotals* totals) {
  Job j;
  j.model = &m;
  j.task = w.task();
  j.vram_margin = vram_margin;
  j.lora = j.task == v1::TASK_LORA || j.task == v1::TASK_QLORA;
  j.qlora = j.task == v1::TASK_QLORA;
  j.training = j.lora || j.task == v1::TASK_PRETRAIN || j.task == v1::TASK_FULL_FINETUNE;
  j.batch = j.task == v1::TASK_BATCH_INFERENCE;
  j.precision = w.precision() == v1::PRECISION_UNSPECIFIED ? v1::PRECISION_BF16 : w.precision();
  const double n = m.params;
  const double head_params = m.tied_embeddings ? 0.0 : m.lm_head_params;
  const double sixteen_bit = m.embedding_params + head_params;  // kept unquantized
  auto quantized_bytes = [&](v1::Precision p) {
    const double q = WeightBytesPerParam(p);
    if (!IsQuantized(p)) return n * q;
    return std::max(n - sixteen_bit, 0.0) * q + std::min(sixteen_bit, n) * 2.0;
  };
  const double window = m.sliding_window;

  if (j.training) {
    const v1::Parallelism& par = w.parallelism();
    j.seq = w.sequence_length();
    j.micro_batch = std::max(1, w.micro_batch_size());
    j.global_batch = w.global_batch_size();
    j.checkpointing = w.gradient_checkpointing();
    j.offload = par.offload() == v1::OFFLOAD_UNSPECIFIED ? v1::OFFLOAD_NONE : par.offload();
    j.zero_hint = par.zero_stage() > 0 ? par.zero_stage() : -1;
    j.tp_hint = par.tensor_parallel();
    j.pp_hint = par.pipeline_parallel();

    // Compute precision of the trainable weights. LoRA/QLoRA bases may be
    // quantized; the adapters and the math stay 16-bit.
    v1::Precision compute = j.precision;
    if (j.lora && IsQuantized(compute) && compute != v1::PRECISION_FP8) compute = v1::PRECISION_BF16;
    const bool fp32 = compute == v1::PRECISION_FP32;
    // LoRA adapters are the trainable weights themselves (PEFT/bitsandbytes
    // keep no separate master copy by default) but their optimizer states
    // stay 32-bit.
    const bool master =
        fp32 ? false : (par.has_master_weights() ? par.master_weights() : !j.lora);
    const double w_b = fp32 ? 4.0 : 2.0;
    // Adam accounting (HANDBOOK conflict 3): ZeRO's sum, K = 12 with a
    // fp32 master copy: 2 (weights) + 2 (grads) + 4 (master) + 4 + 4 (m, v)
    // = 16 B/param. fp32 Adam: 4 + 4 + 8 = 16. Pure 16-bit (no master):
    // states in the weight dtype, 2 + 2 + 2 + 2 = 8.
    const double state_b = (fp32 || master || (j.lora && !par.has_master_weights())) ? 4.0 : 2.0;
    double states = 0;
    switch (w.optimizer()) {
      case v1::OPTIMIZER_ADAMW_8BIT:
        states = 2.0 + 2.0 * 4.0 / 2048.0;  // 8-bit m and v + fp32 absmax per block
        break;
      case v1::OPTIMIZER_SGD:
        states = state_b;  // momentum
        break;
      case v1::OPTIMIZER_ADAFACTOR:
        // Factored second moment: rows + columns in fp32 per matrix, no
        // momentum (beta1 = None): ~8/h bytes per parameter.
        states = 8.0 / m.hidden;
        break;
      default:
        states = 2.0 * state_b;
    }
    j.weight_bytes_per_param = w_b;
    j.grad_bytes_per_param = w_b;
    j.grad_comm_bytes_per_param = w_b;
    j.optimizer_bytes_per_param = states + (master ? 4.0 : 0.0);
    j.act_bytes_per_element = fp32 ? 4.0 : 2.0;
    if (j.precision == v1::PRECISION_FP8) {
      j.precision_note = "FP8 training: FP8 GEMMs with 16-bit weights and gradients";
    }

    if (j.lora) {
      const int rank = w.lora_rank() > 0 ? w.lora_rank() : (j.qlora ? 64 : 16);
      j.trainable_params = std::min(LoraParams(m, rank, w), n);
      v1::Precision base = j.precision;
      if (j.qlora) {
        if (base != v1::PRECISION_INT4 && base != v1::PRECISION_INT8) base = v1::PRECISION_NF4;
        if (w.precision() != v1::PRECISION_NF4 && base == v1::PRECISION_NF4 &&
            w.precision() != v1::PRECISION_UNSPECIFIED) {
          j.precision_note = "QLoRA: base weights stored in NF4, computed in BF16";
        }
        // Dequantized copy of the largest matrix for the current matmul.
        j.extra_overhead_bytes = 2.0 * m.hidden * std::max(m.intermediate, m.attention_width) * 2.0;
      }
      j.weight_bytes = quantized_bytes(base) + j.trainable_params * w_b;
      // Compute in 16-bit even when the base is stored quantized.
      if (IsQuantized(j.precision) && j.precision != v1::PRECISION_FP8) {
        j.precision = v1::PRECISION_BF16;
      }
    } else {
      j.trainable_params = n;
      j.weight_bytes = n * w_b;
    }
    const double logits_element =
        w.chunked_loss() ? kChunkedLogitsBytesPerElement
                         : (fp32 ? kLogitsBytesPerElementFp32 : kLogitsBytesPerElement);
    j.logits_bytes_per_token =
        (m.kind == v1::MODEL_KIND_DIFFUSION ? 0.0 : m.vocab * logits_element);

    // FLOPs per token (PaLM App. B): forward 2N + 4 L H Q T; training 3x
    // forward = 6N + 12 L H Q T. LoRA skips the frozen weight gradients:
    // 4N + 12 L H Q T. Full recompute adds one forward (8N); selective
    // recomputes about a quarter of it.
    const double t_eff = window > 0 ? std::min(j.seq, window) : j.seq;
    const double attn_fwd = 4.0 * m.layers * m.attention_width * t_eff;
    const double fwd = 2.0 * m.compute_params + attn_fwd;
    const double model_flops =
        j.lora ? 4.0 * m.compute_params + 3.0 * attn_fwd : 6.0 * m.compute_params + 3.0 * attn_fwd;
    const double dequant = j.qlora ? 1.1 : 1.0;  // NF4 dequantization per matmul
    j.model_flops_per_token = model_flops;
    j.hw_flops_per_token[v1::GRADIENT_CHECKPOINTING_UNSPECIFIED] = model_flops * dequant;
    j.hw_flops_per_token[v1::GRADIENT_CHECKPOINTING_NONE] = model_flops * dequant;
    j.hw_flops_per_token[v1::GRADIENT_CHECKPOINTING_SELECTIVE] = (model_flops + 0.25 * fwd) * dequant;
    j.hw_flops_per_token[v1::GRADIENT_CHECKPOINTING_FULL] = (model_flops + fwd) * dequant;

    // Tokens: given, or dataset x epochs, or ~4 bytes of text per token, or
    // Chinchilla's 20 tokens per parameter for pretraining.
    const double epochs = w.epochs() > 0 ? w.epochs() : 1.0;
    if (w.train_tokens() > 0) {
      j.total_tokens = w.train_tokens();
    } else if (w.dataset_tokens() > 0) {
      j.total_tokens = w.dataset_tokens() * epochs;
    } else if (w.dataset_gb() > 0) {
      j.total_tokens = w.dataset_gb() * 1e9 / 4.0 * epochs;
    } else if (j.task == v1::TASK_PRETRAIN) {
      j.total_tokens = 20.0 * n;
    }
    totals->set_total_flops(j.total_tokens * j.model_flops_per_token);
    totals->set_checkpoint_bytes(static_cast<int64_t>(
        std::llround(j.trainable_params * (w_b + j.optimizer_bytes_per_param))));
    totals->set_weights_bytes(static_cast<int64_t>(std::llround(j.weight_bytes)));
    TrainPlan single;
    single.ckpt = j.checkpointing == v1::GRADIENT_CHECKPOINTING_UNSPECIFIED
                      ? v1::GRADIENT_CHECKPOINTING_FULL
                      : j.checkpointing;
    Job solo = j;
    solo.offload = v1::OFFLOAD_NONE;
    totals->set_min_vram_bytes_single_gpu(
        static_cast<int64_t>(std::llround(TrainingMemory(solo, single).Total())));
  } else {
    const double max_ctx = m.max_context > 0 ? m.max_context : 4096.0;
    j.context = w.context_length() > 0 ? w.context_length() : std::min(4096.0, max_ctx);
    j.output = w.output_tokens() > 0 ? w.output_tokens() : std::min(256.0, std::floor(j.context / 2));
    j.prompt = w.prompt_tokens() > 0 ? w.prompt_tokens() : std::max(j.context - j.output, 1.0);
    j.concurrency = w.concurrent_sequences() > 0 ? w.concurrent_sequences() : (j.batch ? 0 : 1);
    j.requests = w.requests();
    j.serving_hours = w.serving_hours() > 0 ? w.serving_hours() : 720.0;
    j.tp_hint = w.parallelism().tensor_parallel();
    j.pp_hint = w.parallelism().pipeline_parallel();
    const v1::Precision p = j.precision;
    j.serving_weight_bytes = quantized_bytes(p);
    // KV cache: the serving precision capped at 16 bits by default (4-bit
    // weight formats keep a 16-bit cache, as serving engines do).
    double kv_b = 2.0;
    if (w.kv_cache_precision() != v1::PRECISION_UNSPECIFIED) {
      kv_b = WeightBytesPerParam(w.kv_cache_precision());
    } else if (p == v1::PRECISION_FP8 || p == v1::PRECISION_INT8) {
      kv_b = 1.0;
    }
    j.kv_bytes_per_token = m.kv_elements_per_token * kv_b;
    // Bytes read per decode step: every weight except the input embedding
    // (a lookup), routed experts split out for the batch-dependent part.
    const double q = WeightBytesPerParam(p);
    const double head_b = IsQuantized(p) ? 2.0 : q;
    const double head = m.tied_embeddings ? m.embedding_params : m.lm_head_params;
    const double body = std::max(n - m.embedding_params - m.lm_head_params - m.routed_expert_params, 0.0);
    j.dense_read_bytes = body * q + head * head_b;
    j.expert_read_bytes = m.routed_expert_params * q;
    j.bw_efficiency = BandwidthEfficiency(p);
    const double ctx_avg = std::min(j.prompt + j.output / 2.0, window > 0 ? window : j.context);
    j.decode_flops_per_token = 2.0 * m.compute_params + 4.0 * m.layers * m.attention_width * ctx_avg;
    const double prompt_eff = window > 0 ? std::min(j.prompt, window) : j.prompt;
    j.prefill_flops_per_token = 2.0 * m.compute_params + 2.0 * m.layers * m.attention_width * prompt_eff;
    if (j.batch) {
      j.total_tokens = j.requests * (j.prompt + j.output);
      totals->set_total_flops(j.requests * (j.prompt * j.prefill_flops_per_token +
                                            j.output * j.decode_flops_per_token));
    }
    j.trainable_params = 0;
    totals->set_checkpoint_bytes(static_cast<int64_t>(std::llround(j.serving_weight_bytes)));
    totals->set_weights_bytes(static_cast<int64_t>(std::llround(j.serving_weight_bytes)));
    ServePlan single;
    single.batch = j.concurrency > 0 ? j.concurrency : 1;
    totals->set_min_vram_bytes_single_gpu(
        static_cast<int64_t>(std::llround(ServingMemory(j, single).Total())));
  }
  totals->set_total_tokens(j.total_tokens);
  totals->set_params(n);
  totals->set_trainable_params(j.trainable_params);
  return j;
}

void EstimateConfiguration(const Job& job, const GpuSpec& gpu, const v1::GpuConfiguration& config,
                           v1::ConfigurationEstimate* out) {
  if (job.training) {
    EstimateTraining(job, gpu, config, out);
  } else {
    EstimateServing(job, gpu, config, out);
  }
}

}  // namespace gpuadvisor::sizing
