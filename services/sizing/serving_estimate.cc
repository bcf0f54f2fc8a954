// Serving on one configuration: candidates -> choose -> fill.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/io/units.h"
#include "services/sizing/estimator.h"
#include "services/sizing/precision.h"
#include "services/sizing/serving_plan.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;

constexpr int kMaxCandidates = 96;
// Sequences per replica when neither the KV cache (a model without one) nor
// the engine's max_num_seqs bounds them.
constexpr double kNoKvBatch = 256;

struct Candidate {
  ServePlan plan;
  Memory mem;
  ServeSpeed speed;
  double usable = 0;           // bytes per GPU the engine claims
  double max_concurrency = 0;  // per replica
  double kv_tokens = 0;        // KV-cache capacity of a replica, tokens
  double target = 0;           // sequences per replica the workload asks for
  bool weights_fit = false;
  bool fits = false;
  bool valid = false;
  // How far the plan misses the request's serving SLOs: the sum of relative
  // shortfalls, 0 when it meets them all (or none is set).
  double slo_shortfall = 0;
};

// x < y by more than 0.1% of y: closer values tie.
bool Lower(double x, double y) { return x < y - 1e-3 * std::fabs(y); }

// Output tokens/s of the whole configuration
// (ConfigurationEstimate.tokens_per_second).
double TotalTokensPerSecond(const Candidate& c) {
  return c.plan.replicas * c.speed.output_tokens_per_second;
}

// Sum of relative shortfalls from the job's SLOs, on the numbers the
// estimate reports and with the gateway's comparisons (a value equal to the
// limit meets it); infinity when a number is not finite.
double SloShortfall(const Job& j, const Candidate& c) {
  const v1::ServingSlo& slo = j.serve.slo;
  double miss = 0;
  const double ttft = slo.max_time_to_first_token_seconds();
  if (ttft > 0 && !(c.speed.ttft_seconds <= ttft)) miss += c.speed.ttft_seconds / ttft - 1.0;
  const double per_user = slo.min_tokens_per_second_per_user();
  if (per_user > 0 && !(c.speed.user_tokens_per_second >= per_user)) {
    miss += 1.0 - c.speed.user_tokens_per_second / per_user;
  }
  const double total = slo.min_tokens_per_second();
  if (total > 0 && !(TotalTokensPerSecond(c) >= total))
    miss += 1.0 - TotalTokensPerSecond(c) / total;
  return std::isfinite(miss) ? miss : std::numeric_limits<double>::infinity();
}

// The SLOs `c` misses, in words with the numbers; "" when none.
std::string SloMisses(const Job& j, const Candidate& c) {
  const v1::ServingSlo& slo = j.serve.slo;
  std::string out;
  auto add = [&out](const std::string& text) {
    absl::StrAppend(&out, out.empty() ? "" : "; ", text);
  };
  const double ttft = slo.max_time_to_first_token_seconds();
  if (ttft > 0 && !(c.speed.ttft_seconds <= ttft)) {
    add(absl::StrFormat("first token in %.2f s > max_time_to_first_token_seconds %.2f",
                        c.speed.ttft_seconds, ttft));
  }
  const double per_user = slo.min_tokens_per_second_per_user();
  if (per_user > 0 && !(c.speed.user_tokens_per_second >= per_user)) {
    add(absl::StrFormat("%.1f tokens/s per user < min_tokens_per_second_per_user %.1f",
                        c.speed.user_tokens_per_second, per_user));
  }
  const double total = slo.min_tokens_per_second();
  if (total > 0 && !(TotalTokensPerSecond(c) >= total)) {
    add(absl::StrFormat("%.0f output tokens/s < min_tokens_per_second %.0f",
                        TotalTokensPerSecond(c), total));
  }
  return out;
}

