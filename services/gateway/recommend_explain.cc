// Stage 5: explain. One recommendation's figures and texts: reasons (what it
// costs and why it fits), warnings (what changes whether the job works or
// what it costs) and notes (context for numbers that already include it).

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/io/units.h"
#include "services/gateway/recommend_state.h"
#include "services/gateway/recommend_text.h"

namespace gpuadvisor::gateway::recommend {
namespace {

using catalog::v1::Offer;

// What bounds the serving total, with the numbers, and why the per-user
// speed times the users is the total rather than users x decode speed.
std::string ServingBoundText(const v1::ServingEstimate& s, const sizing::v1::ServingEstimate& in,
                             const sizing::v1::Workload& w) {
  const int per_replica = std::max(1, in.concurrency_per_replica());
  const std::string users =
      absl::StrCat("each of the ", per_replica, " concurrent sequences per replica gets ",
                   Fixed(s.tokens_per_second_per_user(), 1), " tokens/s");
  const std::string decode =
      absl::StrCat(Fixed(s.decode_tokens_per_second_per_user(), 1), " tokens/s, ",
                   Fixed(1000 * s.inter_token_latency_seconds(), 0),
                   " ms per token, between other sequences' prefills");
  switch (s.throughput_bound()) {
    case sizing::v1::SERVING_BOUND_PREFILL:
      return absl::StrCat(
          "throughput prefill-bound: prefilling the ",
          w.prompt_tokens() > 0 ? w.prompt_tokens() : w.context_length() - w.output_tokens(),
          "-token prompts takes ", Fixed(100 * s.prefill_fraction(), 0),
          "% of each replica's time at full load, so the total is ",
          Fixed(s.aggregate_tokens_per_second(), 0), " tokens/s and ", users, " (", decode,
          "); more compute per replica, shorter prompts or prefix caching raise it");
    case sizing::v1::SERVING_BOUND_KV_CAPACITY:
      return absl::StrCat("throughput KV-capacity-bound: the KV cache holds ",
                          in.max_concurrency_per_replica(), " sequences of ", w.context_length(),
                          " tokens per replica and all of them decode (",
                          Fixed(100 * (1 - s.prefill_fraction()), 0), "% of the time; prefill ",
                          Fixed(100 * s.prefill_fraction(), 0), "%), so the total is ",
                          Fixed(s.aggregate_tokens_per_second(), 0), " tokens/s and ", users, " (",
                          decode, "); more GPU memory per replica raises it");
    case sizing::v1::SERVING_BOUND_DECODE:
      return absl::StrCat("throughput decode-bound: the batched decode steps take ",
                          Fixed(100 * (1 - s.prefill_fraction()), 0),
                          "% of each replica's time at full load (prefill ",
                          Fixed(100 * s.prefill_fraction(), 0), "%), so the total is ",
                          Fixed(s.aggregate_tokens_per_second(), 0), " tokens/s and ", users, " (",
                          decode,
                          "); more concurrent sequences per replica would raise the total and "
                          "lower each one's speed");
    default:
      return absl::StrCat(users, " (", decode, ")");
  }
}

void AddOnce(google::protobuf::RepeatedPtrField<std::string>* list, const std::string& text) {
  if (std::find(list->begin(), list->end(), text) == list->end()) *list->Add() = text;
}

// Sizing's notes about the configuration: a WARNING note is a warning unless
// one of the gateway's own already says it (then its detail goes to the
// notes), an INFO note is a note. A plain note with no structured twin comes
// from an older sizing service that set no severity: a warning, as before.
void AddSizingNotes(const sizing::v1::ConfigurationEstimate& e, bool link_warned, bool fp16_warned,
                    v1::Recommendation* r) {
  auto covered = [&](const std::string& code, const std::string& text) {
    if (link_warned && (code == "tp_over_pcie" || code == "pcie_allreduce")) return true;
    if (fp16_warned && code == "no_bf16") return true;
    // The topic (the text before the first ':' or ',') of a warning already given.
    const absl::string_view topic = absl::string_view(text).substr(0, text.find_first_of(":,"));
    for (const std::string& warning : r->warnings()) {
      if (absl::StartsWithIgnoreCase(warning, topic)) return true;
    }
    return false;
  };
  for (const sizing::v1::Note& note : e.structured_notes()) {
    if (note.text().empty()) continue;
    if (note.severity() == sizing::v1::NOTE_SEVERITY_INFO || covered(note.code(), note.text())) {
      AddOnce(r->mutable_notes(), note.text());
    } else {
      AddOnce(r->mutable_warnings(), note.text());
    }
  }
  for (const std::string& text : e.notes()) {
    bool structured = false;
    for (const sizing::v1::Note& note : e.structured_notes()) structured |= note.text() == text;
    if (structured) continue;
    if (covered("", text)) {
      AddOnce(r->mutable_notes(), text);
    } else {
      AddOnce(r->mutable_warnings(), text);
    }
  }
}

}  // namespace

v1::Overheads RunState::OverheadsOf(const Candidate& candidate) const {
  if (overheads_ == nullptr) return v1::Overheads();
  return overheads_->For(OverheadRuleOf(candidate), RunOf(candidate));
}

v1::ServingEstimate RunState::Serving(const sizing::v1::ConfigurationEstimate& e,
                                      int32_t spare_nodes, double usd_per_hour) const {
  // Sizing's serving numbers (ServingEstimate: per replica at its
  // concurrency, and for the cluster); the gateway adds the spare replicas
  // of a spot endpoint and the price per token.
  v1::ServingEstimate s;
  if (!serving_) return s;
  const sizing::v1::ServingEstimate& in = e.serving();
  const int nodes = std::max(1, e.configuration().nodes());
  const int replicas = std::max(1, in.replicas());
  const double aggregate = in.output_tokens_per_second();
  s.set_replicas(replicas);
  s.set_spare_replicas(spare_nodes * std::max(1, replicas / nodes));
  s.set_aggregate_tokens_per_second(aggregate);
  s.set_time_to_first_token_seconds(in.time_to_first_token_seconds());
  s.set_inter_token_latency_seconds(in.inter_token_latency_seconds());
  s.set_tokens_per_second_per_user(in.tokens_per_second_per_user());
  s.set_decode_tokens_per_second_per_user(in.decode_tokens_per_second_per_user());
  s.set_throughput_bound(in.throughput_bound());
  s.set_prefill_fraction(in.prefill_fraction());
  s.set_max_concurrency_per_replica(in.max_concurrency_per_replica());
  s.set_kv_cache_capacity_tokens_per_replica(in.kv_cache_capacity_tokens_per_replica());
  s.set_concurrent_sequences(in.concurrency_per_replica() * replicas);
  s.set_requests_per_second(in.requests_per_second());
  if (aggregate > 0 && usd_per_hour > 0) {
    s.set_usd_per_million_output_tokens(usd_per_hour / (aggregate * 3600.0) * 1e6);
  }
  return s;
}

void RunState::Explain(const Candidate& candidate, const pricing::v1::Quote& quote,
                       v1::Recommendation& r) const {
  const Offer& offer = OfferOf(candidate);
  // Room for the usual texts at once (the lists would grow, on the arena,
  // from 4 to 8 to 16).
  r.mutable_reasons()->Reserve(16);
  r.mutable_notes()->Reserve(8);
  r.mutable_warnings()->Reserve(8);
  const sizing::v1::ConfigurationEstimate& e = Est(candidate.config);
  *r.mutable_offer() = offer;
  r.mutable_offer()->set_nodes(candidate.nodes);
  r.set_purchase_option(candidate.option);
  *r.mutable_memory() = e.memory();
  *r.mutable_parallel_plan() = e.plan();
  r.set_estimated_hours(quote.cost().expected_hours() > 0 ? quote.cost().expected_hours()
                                                          : e.estimated_hours());
  *r.mutable_cost() = quote.cost();
  if (quote.has_commitment()) {  // reserved: the term priced and what it pays for
    *r.mutable_commitment() = quote.commitment();
    r.set_commitment_terms_bought(quote.terms_bought());
    r.set_committed_hours(quote.committed_hours());
  }
  r.set_tokens_per_second(e.tokens_per_second());
  r.set_memory_margin(e.memory_margin());
  r.set_gpu_memory_bytes(e.gpu_memory_bytes());
  r.set_optimal_checkpoint_interval_minutes(quote.optimal_checkpoint_interval_minutes());
  *r.mutable_overheads() = OverheadsOf(candidate);
  // Checkpoint writes are pricing's, the same rule on every purchase option.
  r.mutable_overheads()->set_checkpoint_hours(quote.checkpoint_hours());
  r.mutable_overheads()->set_total_hours(r.overheads().total_hours() + quote.checkpoint_hours());
  r.mutable_overheads()->set_usd(r.overheads().total_hours() * quote.cost().usd_per_hour());
  ExplainReasons(candidate, quote, r);
  ExplainUncertainty(candidate, quote, r);
  ExplainWarnings(candidate, quote, r);
}

// The overheads, serving figures, fit, plan, time and cost, and the links.
void RunState::ExplainReasons(const Candidate& candidate, const pricing::v1::Quote& quote,
                              v1::Recommendation& r) const {
  const Offer& offer = OfferOf(candidate);
  const sizing::v1::ConfigurationEstimate& e = Est(candidate.config);
  if (r.overheads().total_hours() > 0) {
    const v1::Overheads& o = r.overheads();
    r.add_reasons(absl::StrCat(
        "overheads ", Fixed(o.total_hours(), 2), " h, $", Fixed(o.usd(), 2), ": start-up ",
        Fixed(o.startup_hours(), 2), " h, image pull ", Fixed(o.image_pull_hours(), 2),
        " h, model and data download ", Fixed(o.download_hours(), 2), " h at ",
        General(o.download_gbps()), " Gbps (",
        offer.network().gbps() > 0 && offer.network().gbps() <= o.download_gbps()
            ? "the instance's published network"
            : "the provider's practical download rate, data/gateway/overheads.textproto",
        "), checkpoint writes ", Fixed(o.checkpoint_hours(), 2), " h (included)"));
  }
  if (serving_) ExplainServing(candidate, quote, r);

  // common/io's FormatGb ("%.1f GB") without a format string: it runs per recommendation.
  r.add_reasons(absl::StrCat("fits: ", Fixed(e.memory().total_bytes() / 1e9, 1), " GB of ",
                             Fixed(e.gpu_memory_bytes() / 1e9, 1), " GB per GPU (",
                             Fixed(100 * e.memory_margin(), 0), "% free)"));
  if (!e.plan().description().empty())
    r.add_reasons(absl::StrCat("plan: ", e.plan().description()));
  r.add_reasons(absl::StrCat(
      Fixed(r.estimated_hours(), 1), " h at ", Fixed(e.tokens_per_second(), 0), " tokens/s, $",
      Fixed(quote.cost().total_usd(), 2), " in total ($", Fixed(quote.cost().usd_per_hour(), 2),
      "/h, ", OptionName(candidate.option), ")"));
  {
    const pricing::v1::CostBreakdown& cost = quote.cost();
    std::string egress = absl::StrCat("egress $", Fixed(cost.egress_usd(), 2));
    if (egress_gb_ > 0) {
      absl::StrAppend(&egress, " (", Gigabytes(egress_gb_), " GB out at ", offer.provider(),
                      "'s rate", cost.egress_usd() > 0 ? "" : ": free or within its allowance",
                      ")");
    }
    r.add_reasons(absl::StrCat("cost: compute $", Fixed(cost.compute_usd(), 2), ", storage $",
                               Fixed(cost.storage_usd(), 2), ", ", egress,
                               ", expected preemption loss $", Fixed(cost.preemption_usd(), 2)));
  }
  if (offer.gpus_per_node() * candidate.nodes > 1 &&
      offer.link() == catalog::v1::LINK_TYPE_NVLINK) {
    r.add_reasons(absl::StrCat("NVLink between GPUs (",
                               Fixed(offer.link_bytes_per_second() / 1e9, 0), " GB/s per GPU)"));
  }
  if (candidate.nodes > 1) {
    r.add_reasons(absl::StrCat(candidate.nodes, " nodes over ", FabricName(offer.fabric()), " (",
                               Fixed(offer.fabric_gbps(), 0), " Gbps per node)"));
  }
}

void RunState::ExplainServing(const Candidate& candidate, const pricing::v1::Quote& quote,
                              v1::Recommendation& r) const {
  const sizing::v1::ConfigurationEstimate& e = Est(candidate.config);
  *r.mutable_serving() = Serving(e, candidate.spare_nodes, quote.cost().usd_per_hour());
  const v1::ServingEstimate& s = r.serving();
  if (s.tokens_per_second_per_user() > 0) {
    r.add_reasons(
        absl::StrCat("serving: first token in ", Fixed(s.time_to_first_token_seconds(), 2), " s, ",
                     Fixed(s.tokens_per_second_per_user(), 1), " tokens/s per user at full load, ",
                     Fixed(s.aggregate_tokens_per_second(), 0), " tokens/s over ", s.replicas(),
                     " replica(s), $", Fixed(s.usd_per_million_output_tokens(), 2),
                     " per million output tokens at full load"));
    const std::string bound = ServingBoundText(s, e.serving(), request_.workload());
    r.mutable_serving()->set_throughput_bound_text(bound);
    r.add_reasons(bound);
  }
}

// Warnings change whether the job works or what it costs, or need a check
// before renting; notes are context for numbers that already include it.
void RunState::ExplainWarnings(const Candidate& candidate, const pricing::v1::Quote& quote,
                               v1::Recommendation& r) const {
  const Offer& offer = OfferOf(candidate);
  const sizing::v1::ConfigurationEstimate& e = Est(candidate.config);
  const sizing::v1::Workload& w = request_.workload();
  const catalog::v1::Gpu* gpu = GpuOf(candidate);  // cached per GPU model
  const int total_gpus = offer.gpus_per_node() * candidate.nodes;
  const bool data_or_tensor_parallel = training_ || e.plan().tensor_parallel() > 1;
  const bool pcie_bound =
      total_gpus > 1 && offer.link() == catalog::v1::LINK_TYPE_PCIE && data_or_tensor_parallel;
  if (pcie_bound) {
    r.add_warnings(absl::StrCat("PCIe-only multi-GPU: all-reduce bound across ",
                                offer.gpus_per_node(), " GPUs without NVLink"));
  }
  const bool fp16_only_training = training_ && gpu != nullptr && !gpu->supports_bf16() &&
                                  w.precision() != sizing::v1::PRECISION_FP32;
  if (fp16_only_training)
    r.add_warnings("FP16-only GPU (no BF16): overflow risk in training; needs loss scaling");
  if (IsServing(w.task()) && gpu != nullptr &&
      gpu->memory_type() == catalog::v1::MEMORY_TYPE_GDDR) {
    r.add_notes(absl::StrCat("GDDR card (",
                             Fixed(gpu->memory_bandwidth_bytes_per_second() / 1e12, 2),
                             " TB/s): decode is memory-bandwidth-bound (the speeds above "
                             "include it); HBM GPUs serve faster"));
  }
  for (const std::string& warning : quote.warnings()) r.add_warnings(warning);
  if (candidate.spare_nodes > 0) {
    r.add_warnings(absl::StrCat(
        "spot endpoint: priced with ", candidate.spare_nodes, " spare node(s) (",
        r.serving().spare_replicas(),
        " extra replica(s)) so it keeps serving through a preemption (about ",
        Fixed(quote.interruptions_per_hour(), 2),
        " interruptions/h across the cluster); each one still drops the requests in flight"));
  }
  if (e.memory_margin() < vram_margin_ + 0.05) {
    r.add_warnings(absl::StrCat("VRAM margin tight: ", Fixed(100 * e.memory_margin(), 0),
                                "% free (asked for ", Fixed(100 * vram_margin_, 0), "%)"));
  }
  if (candidate.nodes > 1 && offer.fabric() == catalog::v1::FABRIC_TYPE_ETHERNET) {
    r.add_warnings(absl::StrCat("multi-node over Ethernet (", Fixed(offer.fabric_gbps(), 0),
                                " Gbps): slow gradient sync"));
  }
  const bool tp_off_nvlink =
      e.plan().needs_nvlink() && offer.link() != catalog::v1::LINK_TYPE_NVLINK;
  if (tp_off_nvlink && !pcie_bound) {
    r.add_warnings(absl::StrCat("tensor parallel over ", LinkName(offer.link()), ", not NVLink"));
  }
  AddSizingNotes(e, pcie_bound || tp_off_nvlink, fp16_only_training, &r);
  if (offer.availability() == catalog::v1::AVAILABILITY_UNSPECIFIED) {
    r.add_warnings("availability unconfirmed: check capacity before provisioning");
  } else if (offer.availability() == catalog::v1::AVAILABILITY_LIMITED) {
    r.add_warnings("limited availability: keep the next recommendation as a fallback");
  }
}

}  // namespace gpuadvisor::gateway::recommend
