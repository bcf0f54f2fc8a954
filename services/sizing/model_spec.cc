#include "services/sizing/model_spec.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/validation/field_ranges.h"
#include "services/sizing/formulas.h"

namespace gpuadvisor::sizing {
namespace {

using ::gpuadvisor::sizing::v1::Model;
using ::gpuadvisor::sizing::v1::ModelKind;

absl::Status Invalid(absl::string_view path, absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(path, ".", field, ": ", why));
}

// Each number's physical range, from the table all services share (a
// preset's or config.json's numbers as much as a request's).
absl::Status CheckFields(const Model& m, absl::string_view path) {
  return validation::CheckRanges(m, path);
}

absl::Status ResolveDepthAndWidth(const Model& m, absl::string_view path, ModelSpec* spec) {
  const bool has_shape = m.layers() > 0 || m.hidden_size() > 0 || m.attention_heads() > 0;
  if (has_shape) {
    if (m.layers() == 0) return Invalid(path, "layers", "must be > 0");
    if (m.hidden_size() == 0) return Invalid(path, "hidden_size", "must be > 0");
    if (m.attention_heads() == 0) return Invalid(path, "attention_heads", "must be > 0");
    if (m.hidden_size() % m.attention_heads() != 0) {
      return Invalid(path, "attention_heads",
                     absl::StrCat("must divide hidden_size (", m.hidden_size(), " % ",
                                  m.attention_heads(), " != 0)"));
    }
    spec->layers = m.layers();
    spec->hidden = m.hidden_size();
    spec->heads = m.attention_heads();
    return absl::OkStatus();
  }
  if (m.params() <= 0) {
    return Invalid(path, "params", "must be > 0 (or give layers, hidden_size and attention_heads)");
  }
  // Typical aspect ratio h ~ 128 L (Llama-2-7B 4096/32, GPT-3 12288/96):
  // N ~ 12 L h^2 = 12 * 128^2 L^3.
  const double l = std::max(1.0, std::round(std::cbrt(m.params() / (12.0 * 128.0 * 128.0))));
  spec->layers = l;
  spec->hidden = 128.0 * l;
  spec->heads = l;
  spec->shape_estimated = true;
  return absl::OkStatus();
}

// Heads, widths, vocabulary, context, sliding windows, tied embeddings, MLA.
absl::Status ResolveShape(const Model& m, absl::string_view path, ModelSpec* spec) {
  spec->kind = m.kind() == v1::MODEL_KIND_UNSPECIFIED ? v1::MODEL_KIND_DECODER : m.kind();
  if (absl::Status s = ResolveDepthAndWidth(m, path, spec); !s.ok()) return s;
  if (m.kv_heads() > 0) {
    if (m.kv_heads() > spec->heads || static_cast<int>(spec->heads) % m.kv_heads() != 0) {
      return Invalid(path, "kv_heads", "must divide attention_heads");
    }
    spec->kv_heads = m.kv_heads();
  } else {
    spec->kv_heads = spec->heads;
  }
  spec->head_dim = m.head_dim() > 0 ? m.head_dim() : spec->hidden / spec->heads;
  spec->intermediate = m.intermediate_size() > 0 ? m.intermediate_size() : 4.0 * spec->hidden;
  // Decoders whose MLP is not the classic 4h are SwiGLU/GeGLU (Llama, Mistral,
  // Qwen, Gemma, Phi-3, DeepSeek); GPT-2/3, Falcon, BERT, T5 and Whisper use a
  // plain two-matrix MLP.
  spec->gated_mlp =
      spec->kind == v1::MODEL_KIND_DECODER && spec->intermediate != 4.0 * spec->hidden;
  spec->vocab = m.vocab_size() > 0 ? m.vocab_size() : 32000.0;
  spec->max_context = m.max_context_length();
  if (m.sliding_window_layers() > spec->layers) {
    return Invalid(path, "sliding_window_layers", "must be <= layers");
  }
  if (m.sliding_window_layers() > 0 && m.sliding_window() == 0) {
    return Invalid(path, "sliding_window_layers", "needs sliding_window > 0");
  }
  // One window for every layer is what the per-token KV math below can
  // express; a hybrid model (some layers global) is counted as if every layer
  // were global - conservative - and KvCacheElementsPerSequence
  // (services/sizing/kv_cache.h) gives the exact per-layer figure.
  spec->sliding_window_layers =
      m.sliding_window() > 0
          ? (m.sliding_window_layers() > 0 ? m.sliding_window_layers() : spec->layers)
          : 0.0;
  spec->sliding_window = spec->sliding_window_layers >= spec->layers ? m.sliding_window() : 0.0;
  spec->tied_embeddings = m.tied_embeddings();
  spec->mla = m.kv_lora_rank() > 0;
  spec->attention_width = spec->heads * spec->head_dim;
  return absl::OkStatus();
}

// The MoE layout (all zero for a dense model).
struct MoeShape {
  double experts = 0;
  double active_experts = 0;
  double shared = 0;
  double expert_i = 0;  // expert MLP width
  double moe_layers = 0;
  double dense_layers = 0;
  double expert_params = 0;  // one gated expert
};

absl::StatusOr<MoeShape> ResolveMoe(const Model& m, absl::string_view path, const ModelSpec& spec) {
  MoeShape e;
  e.experts = m.experts();
  if (m.active_experts() > 0 && e.experts == 0) {
    return Invalid(path, "active_experts", "needs experts > 0");
  }
  if (m.active_experts() > m.experts()) {
    return Invalid(path, "active_experts", "must be <= experts");
  }
  e.active_experts = e.experts > 0
                         ? (m.active_experts() > 0 ? m.active_experts() : std::min(2.0, e.experts))
                         : 0.0;
  if (m.dense_layers() > m.layers()) return Invalid(path, "dense_layers", "must be <= layers");
  e.shared = m.shared_experts();
  e.expert_i = m.expert_intermediate_size() > 0 ? m.expert_intermediate_size() : spec.intermediate;
  e.moe_layers = e.experts > 0 ? spec.layers - m.dense_layers() : 0.0;
  e.dense_layers = spec.layers - e.moe_layers;
  e.expert_params = 3.0 * spec.hidden * e.expert_i;  // MoE experts are gated
  return e;
}

// Total, active and routed-expert parameters (given, or from the shape).
absl::Status CountParams(const Model& m, absl::string_view path, const MoeShape& e,
                         ModelSpec* spec) {
  const double h = spec->hidden;
  const double kv_width = spec->kv_heads * spec->head_dim;
  const double attn = 2.0 * h * spec->attention_width + 2.0 * h * kv_width;
  const double mlp_dense = (spec->gated_mlp ? 3.0 : 2.0) * h * spec->intermediate;
  const double mlp_moe = (e.experts + e.shared) * e.expert_params + h * e.experts;
  const bool two_stacks =
      spec->kind == v1::MODEL_KIND_ENCODER_DECODER || spec->kind == v1::MODEL_KIND_SPEECH;
  const double cross_attn = two_stacks ? spec->layers / 2.0 * attn : 0.0;
  spec->embedding_params = spec->vocab * h;
  spec->lm_head_params = spec->tied_embeddings ? 0.0 : spec->vocab * h;
  const double derived = e.dense_layers * (attn + mlp_dense + 2.0 * h) +
                         e.moe_layers * (attn + mlp_moe + 2.0 * h) + cross_attn +
                         spec->embedding_params + spec->lm_head_params + h;
  spec->params = m.params() > 0 ? m.params() : derived;
  if (spec->params > kMaxParams) {
    return Invalid(path, "params",
                   absl::StrCat("derived count ", spec->params, " exceeds ", kMaxParams));
  }
  if (e.experts > 0) {
    const double inactive_derived = e.moe_layers * (e.experts - e.active_experts) * e.expert_params;
    spec->active_params = m.active_params() > 0
                              ? m.active_params()
                              : std::max(spec->params - inactive_derived, spec->params * 0.01);
    // Routed expert weights: from the given total/active split when both are
    // known (inactive = routed x (E - k) / E), else from the architecture.
    const double inactive = spec->params - spec->active_params;
    spec->routed_expert_params = e.experts > e.active_experts
                                     ? inactive * e.experts / (e.experts - e.active_experts)
                                     : e.moe_layers * e.experts * e.expert_params;
    spec->routed_expert_params = std::min(spec->routed_expert_params, spec->params);
    spec->active_expert_fraction = e.active_experts / e.experts;
  } else {
    spec->active_params = m.active_params() > 0 ? m.active_params() : spec->params;
  }
  if (spec->active_params > spec->params) {
    return Invalid(path, "active_params", "must be <= params");
  }
  return absl::OkStatus();
}

// Matmul parameters, the ZeRO-3 gather unit, the KV cache and activations.
void DeriveRuntimeFigures(const Model& m, const MoeShape& e, ModelSpec* spec) {
  // The input embedding is a lookup, not a matmul; a tied matrix still does
  // the LM-head matmul.
  spec->compute_params =
      std::max(spec->active_params - (spec->tied_embeddings ? 0.0 : spec->embedding_params),
               spec->active_params * 0.05);
  const double body =
      std::max(spec->params - spec->embedding_params - spec->lm_head_params, spec->params * 0.05);
  spec->largest_layer_params = std::max(body / spec->layers, spec->embedding_params);
  switch (spec->kind) {
    case v1::MODEL_KIND_ENCODER:
    case v1::MODEL_KIND_DIFFUSION:
      spec->kv_layers = 0;
      break;
    case v1::MODEL_KIND_ENCODER_DECODER:
    case v1::MODEL_KIND_SPEECH:
      spec->kv_layers = std::ceil(spec->layers / 2.0);
      break;
    default:
      spec->kv_layers = spec->layers;
  }
  spec->kv_elements_per_token = KvCacheBytesPerToken(
      static_cast<int>(spec->kv_layers), static_cast<int>(spec->kv_heads),
      static_cast<int>(spec->head_dim), m.kv_lora_rank(), m.qk_rope_head_dim(), 1.0);
  spec->kv_tp_shards = spec->mla ? 1.0 : spec->kv_heads;
  const double kv_width = spec->kv_heads * spec->head_dim;
  const double mlp_act_dense = (spec->gated_mlp ? 3.0 : 2.0) * spec->intermediate;
  const double mlp_act_moe = (e.active_experts + e.shared) * 3.0 * e.expert_i;
  const double mlp_act =
      (e.dense_layers * mlp_act_dense + e.moe_layers * mlp_act_moe) / spec->layers;
  spec->activation_elements_per_token_layer =
      2.0 * spec->hidden + 2.0 * spec->attention_width + 2.0 * kv_width + mlp_act;
}

// The model as returned to clients, every derived field filled in.
void FillResolved(const Model& m, const MoeShape& e, ModelSpec* spec) {
  Model& r = spec->resolved;
  r = m;
  r.set_kind(spec->kind);
  r.set_params(spec->params);
  r.set_active_params(spec->active_params);
  r.set_layers(static_cast<int>(spec->layers));
  r.set_hidden_size(static_cast<int>(spec->hidden));
  r.set_attention_heads(static_cast<int>(spec->heads));
  r.set_kv_heads(static_cast<int>(spec->kv_heads));
  r.set_head_dim(static_cast<int>(spec->head_dim));
  r.set_intermediate_size(static_cast<int>(spec->intermediate));
  r.set_vocab_size(static_cast<int>(spec->vocab));
  if (e.experts > 0) {
    r.set_active_experts(static_cast<int>(e.active_experts));
    r.set_expert_intermediate_size(static_cast<int>(e.expert_i));
  }
}

}  // namespace

Model MergeModel(const Model& base, const Model& overrides) {
  // proto3 MergeFrom copies only non-default scalars: exactly "any non-zero
  // field replaces the preset's" (so tied_embeddings can be set, not cleared).
  Model merged = base;
  merged.MergeFrom(overrides);
  return merged;
}

absl::StatusOr<ModelSpec> BuildModelSpec(const Model& m, absl::string_view path) {
  if (absl::Status s = CheckFields(m, path); !s.ok()) return s;
  ModelSpec spec;
  if (absl::Status s = ResolveShape(m, path, &spec); !s.ok()) return s;
  absl::StatusOr<MoeShape> moe = ResolveMoe(m, path, spec);
  if (!moe.ok()) return moe.status();
  if (absl::Status s = CountParams(m, path, *moe, &spec); !s.ok()) return s;
  DeriveRuntimeFigures(m, *moe, &spec);
  FillResolved(m, *moe, &spec);
  return spec;
}

}  // namespace gpuadvisor::sizing