// The speed the plan order maximises, of `a` against `b`, in words.
std::string SpeedAgainst(const Job& j, const Candidate& a, const Candidate& b) {
  return j.batch ? absl::StrFormat("%.0f against %.0f output tokens/s", TotalTokensPerSecond(a),
                                   TotalTokensPerSecond(b))
                 : absl::StrFormat("%.1f against %.1f tokens/s per user at full load",
                                   a.speed.user_tokens_per_second, b.speed.user_tokens_per_second);
}

// The fastest plan. A batch job: the highest total output rate. An endpoint:
// the highest full-load per-user speed (ServeSpeed::user_tokens_per_second,
// what tokens_per_second_per_user reports and the gateway's per-user floor
// checks), so that serial prefills of long prompts count; then the shorter
// inter-token latency. Values within 0.1% tie; a tie goes to less memory.
bool Faster(const Job& j, const Candidate& a, const Candidate& b) {
  if (j.batch) {
    const double x = a.plan.replicas * a.speed.output_tokens_per_second;
    const double y = b.plan.replicas * b.speed.output_tokens_per_second;
    if (Lower(y, x)) return true;
    if (Lower(x, y)) return false;
  } else {
    const double x = a.speed.user_tokens_per_second, y = b.speed.user_tokens_per_second;
    if (Lower(y, x)) return true;
    if (Lower(x, y)) return false;
    if (Lower(a.speed.step_seconds, b.speed.step_seconds)) return true;
    if (Lower(b.speed.step_seconds, a.speed.step_seconds)) return false;
  }
  return a.mem.Total() < b.mem.Total();
}

// The plan order with the request's serving SLOs: a plan that meets them all
// comes first, then the one that misses them least (relative shortfalls
// within 0.1% tie), then Faster.
bool Better(const Job& j, const Candidate& a, const Candidate& b) {
  if (a.slo_shortfall != b.slo_shortfall) {
    if (a.slo_shortfall == 0) return true;
    if (b.slo_shortfall == 0) return false;
    if (Lower(a.slo_shortfall, b.slo_shortfall)) return true;
    if (Lower(b.slo_shortfall, a.slo_shortfall)) return false;
  }
  return Faster(j, a, b);
}

std::string Describe(const ServePlan& p) {
  std::string d =
      p.tp * p.pp == 1
          ? absl::StrCat(p.replicas, p.replicas == 1 ? " replica" : " replicas", " on 1 GPU each")
          : absl::StrCat(p.replicas, p.replicas == 1 ? " replica" : " replicas", " of TP", p.tp,
                         " x PP", p.pp);
  if (p.ep > 1) absl::StrAppend(&d, " with experts over EP", p.ep);
  absl::StrAppend(&d, ", ", static_cast<int64_t>(p.batch), " concurrent sequences per replica");
  return d;
}

void FillPlan(const Candidate& c, v1::ParallelPlan* plan) {
  const ServePlan& p = c.plan;
  plan->set_data_parallel(p.replicas);
  plan->set_tensor_parallel(p.tp);
  plan->set_pipeline_parallel(p.pp);
  plan->set_expert_parallel(p.ep);
  plan->set_zero_stage(0);
  plan->set_offload(v1::OFFLOAD_NONE);
  plan->set_needs_nvlink(p.tp > 1);
  plan->set_needs_fabric(p.pp > 1);
  plan->set_replicas(p.replicas);
  plan->set_description(Describe(p));
  plan->set_step_seconds(c.speed.step_seconds);
  plan->set_communication_fraction(c.speed.communication_fraction);
}

