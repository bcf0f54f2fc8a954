#ifndef GPUADVISOR_SERVICES_SIZING_MODEL_SPEC_H_
#define GPUADVISOR_SERVICES_SIZING_MODEL_SPEC_H_

// A model architecture resolved into the numbers the sizing math needs.
// Building one validates the architecture; everything after that is
// arithmetic on plain doubles.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/validation/field_ranges.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::sizing {

// Largest parameter count accepted (1e14: 100x the largest models trained),
// the range of Model.params in the shared table.
inline constexpr double kMaxParams = validation::kMaxParams;

struct ModelSpec {
  // The resolved architecture as returned to clients (every derived field
  // filled in).
  gpuadvisor::sizing::v1::Model resolved;

  gpuadvisor::sizing::v1::ModelKind kind = gpuadvisor::sizing::v1::MODEL_KIND_DECODER;
  double params = 0;         // total, all experts
  double active_params = 0;  // per token
  double layers = 0;
  double hidden = 0;
  double heads = 0;
  double kv_heads = 0;
  double head_dim = 0;
  double intermediate = 0;
  double vocab = 0;
  double max_context = 0;
  // The window when every layer has it (0 for a hybrid model, whose KV is
  // then sized as all-global here; see kv_cache.h for the per-layer figure).
  double sliding_window = 0;
  double sliding_window_layers = 0;  // layers with Model.sliding_window
  bool tied_embeddings = false;
  bool gated_mlp = false;
  bool mla = false;
  // True when layers/hidden/heads were not given and were estimated from the
  // parameter count (N ~ 12 L h^2 with h = 128 L).
  bool shape_estimated = false;

  // Derived quantities.
  double embedding_params = 0;        // input embedding, V x h
  double lm_head_params = 0;          // untied output matrix (0 when tied)
  double compute_params = 0;          // active params in matmuls per token
  double routed_expert_params = 0;    // all routed experts of an MoE, 0 if dense
  double active_expert_fraction = 0;  // active / routed experts (MoE)
  double largest_layer_params = 0;    // max(one block, embedding): ZeRO-3 gather unit
  double kv_layers = 0;               // layers that keep a KV cache
  double kv_elements_per_token = 0;   // cached elements per token, all layers
  double kv_tp_shards = 1;            // most ways the KV cache splits under TP
  double attention_width = 0;         // heads x head_dim
  // Activation elements stored per token per layer for backward, no
  // checkpointing, FlashAttention (no s^2 scores), no dropout: both residual
  // inputs (2h), Q, K, V, attention output, and the MLP intermediates
  // (3I gated / 2I plain, times the active experts for MoE).
  double activation_elements_per_token_layer = 0;
};

// Overlays every non-zero field of `overrides` on `base` (preset).
gpuadvisor::sizing::v1::Model MergeModel(const gpuadvisor::sizing::v1::Model& base,
                                         const gpuadvisor::sizing::v1::Model& overrides);

// Validates `model` and derives what is missing. Errors are kInvalidArgument
// "<path>.<field>: <reason>", e.g. "workload.model.params: must be > 0".
absl::StatusOr<ModelSpec> BuildModelSpec(const gpuadvisor::sizing::v1::Model& model,
                                         absl::string_view path);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_MODEL_SPEC_H_
