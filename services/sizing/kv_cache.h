#ifndef GPUADVISOR_SERVICES_SIZING_KV_CACHE_H_
#define GPUADVISOR_SERVICES_SIZING_KV_CACHE_H_

// The KV cache of one sequence, layer by layer: what hybrid attention and
// MLA models really keep.
//   - a full-attention layer keeps K and V of every token:
//       2 x kv_heads x head_dim per token;
//   - a sliding-window (or chunked-attention) layer keeps at most
//     `sliding_window` tokens (Model.sliding_window_layers of them; 0 = all
//     layers when sliding_window > 0): Gemma 2/3, gpt-oss, Llama 4, Mistral 7B;
//   - an MLA layer (kv_lora_rank > 0, DeepSeek-V2/V3/R1) keeps one latent of
//     kv_lora_rank + qk_rope_head_dim per token, whatever the head count.
// Layers that keep a cache: all of a decoder, the decoder half of an
// encoder-decoder or speech model, none of an encoder or diffusion model.
// Pure; thread-safe; inputs are a resolved (validated) Model.

#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::sizing {

// Cached elements (K and V, all layers) for one sequence of `context_tokens`
// tokens; multiply by the bytes per element of the KV precision.
double KvCacheElementsPerSequence(const gpuadvisor::sizing::v1::Model& model,
                                  double context_tokens);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_KV_CACHE_H_