Candidate Evaluate(const Job& j, const GpuSpec& gpu, const Links& links, int gpn, double capacity,
                   double margin_usable, ServePlan p) {
  Candidate c;
  c.plan = p;
  c.valid = true;
  const v1::FrameworkProfile& e = *j.framework;
  p.batch = 1;
  const Memory fixed = ServingMemory(j, p);
  const double base = fixed.Total() - fixed.kv;
  // A vram_margin the request sets is the engine's memory setting
  // (gpu_memory_utilization = 1 - margin); else the profile's default.
  c.usable = e.utilization_of_free_memory()
                 ? base + e.gpu_memory_utilization() * std::max(capacity - base, 0.0)
                 : e.gpu_memory_utilization() * capacity;
  if (j.vram_margin_given) c.usable = margin_usable;
  const double per_token = KvBytesPerTokenPerGpu(j, p);
  c.kv_tokens = c.usable > base && per_token > 0 ? std::floor((c.usable - base) / per_token) : 0.0;
  const double per_seq = KvBytesPerSequencePerGpu(j, p);
  c.weights_fit = base < c.usable;
  c.max_concurrency = c.weights_fit && per_seq > 0 ? std::floor((c.usable - base) / per_seq) : 0.0;
  // Batch jobs without concurrent_sequences run as many sequences as the KV
  // cache holds, up to the engine's max_num_seqs (0 = no such cap).
  const double cap = e.max_num_seqs() > 0 ? e.max_num_seqs() : kNoKvBatch;
  if (per_seq <= 0 && c.weights_fit) c.max_concurrency = cap;
  c.target = j.serve.concurrency > 0
                 ? std::ceil(j.serve.concurrency / p.replicas)
                 : (e.max_num_seqs() > 0 ? std::min(cap, c.max_concurrency) : c.max_concurrency);
  c.fits = c.weights_fit && c.target >= 1 && c.max_concurrency >= c.target;
  p.batch = std::max(1.0, c.fits ? c.target : std::min(c.target, std::max(c.max_concurrency, 1.0)));
  c.plan = p;
  c.mem = ServingMemory(j, p);
  c.speed = ServingSpeed(j, gpu, links, gpn, p);
  return c;
}

std::string RunnerUpReason(const Job& j, const Candidate& best, const Candidate& r) {
  if (r.slo_shortfall > 0 &&
      (best.slo_shortfall == 0 || Lower(best.slo_shortfall, r.slo_shortfall))) {
    std::string reason = absl::StrCat(
        best.slo_shortfall == 0 ? "misses the serving SLOs: " : "misses the serving SLOs by more: ",
        SloMisses(j, r));
    if (Faster(j, r, best)) {
      absl::StrAppend(&reason, " (", SpeedAgainst(j, r, best), ")");
    }
    return reason;
  }
  if (j.batch) {
    const double tb = best.plan.replicas * best.speed.output_tokens_per_second;
    const double tr = r.plan.replicas * r.speed.output_tokens_per_second;
    if (tr >= tb * 0.999) return "as fast, but needs more memory per GPU";
    return absl::StrFormat("%.0f%% less throughput (%.0f against %.0f output tokens/s)",
                           100.0 * (1.0 - tr / tb), tr, tb);
  }
  const double ub = best.speed.user_tokens_per_second, ur = r.speed.user_tokens_per_second;
  if (ur >= ub * 0.999 && r.speed.step_seconds <= best.speed.step_seconds * 1.001) {
    return "as fast, but needs more memory per GPU";
  }
  if (ur >= ub * 0.999) {
    return absl::StrFormat(
        "as fast per user at full load, but slower per token: %.1f ms against %.1f ms between "
        "tokens",
        1e3 * r.speed.step_seconds, 1e3 * best.speed.step_seconds);
  }
  const char* why = "";
  if (r.speed.prefill_fraction > best.speed.prefill_fraction + 0.05) {
    why = r.plan.tp < best.plan.tp ? " (slower prefills of the other users' prompts)"
                                   : " (more concurrent sequences share each replica's prefills)";
  } else if (r.speed.communication_fraction > best.speed.communication_fraction + 0.05) {
    why = " (more time in collectives)";
  } else if (r.plan.tp < best.plan.tp) {
    why = " (fewer GPUs share the weight reads)";
  }
  return absl::StrFormat(
      "slower per user at full load: %.1f against %.1f tokens/s (%.1f ms against %.1f ms between "
      "tokens)%s",
      ur, ub, 1e3 * r.speed.step_seconds, 1e3 * best.speed.step_seconds, why);
}

