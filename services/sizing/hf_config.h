#ifndef GPUADVISOR_SERVICES_SIZING_HF_CONFIG_H_
#define GPUADVISOR_SERVICES_SIZING_HF_CONFIG_H_

// A model architecture from a Hugging Face `config.json`, the way people
// describe the model they fine-tune or serve.
//
// Families (`model_type`; multimodal wrappers whose LLM sits under
// `text_config` are read from there, the vision/audio towers are not counted):
//   llama, llama4 / llama4_text, mistral, mixtral, qwen2, qwen2_moe, qwen3,
//   qwen3_moe, gemma, gemma2, gemma3 / gemma3_text, deepseek_v2, deepseek_v3,
//   gpt_oss, phi3.
// Mapped:
//   - GQA (`num_key_value_heads`), an explicit `head_dim` that is not
//     hidden/heads (Qwen3, gpt-oss);
//   - MoE under every family's names (num_local_experts / num_experts /
//     n_routed_experts, num_experts_per_tok / experts_per_token,
//     moe_intermediate_size, shared experts, first_k_dense_replace,
//     interleave_moe_layer_step, decoder_sparse_step / mlp_only_layers);
//   - MLA (kv_lora_rank, qk_rope_head_dim, q_lora_rank, v_head_dim): the KV
//     cache holds one latent of kv_lora_rank + qk_rope_head_dim per layer;
//   - sliding windows with their per-layer pattern: `layer_types`, Gemma 3's
//     `sliding_window_pattern` (5 local : 1 global), Gemma 2's alternation,
//     Qwen's `use_sliding_window` / `max_window_layers`, Mistral/Phi-3's window
//     on every layer, and Llama 4's chunked attention (`attention_chunk_size`
//     on the RoPE layers, every 4th layer global) -> Model.sliding_window and
//     Model.sliding_window_layers;
//   - tied embeddings (`tie_word_embeddings`, with each family's default);
//   - `quantization_config` (fp8 block quant, mxfp4, compressed-tensors,
//     gptq, awq, bitsandbytes) and `torch_dtype` / `dtype` ->
//     Model.checkpoint_weight_bytes and Model.quantization.
// Parameters (total and active) are computed from the architecture, not read.
// Unknown keys are ignored.
//
// Errors are kInvalidArgument naming the field under `path`:
//   "workload.model.hf_config_json.model_type: unsupported \"gemma4\" (supported: ...)"
//   "workload.model.hf_config_json.text_config.hidden_size: must be a positive integer"
//   "workload.model.hf_config_json: not JSON: ..."
// Pure; thread-safe.

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::sizing {

absl::StatusOr<gpuadvisor::sizing::v1::Model> ModelFromHfConfig(
    absl::string_view json, absl::string_view path = "workload.model.hf_config_json");

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_HF_CONFIG_H_
