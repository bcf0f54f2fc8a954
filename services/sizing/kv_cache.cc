#include "services/sizing/kv_cache.h"

#include <algorithm>
#include <cmath>

namespace gpuadvisor::sizing {

double KvCacheElementsPerSequence(const v1::Model& m, double context_tokens) {
  double kv_layers = m.layers();
  switch (m.kind()) {
    case v1::MODEL_KIND_ENCODER:
    case v1::MODEL_KIND_DIFFUSION:
      return 0;
    case v1::MODEL_KIND_ENCODER_DECODER:
    case v1::MODEL_KIND_SPEECH:
      kv_layers = std::ceil(m.layers() / 2.0);
      break;
    default:
      break;
  }
  const double head_dim =
      m.head_dim() > 0
          ? m.head_dim()
          : (m.attention_heads() > 0 ? double(m.hidden_size()) / m.attention_heads() : 0);
  const double kv_heads = m.kv_heads() > 0 ? m.kv_heads() : m.attention_heads();
  const double per_token_layer = m.kv_lora_rank() > 0
                                     ? double(m.kv_lora_rank()) + m.qk_rope_head_dim()
                                     : 2.0 * kv_heads * head_dim;
  const double tokens = std::max(context_tokens, 0.0);
  double window_layers = 0;
  if (m.sliding_window() > 0) {
    window_layers = m.sliding_window_layers() > 0
                        ? std::min<double>(m.sliding_window_layers(), kv_layers)
                        : kv_layers;
  }
  const double windowed = std::min(tokens, static_cast<double>(m.sliding_window()));
  return per_token_layer * ((kv_layers - window_layers) * tokens + window_layers * windowed);
}

}  // namespace gpuadvisor::sizing