// Hints that no serving layout of this configuration can follow, or "".
std::string HintProblem(const Job& j, int gpn, int gpus) {
  if (j.tp_hint > 0 && (gpn % j.tp_hint != 0 && j.tp_hint % gpn != 0)) {
    return absl::StrCat("workload.parallelism.tensor_parallel: ", j.tp_hint,
                        " does not divide the ", gpn, " GPUs of a node");
  }
  if (j.tp_hint > gpn) {
    return absl::StrCat("workload.parallelism.tensor_parallel: ", j.tp_hint, " exceeds the ", gpn,
                        " GPUs of one node");
  }
  if (j.pp_hint > 0 && gpus % (std::max(1, j.tp_hint) * j.pp_hint) != 0) {
    return absl::StrCat("workload.parallelism.pipeline_parallel: ", j.pp_hint,
                        " x tensor_parallel does not divide the ", gpus, " GPUs");
  }
  return "";
}

// What a configuration offers the plan search.
struct ServingSetup {
  const GpuSpec* gpu = nullptr;
  Links links;
  int gpn = 1;
  int nodes = 1;
  double capacity = 0;
  double usable = 0;  // at the request's VRAM margin
};

// Candidates: TP inside a node, PP across nodes, EP over the TP group; each
// evaluated (memory, speed, SLO shortfall). Returns how many.
int ServingCandidates(const Job& j, const ServingSetup& c,
                      std::array<Candidate, kMaxCandidates>* cands) {
  const ModelSpec& m = *j.model;
  const int gpus = c.gpn * c.nodes;
  int tps[12], n_tp = 0, pps[12], n_pp = 0;
  if (j.tp_hint > 0) {
    tps[n_tp++] = j.tp_hint;
  } else {
    for (int tp = 1; tp <= c.gpn && n_tp < 12; tp *= 2) {
      if (c.gpn % tp == 0) tps[n_tp++] = tp;
    }
  }
  if (j.pp_hint > 0) {
    pps[n_pp++] = j.pp_hint;
  } else {
    pps[n_pp++] = 1;
    for (int pp = 2; pp <= c.nodes && pp <= m.layers && n_pp < 12; pp *= 2) {
      if (c.nodes % pp == 0) pps[n_pp++] = pp;
    }
  }
  int n = 0;
  const int experts = m.resolved.experts();
  for (int ti = 0; ti < n_tp; ++ti) {
    for (int pi = 0; pi < n_pp; ++pi) {
      const int tp = tps[ti], pp = pps[pi];
      if (gpus % (tp * pp) != 0) continue;
      int eps[2], n_ep = 0;
      if (j.ep_hint > 0) {
        if (j.ep_hint == 1 || (tp % j.ep_hint == 0 && experts % j.ep_hint == 0))
          eps[n_ep++] = j.ep_hint;
      } else {
        eps[n_ep++] = 1;
        if (j.moe && tp > 1 && experts % tp == 0) eps[n_ep++] = tp;
      }
      for (int ei = 0; ei < n_ep && n < kMaxCandidates; ++ei) {
        ServePlan p;
        p.tp = tp;
        p.pp = pp;
        p.ep = eps[ei];
        p.replicas = gpus / (tp * pp);
        Candidate& cand = (*cands)[n++];
        cand = Evaluate(j, *c.gpu, c.links, c.gpn, c.capacity, c.usable, p);
        if (cand.fits) cand.slo_shortfall = SloShortfall(j, cand);
      }
    }
  }
  return n;
}

struct ServingChoice {
  const Candidate* best = nullptr;
  const Candidate* runner = nullptr;
  const Candidate* fastest = nullptr;  // ignoring the SLOs, for the note on what they changed
  bool found = false;                  // best fits
};

