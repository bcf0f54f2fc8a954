#ifndef GPUADVISOR_COMMON_VALIDATION_FIELD_RANGES_H_
#define GPUADVISOR_COMMON_VALIDATION_FIELD_RANGES_H_

// The physical range of every numeric input of every RPC, in one table that
// every service checks at its boundary (issue 24 item 3): the gateway's gRPC
// methods and so its HTTP/JSON routes (which call them in-process), sizing's
// Estimate, pricing's Quote and UpdatePrices, the catalog's ListOffers and the
// watches. A number outside its range is INVALID_ARGUMENT naming the field
// path, before any arithmetic, so no answer can overflow to inf or NaN.
//
// These are sanity bounds on input, not facts about hardware or markets: each
// leaves orders of magnitude above anything real (the largest model, cluster,
// dataset or price in data/) while keeping every product the services form
// from them (tokens x FLOPs, nodes x hours x price) far from overflow.
// Checks that relate two fields (max_gpus >= min_gpus, output_tokens <
// context_length) stay with the service that knows their meaning.
//
// field_ranges_test checks that every numeric field reachable from every
// RPC's request has a row here, and that every row names a numeric field: a
// new numeric field in proto/ needs its row before the test passes.

#include <cmath>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace gpuadvisor::validation {

struct FieldRange {
  // The field's full proto name: "gpuadvisor.sizing.v1.Workload.dataset_gb".
  std::string_view field;
  double min = 0;  // inclusive
  double max = 0;  // inclusive
  // 0 is accepted besides [min, max] (proto3's "unset": auto, no limit, the
  // default). Fields with presence (`optional`) are checked only when set.
  bool zero_is_unset = true;
  std::string_view unit;  // for the error text and docs: "GB", "hours", ""
};

inline constexpr double kMaxUsdPerHour = 10'000;  // any one instance-hour
inline constexpr double kMaxJobGb = 1e9;          // an exabyte
inline constexpr double kMaxHours = 1e6;          // 114 years
inline constexpr double kMaxParams = 1e14;        // 100 T parameters
inline constexpr double kMaxTokens = 1e16;
inline constexpr double kMaxBytesPerSecond = 1e15;  // 1 PB/s per GPU or link
inline constexpr double kMaxGbps = 1e7;