// Among the plans that fit: the fastest that meets the SLOs (Better). When
// none fits, the layout that holds the most sequences (or, if the weights fit
// nowhere, the most sharded one), to show why.
ServingChoice ChooseServing(const Job& j, const std::array<Candidate, kMaxCandidates>& cands,
                            int n) {
  ServingChoice ch;
  for (int i = 0; i < n; ++i) {
    const Candidate& c = cands[i];
    if (!c.fits) continue;
    if (ch.best == nullptr || Better(j, c, *ch.best)) {
      ch.runner = ch.best;
      ch.best = &c;
    } else if (ch.runner == nullptr || Better(j, c, *ch.runner)) {
      ch.runner = &c;
    }
    if (ch.fastest == nullptr || Faster(j, c, *ch.fastest)) ch.fastest = &c;
  }
  ch.found = ch.best != nullptr;
  if (ch.found) return ch;
  for (int i = 0; i < n; ++i) {
    const Candidate& c = cands[i];
    if (ch.best == nullptr || c.max_concurrency > ch.best->max_concurrency ||
        (c.max_concurrency == ch.best->max_concurrency && c.mem.Total() < ch.best->mem.Total())) {
      ch.best = &c;
    }
  }
  return ch;
}

// Why the chosen layout does not fit, or "".
std::string ServingNotFitReason(const Job& j, const ServingSetup& s, const ServingChoice& ch) {
  const Candidate& c = *ch.best;
  const v1::FrameworkProfile& e = *j.framework;
  if (!c.weights_fit) {
    return absl::StrCat("needs ", FormatGb(c.mem.Total() - c.mem.kv),
                        " per GPU before any KV cache with ", c.plan.tp * c.plan.pp,
                        "-way sharding; ", s.gpu->name, " has ", FormatGb(s.capacity),
                        ", of which ", e.display_name(), " claims ", FormatGb(c.usable),
                        " (gpu_memory_utilization ", e.gpu_memory_utilization(), ")");
  }
  if (!ch.found) {
    return absl::StrCat("KV cache holds only ", static_cast<int64_t>(c.max_concurrency), " of the ",
                        static_cast<int64_t>(c.target), " concurrent sequences of ",
                        static_cast<int64_t>(j.serve.context), " tokens per replica (",
                        FormatGb(c.usable - (c.mem.Total() - c.mem.kv)),
                        " left for KV cache per GPU)");
  }
  if (c.plan.pp > 1 && !s.links.fabric) {
    return "pipeline stages across nodes need an inter-node fabric; this configuration has none";
  }
  if (s.links.max_nodes > 0 && s.nodes > s.links.max_nodes) {
    return absl::StrCat("the fabric of this offer spans at most ", s.links.max_nodes, " nodes");
  }
  return "";
}

// The notes of the chosen layout: SLOs, KV capacity, TP over PCIe, the
// precision, the wait for prefill capacity, non-autoregressive models.
void ServingNotes(const Job& j, const ServingSetup& s, const ServingChoice& ch,
                  v1::ConfigurationEstimate* out) {
  const Candidate& c = *ch.best;
  const v1::FrameworkProfile& e = *j.framework;
  if (ch.found && c.slo_shortfall > 0) {
    AddNote(
        v1::NOTE_SEVERITY_WARNING, "serving_slo_missed",
        absl::StrCat(
            "Serving SLOs: no layout on this configuration meets them; the one shown misses them "
            "least: ",
            SloMisses(j, c), "."),
        out);
  } else if (ch.found && ch.fastest != ch.best && ch.fastest->slo_shortfall > 0) {
    AddNote(v1::NOTE_SEVERITY_INFO, "serving_slo",
            absl::StrCat("Serving SLOs: layout chosen to meet them; the fastest, ",
                         Describe(ch.fastest->plan), " (", SpeedAgainst(j, *ch.fastest, c),
                         "), misses them: ", SloMisses(j, *ch.fastest), "."),
            out);
  }
  if (c.weights_fit) {
    AddNote(v1::NOTE_SEVERITY_INFO, "kv_capacity",
            absl::StrCat("KV cache: up to ", static_cast<int64_t>(c.max_concurrency),
                         " concurrent sequences of ", static_cast<int64_t>(j.serve.context),
                         " tokens per replica with ", e.display_name(), " (gpu_memory_utilization ",
                         e.gpu_memory_utilization(), ")."),
            out);
  }
  if (c.plan.tp > 1 && (s.links.bridged_or_pcie || c.plan.tp > s.links.domain_size)) {
    AddNote(v1::NOTE_SEVERITY_WARNING, "tp_over_pcie",
            "TP over a bridged/PCIe domain: per-layer all-reduces are slow; an NVLink/NVSwitch "
            "node serves faster.",
            out);
  }
  if (!j.precision_note.empty())
    AddNote(v1::NOTE_SEVERITY_INFO, "precision", j.precision_note, out);
  std::string peak_note;
  PeakFlops(*s.gpu, j.precision, false, &peak_note);
  if (!peak_note.empty())
    AddNote(j.precision == v1::PRECISION_FP8 ? v1::NOTE_SEVERITY_WARNING : v1::NOTE_SEVERITY_INFO,
            PeakNoteCode(j.precision), peak_note, out);
  if (!j.batch && c.speed.prefill_wait_seconds > 0.1 * c.speed.ttft_seconds) {
    AddNote(v1::NOTE_SEVERITY_INFO, "prefill_wait",
            absl::StrFormat("First token at the 90th percentile: %.2f s, of which %.2f s waiting "
                            "for prefill capacity (the other %d sequences' prompts keep each "
                            "replica %.0f%% busy prefilling).",
                            c.speed.ttft_seconds, c.speed.prefill_wait_seconds,
                            static_cast<int>(c.plan.batch) - 1, 100 * c.speed.prefill_fraction),
            out);
  }
  const ModelSpec& m = *j.model;
  if (m.kind == v1::MODEL_KIND_DIFFUSION || m.kind == v1::MODEL_KIND_ENCODER) {
    AddNote(v1::NOTE_SEVERITY_WARNING, "not_autoregressive",
            "Not an autoregressive model: token rates are indicative only.", out);
  }
}

// Outputs: per replica at its concurrency, and for the configuration.
void FillServing(const Job& j, const ServingSetup& setup, const Candidate& c,
                 v1::ConfigurationEstimate* out) {
  const ServeSpeed& s = c.speed;
  const int replicas = c.plan.replicas;
  v1::ServingEstimate* se = out->mutable_serving();
  se->set_time_to_first_token_seconds(s.ttft_seconds);
  se->set_unloaded_time_to_first_token_seconds(s.ttft_unloaded_seconds);
  se->set_prefill_wait_seconds(s.prefill_wait_seconds);
  se->set_time_to_first_token_percentile(kTtftPercentile);
  se->set_inter_token_latency_seconds(s.step_seconds);
  se->set_tokens_per_second_per_user(s.user_tokens_per_second);
  se->set_decode_tokens_per_second_per_user(s.step_seconds > 0 ? 1.0 / s.step_seconds : 0.0);
  se->set_prefill_fraction(s.prefill_fraction);
  // Prefill first: with long prompts it decides even when the KV cache is
  // full; else decode, at the KV cache's limit or below it.
  se->set_throughput_bound(s.prefill_fraction >= 0.5 ? v1::SERVING_BOUND_PREFILL
                           : c.max_concurrency > 0 && c.plan.batch >= c.max_concurrency
                               ? v1::SERVING_BOUND_KV_CAPACITY
                               : v1::SERVING_BOUND_DECODE);
  se->set_output_tokens_per_second_per_replica(s.output_tokens_per_second);
  se->set_output_tokens_per_second(replicas * s.output_tokens_per_second);
  se->set_requests_per_second(replicas * s.requests_per_second);
  se->set_replicas(replicas);
  se->set_concurrency_per_replica(static_cast<int>(c.plan.batch));
  se->set_max_concurrency_per_replica(static_cast<int>(c.max_concurrency));
  se->set_kv_cache_capacity_tokens_per_replica(static_cast<int64_t>(c.kv_tokens));
  se->set_gpu_memory_utilization(c.usable / setup.capacity);
  se->set_prefill_tokens_per_second_per_replica(s.prefill_tokens_per_second);

  // tokens_per_second: output tokens/s of the whole configuration, so that
  // a batch job's requests x output_tokens / tokens_per_second = its hours.
  out->set_tokens_per_second(se->output_tokens_per_second());
  out->set_prefill_tokens_per_second(replicas * s.prefill_tokens_per_second);
  std::string ignored;
  const double peak = PeakFlops(*setup.gpu, j.precision, false, &ignored);
  const int gpus = setup.gpn * setup.nodes;
  out->set_utilization(peak > 0 ? se->output_tokens_per_second() * 2.0 * j.model->compute_params /
                                      (gpus * peak)
                                : 0.0);
  out->set_communication_fraction(s.communication_fraction);
  out->set_goodput(1.0);
  if (!j.batch) {
    out->set_estimated_hours(j.serve.serving_hours);
  } else if (j.serve.requests > 0 && se->requests_per_second() > 0) {
    out->set_estimated_hours(j.serve.requests / se->requests_per_second() / 3600.0);
  } else {
    AddNote(v1::NOTE_SEVERITY_WARNING, "no_requests", "No requests given: estimated_hours is 0.",
            out);
  }
}

}  // namespace