// clang-format off
inline constexpr FieldRange kFieldRanges[] = {
    // catalog.v1.ListOffersRequest (catalog and gateway ListOffers, GET /v1/offers)
    {"gpuadvisor.catalog.v1.ListOffersRequest.min_gpu_memory_bytes", 0, 1e13, true, "bytes"},
    {"gpuadvisor.catalog.v1.ListOffersRequest.min_gpus", 0, 65536, true, "GPUs per node"},
    {"gpuadvisor.catalog.v1.ListOffersRequest.max_gpus", 0, 65536, true, "GPUs per node"},
    {"gpuadvisor.catalog.v1.ListOffersRequest.max_usd_per_hour", 0, kMaxUsdPerHour, true, "USD per hour"},
    {"gpuadvisor.catalog.v1.ListOffersRequest.page_size", 0, 1'000'000, true, "offers (served up to 1000)"},
    {"gpuadvisor.catalog.v1.WatchCatalogRequest.heartbeat_interval_millis", 0, 86'400'000, true, "ms"},
    // catalog.v1 topology inside sizing's GpuConfiguration
    {"gpuadvisor.catalog.v1.ScaleUpDomain.domain_size", 0, 65536, true, "GPUs"},
    {"gpuadvisor.catalog.v1.ScaleUpDomain.bytes_per_second_per_gpu", 0, kMaxBytesPerSecond, true, "bytes/s"},
    {"gpuadvisor.catalog.v1.ScaleUpDomain.cross_domain_bytes_per_second_per_gpu", 0, kMaxBytesPerSecond, true, "bytes/s"},
    {"gpuadvisor.catalog.v1.ScaleOutFabric.gbps_per_node", 0, kMaxGbps, true, "Gbit/s"},
    {"gpuadvisor.catalog.v1.ScaleOutFabric.max_nodes", 0, 1 << 20, true, "nodes"},
    // pricing.v1 (Quote, UpdatePrices, WatchPrices)
    {"gpuadvisor.pricing.v1.QuoteItem.nodes", 1, 100'000, false, "nodes"},
    {"gpuadvisor.pricing.v1.QuoteItem.hours", 0, kMaxHours, true, "hours"},
    {"gpuadvisor.pricing.v1.JobProfile.dataset_gb", 0, kMaxJobGb, true, "GB"},
    {"gpuadvisor.pricing.v1.JobProfile.checkpoint_gb", 0, kMaxJobGb, true, "GB"},
    {"gpuadvisor.pricing.v1.JobProfile.egress_gb", 0, kMaxJobGb, true, "GB"},
    {"gpuadvisor.pricing.v1.JobProfile.checkpoint_interval_minutes", 0, 6e7, true, "minutes"},
    {"gpuadvisor.pricing.v1.JobProfile.checkpoint_write_minutes", 0, 6e7, true, "minutes"},
    {"gpuadvisor.pricing.v1.OfferPrice.on_demand_usd_per_hour", 0, kMaxUsdPerHour, true, "USD per hour"},
    {"gpuadvisor.pricing.v1.OfferPrice.spot_usd_per_hour", 0, kMaxUsdPerHour, true, "USD per hour"},
    {"gpuadvisor.pricing.v1.OfferPrice.reserved_usd_per_hour", 0, kMaxUsdPerHour, true, "USD per hour"},
    {"gpuadvisor.pricing.v1.WatchPricesRequest.heartbeat_interval_millis", 0, 86'400'000, true, "ms"},
    {"gpuadvisor.pricing.v1.CommitmentLimits.max_term_hours", 0, kMaxHours, false, "hours"},
    {"gpuadvisor.catalog.v1.CommitmentTerm.term_hours", 0, kMaxHours, true, "hours"},
    {"gpuadvisor.catalog.v1.CommitmentTerm.upfront_usd", 0, kMaxUsdPerHour * kMaxHours, true, "USD"},
    {"gpuadvisor.catalog.v1.CommitmentTerm.usd_per_hour", 0, kMaxUsdPerHour, true, "USD per hour"},
    {"gpuadvisor.catalog.v1.CommitmentTerm.discount_fraction", 0, 0.99, true, "fraction off on-demand"},
    // sizing.v1.Model (a preset's overrides or a whole architecture)
    {"gpuadvisor.sizing.v1.Model.params", 0, kMaxParams, true, "parameters"},
    {"gpuadvisor.sizing.v1.Model.active_params", 0, kMaxParams, true, "parameters"},
    {"gpuadvisor.sizing.v1.Model.layers", 0, 10'000, true, ""},
    {"gpuadvisor.sizing.v1.Model.hidden_size", 0, 1 << 20, true, ""},
    {"gpuadvisor.sizing.v1.Model.attention_heads", 0, 1 << 16, true, ""},
    {"gpuadvisor.sizing.v1.Model.kv_heads", 0, 1 << 16, true, ""},
    {"gpuadvisor.sizing.v1.Model.head_dim", 0, 1 << 16, true, ""},
    {"gpuadvisor.sizing.v1.Model.intermediate_size", 0, 1 << 24, true, ""},
    {"gpuadvisor.sizing.v1.Model.vocab_size", 0, 1 << 24, true, "tokens"},
    {"gpuadvisor.sizing.v1.Model.experts", 0, 1 << 16, true, ""},
    {"gpuadvisor.sizing.v1.Model.active_experts", 0, 1 << 16, true, ""},
    {"gpuadvisor.sizing.v1.Model.max_context_length", 0, 1 << 27, true, "tokens"},
    {"gpuadvisor.sizing.v1.Model.rope_scaled_max_context_length", 0, 1 << 27, true, "tokens"},
    {"gpuadvisor.sizing.v1.Model.kv_lora_rank", 0, 1 << 20, true, ""},
    {"gpuadvisor.sizing.v1.Model.qk_rope_head_dim", 0, 1 << 16, true, ""},
    {"gpuadvisor.sizing.v1.Model.sliding_window", 0, 1 << 27, true, "tokens"},
    {"gpuadvisor.sizing.v1.Model.sliding_window_layers", 0, 10'000, true, ""},
    {"gpuadvisor.sizing.v1.Model.shared_experts", 0, 1 << 16, true, ""},
    {"gpuadvisor.sizing.v1.Model.expert_intermediate_size", 0, 1 << 24, true, ""},
    {"gpuadvisor.sizing.v1.Model.dense_layers", 0, 10'000, true, ""},
    {"gpuadvisor.sizing.v1.Model.checkpoint_weight_bytes", 0, 1e16, true, "bytes"},
    // sizing.v1.Workload and Parallelism
    {"gpuadvisor.sizing.v1.Workload.micro_batch_size", 0, 1 << 16, true, "sequences"},
    {"gpuadvisor.sizing.v1.Workload.global_batch_size", 0, 1 << 26, true, "sequences"},
    {"gpuadvisor.sizing.v1.Workload.sequence_length", 0, 1 << 24, true, "tokens"},
    {"gpuadvisor.sizing.v1.Workload.train_tokens", 0, kMaxTokens, true, "tokens"},
    {"gpuadvisor.sizing.v1.Workload.dataset_tokens", 0, kMaxTokens, true, "tokens"},
    {"gpuadvisor.sizing.v1.Workload.epochs", 0, 1e6, true, ""},
    {"gpuadvisor.sizing.v1.Workload.lora_rank", 0, 1 << 16, true, ""},
    {"gpuadvisor.sizing.v1.Workload.context_length", 0, 1 << 27, true, "tokens"},
    {"gpuadvisor.sizing.v1.Workload.concurrent_sequences", 0, 1 << 20, true, "sequences"},
    {"gpuadvisor.sizing.v1.Workload.output_tokens", 0, 1 << 27, true, "tokens"},
    {"gpuadvisor.sizing.v1.Workload.prompt_tokens", 0, 1 << 27, true, "tokens"},
    {"gpuadvisor.sizing.v1.Workload.requests", 0, 1e15, true, "requests"},
    {"gpuadvisor.sizing.v1.Workload.dataset_gb", 0, kMaxJobGb, true, "GB"},
    {"gpuadvisor.sizing.v1.Workload.egress_gb", 0, kMaxJobGb, true, "GB"},
    {"gpuadvisor.sizing.v1.Workload.checkpoint_interval_minutes", 0, 1e7, true, "minutes"},
    {"gpuadvisor.sizing.v1.Workload.serving_hours", 0, kMaxHours, true, "hours"},
    {"gpuadvisor.sizing.v1.Parallelism.zero_stage", 0, 3, true, ""},
    {"gpuadvisor.sizing.v1.Parallelism.zero_stage_hint", 0, 3, true, "(0 = plain DDP)"},
    {"gpuadvisor.sizing.v1.Parallelism.tensor_parallel", 0, 1024, true, "GPUs"},
    {"gpuadvisor.sizing.v1.Parallelism.pipeline_parallel", 0, 4096, true, "stages"},
    {"gpuadvisor.sizing.v1.Parallelism.expert_parallel", 1, 65536, false, "GPUs"},
    // sizing.v1.EstimateRequest
    {"gpuadvisor.sizing.v1.GpuConfiguration.gpus_per_node", 1, 1024, false, "GPUs"},
    {"gpuadvisor.sizing.v1.GpuConfiguration.nodes", 1, 100'000, false, "nodes"},
    {"gpuadvisor.sizing.v1.GpuConfiguration.link_bytes_per_second", 0, kMaxBytesPerSecond, true, "bytes/s"},
    {"gpuadvisor.sizing.v1.GpuConfiguration.host_link_bytes_per_second", 0, kMaxBytesPerSecond, true, "bytes/s"},
    {"gpuadvisor.sizing.v1.GpuConfiguration.fabric_gbps", 0, kMaxGbps, true, "Gbit/s"},
    {"gpuadvisor.sizing.v1.EstimateRequest.vram_margin", 0, 0.9, true, "fraction kept free"},
    {"gpuadvisor.sizing.v1.ServingSlo.max_time_to_first_token_seconds", 0, 1e6, true, "seconds"},
    {"gpuadvisor.sizing.v1.ServingSlo.min_tokens_per_second_per_user", 0, 1e9, true, "tokens/s"},
    {"gpuadvisor.sizing.v1.ServingSlo.min_tokens_per_second", 0, 1e12, true, "tokens/s"},
    // gateway.v1 (Recommend, Estimate; POST /v1/recommend, /v1/estimate)
    {"gpuadvisor.gateway.v1.RecommendRequest.max_results", 0, 100, true, "answers"},
    {"gpuadvisor.gateway.v1.Constraints.max_usd_per_hour", 0, 1e7, true, "USD per hour"},
    {"gpuadvisor.gateway.v1.Constraints.max_total_usd", 0, 1e12, true, "USD"},
    {"gpuadvisor.gateway.v1.Constraints.deadline_hours", 0, kMaxHours, true, "hours"},
    {"gpuadvisor.gateway.v1.Constraints.max_gpus", 0, 1 << 20, true, "GPUs"},
    {"gpuadvisor.gateway.v1.Constraints.max_nodes", 0, 1024, true, "nodes"},
    {"gpuadvisor.gateway.v1.Constraints.vram_margin", 0, 0.9, true, "fraction kept free"},
    {"gpuadvisor.gateway.v1.Constraints.min_tokens_per_second", 0, 1e12, true, "tokens/s"},
    {"gpuadvisor.gateway.v1.Constraints.max_time_to_first_token_seconds", 0, 1e6, true, "seconds"},
    {"gpuadvisor.gateway.v1.Constraints.min_tokens_per_second_per_user", 0, 1e9, true, "tokens/s"},
    {"gpuadvisor.gateway.v1.Constraints.min_user_tokens_per_second", 0, 1e9, true, "tokens/s"},
    {"gpuadvisor.gateway.v1.Constraints.min_host_reliability", 0, 1, true, "fraction"},
    {"gpuadvisor.gateway.v1.Constraints.tie_band_fraction", 0, 1, false, "fraction"},
    {"gpuadvisor.gateway.v1.Constraints.confidence", 0.5, 0.99, false, "probability"},
    {"gpuadvisor.gateway.v1.Constraints.max_commitment_years", 0, 100, false, "years"},
    {"gpuadvisor.gateway.v1.EstimateRequest.vram_margin", 0, 0.9, true, "fraction kept free"},
};
// clang-format on

// The row of `full_name`; at compile time when used in a constant expression
// (an unknown name then fails to compile).
constexpr const FieldRange& RangeOf(std::string_view full_name) {
  for (const FieldRange& range : kFieldRanges) {
    if (range.field == full_name) return range;
  }
  throw "no row in kFieldRanges";  // not a constant expression: a compile error
}

// The row of `field`, or nullptr.
const FieldRange* FindRange(const google::protobuf::FieldDescriptor* field);

// Whether `field` holds a number (double, float or an integer type): the
// kinds of field a row can bound.
bool IsNumeric(const google::protobuf::FieldDescriptor* field);

// The number `field` of `message` holds (element `index` of a repeated field,
// or -1 for a singular one), as a double; 0 for a field that is not numeric.
double NumericValue(const google::protobuf::Message& message,
                    const google::protobuf::FieldDescriptor* field, int index = -1);

// Whether `value` is within `range` (finite; 0 when it means unset).
inline bool InRange(const FieldRange& range, double value) {
  return (value >= range.min && value <= range.max) || (range.zero_is_unset && value == 0);
}

// INVALID_ARGUMENT "<path>: must be finite, >= <min> and <= <max> ..." when
// `value` is outside `range`, else OK. `path` names the field as the request
// spells it ("workload.dataset_gb", "items[3].nodes").
absl::Status CheckValue(const FieldRange& range, double value, absl::string_view path);

// Checks every numeric field of `message` that has a row (through singular
// sub-messages that are set and every element of repeated ones) and returns
// the first field out of range, its path prefixed by `path` ("" at a
// request's root; "workload.model" for a nested message). Thread-safe.
absl::Status CheckRanges(const google::protobuf::Message& message, absl::string_view path = "");

}  // namespace gpuadvisor::validation

#endif  // GPUADVISOR_COMMON_VALIDATION_FIELD_RANGES_H_