// Serving follows training's shape: candidates -> choose -> fill.
void EstimateServing(const Job& j, const GpuSpec& gpu, const v1::GpuConfiguration& config,
                     v1::ConfigurationEstimate* out) {
  ServingSetup setup;
  setup.gpu = &gpu;
  setup.gpn = config.gpus_per_node();
  setup.nodes = config.nodes();
  setup.links = ResolveLinks(gpu, config, j.engine->links());
  setup.capacity = gpu.memory_bytes;
  setup.usable = setup.capacity * (1.0 - j.vram_margin);
  out->set_gpu_memory_bytes(static_cast<int64_t>(setup.capacity));
  for (const v1::Note& note : j.notes)
    AddNote(note.severity(), note.code().c_str(), note.text(), out);
  if (!setup.links.unsupported.empty()) return NotFit(setup.links.unsupported, out);
  const int gpus = setup.gpn * setup.nodes;
  if (std::string hint = HintProblem(j, setup.gpn, gpus); !hint.empty()) return NotFit(hint, out);

  std::array<Candidate, kMaxCandidates> cands;
  const int n = ServingCandidates(j, setup, &cands);
  if (n == 0) {
    return NotFit(absl::StrCat("workload.parallelism: no serving layout matches the hints on ",
                               gpus, " GPUs"),
                  out);
  }
  const ServingChoice choice = ChooseServing(j, cands, n);
  const Candidate& c = *choice.best;
  FillPlan(c, out->mutable_plan());
  SetMemory(c.mem.weights, c.mem.grads, c.mem.optimizer, c.mem.activations, c.mem.kv,
            c.mem.overhead, out->mutable_memory());
  out->set_memory_margin(1.0 - c.mem.Total() / setup.capacity);
  if (choice.found && choice.runner != nullptr) {
    FillPlan(*choice.runner, out->mutable_runner_up());
    out->set_runner_up_reason(RunnerUpReason(j, c, *choice.runner));
  }
  const std::string reason = ServingNotFitReason(j, setup, choice);
  out->set_fits(reason.empty());
  if (!reason.empty()) {
    out->set_not_fit_reason(reason);
    AddNote(v1::NOTE_SEVERITY_WARNING, "does_not_fit", reason, out);
  }
  ServingNotes(j, setup, choice, out);
  FillServing(j, setup, c, out);
}

}  // namespace gpuadvisor::sizing
