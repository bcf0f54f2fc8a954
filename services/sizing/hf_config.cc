#include "services/sizing/hf_config.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace gpuadvisor::sizing {
namespace {

using ::google::protobuf::Value;
using ::gpuadvisor::sizing::v1::Model;

constexpr const char* kFamilies[] = {"llama",     "llama4",      "mistral",     "mixtral", "qwen2",
                                     "qwen2_moe", "qwen3",       "qwen3_moe",   "gemma",   "gemma2",
                                     "gemma3",    "deepseek_v2", "deepseek_v3", "gpt_oss", "phi3"};

// The config object being read, with the path used in errors.
class Config {
 public:
  Config(const Value* v, std::string path) : v_(v), path_(std::move(path)) {}

  const Value* Get(absl::string_view key) const {
    if (v_ == nullptr || v_->kind_case() != Value::kStructValue) return nullptr;
    const auto& fields = v_->struct_value().fields();
    auto it = fields.find(std::string(key));
    if (it == fields.end() || it->second.kind_case() == Value::kNullValue) return nullptr;
    return &it->second;
  }
  std::optional<double> Number(absl::string_view key) const {
    const Value* v = Get(key);
    if (v == nullptr || v->kind_case() != Value::kNumberValue) return std::nullopt;
    return v->number_value();
  }
  std::string String(absl::string_view key) const {
    const Value* v = Get(key);
    return v != nullptr && v->kind_case() == Value::kStringValue ? v->string_value() : "";
  }
  std::optional<bool> Bool(absl::string_view key) const {
    const Value* v = Get(key);
    if (v == nullptr || v->kind_case() != Value::kBoolValue) return std::nullopt;
    return v->bool_value();
  }
  std::string Field(absl::string_view key) const { return absl::StrCat(path_, ".", key); }

  // A non-negative integer; `fallback` when absent; error when present but bad.
  absl::StatusOr<double> Int(absl::string_view key, double fallback) const {
    const Value* v = Get(key);
    if (v == nullptr) return fallback;
    if (v->kind_case() != Value::kNumberValue || v->number_value() < 0 ||
        v->number_value() != std::floor(v->number_value()) || v->number_value() > 1e12) {
      return absl::InvalidArgumentError(
          absl::StrCat(Field(key), ": must be a non-negative integer"));
    }
    return v->number_value();
  }
  absl::StatusOr<double> RequiredInt(absl::string_view key) const {
    absl::StatusOr<double> v = Int(key, 0);
    if (!v.ok()) return v;
    if (*v <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(Field(key), ": must be a positive integer"));
    }
    return v;
  }

 private:
  const Value* v_;
  std::string path_;
};

#define HF_ASSIGN(lhs, expr)                \
  do {                                      \
    absl::StatusOr<double> hf_v_ = expr;    \
    if (!hf_v_.ok()) return hf_v_.status(); \
    lhs = *hf_v_;                           \
  } while (0)

std::string Family(std::string model_type) {
  model_type = absl::AsciiStrToLower(model_type);
  if (model_type == "llama4_text") return "llama4";
  if (model_type == "gemma3_text") return "gemma3";
  for (const char* f : kFamilies) {
    if (model_type == f) return model_type;
  }
  return "";
}

double DtypeBytes(const std::string& dtype) {
  if (dtype == "float32") return 4.0;
  if (dtype == "float8_e4m3fn" || dtype == "int8") return 1.0;
  return 2.0;  // bfloat16, float16, unset
}

// Weight bytes per quantized parameter and a description, from
// quantization_config. Embeddings, the LM head, norms and (for mxfp4) all
// but the experts stay at the checkpoint dtype.
struct Quantization {
  bool present = false;
  bool experts_only = false;  // mxfp4: only the MoE experts are converted
  double bytes = 2.0;
  std::string description;
};

absl::StatusOr<Quantization> ReadQuantization(const Config& q) {
  Quantization out;
  out.present = true;
  const std::string method = absl::AsciiStrToLower(q.String("quant_method"));
  if (method == "fp8") {
    // One fp32 scale per weight block (DeepSeek: 128 x 128).
    double block = 128.0 * 128.0;
    if (const Value* b = q.Get("weight_block_size");
        b != nullptr && b->kind_case() == Value::kListValue && b->list_value().values_size() == 2) {
      block = b->list_value().values(0).number_value() * b->list_value().values(1).number_value();
    }
    out.bytes = 1.0 + (block > 0 ? 4.0 / block : 0.0);
    out.description = absl::StrFormat("fp8 (%s): linear layers 8-bit",
                                      q.String("fmt").empty() ? "e4m3" : q.String("fmt"));
  } else if (method == "mxfp4") {
    // OCP MX: 4-bit elements, one 8-bit scale per 32.
    out.bytes = 0.5 + 1.0 / 32.0;
    out.experts_only = true;
    out.description = "mxfp4: MoE experts 4.25-bit, attention/router/embeddings 16-bit";
  } else if (method == "compressed-tensors") {
    double bits = 8;
    if (const Value* groups = q.Get("config_groups");
        groups != nullptr && groups->kind_case() == Value::kStructValue) {
      for (const auto& [name, group] : groups->struct_value().fields()) {
        const Config g(&group, "");
        const Config w(g.Get("weights"), "");
        if (std::optional<double> n = w.Number("num_bits")) bits = *n;
        break;
      }
    }
    out.bytes = bits / 8.0;
    out.description =
        absl::StrCat("compressed-tensors ", q.String("format"), ": linear layers ", bits, "-bit");
  } else if (method == "gptq" || method == "awq") {
    const double bits = q.Number("bits").value_or(q.Number("w_bit").value_or(4));
    const double group = q.Number("group_size").value_or(q.Number("q_group_size").value_or(128));
    out.bytes = bits / 8.0 + (group > 0 ? 4.0 / group : 0.0);  // fp16 scale + zero per group
    out.description = absl::StrCat(method, ": linear layers ", bits, "-bit");
  } else if (method == "bitsandbytes") {
    if (q.Bool("load_in_4bit").value_or(false)) {
      out.bytes = 0.5 + 4.0 / 64.0;  // fp32 absmax per 64-element block
      out.description = absl::StrCat(
          "bitsandbytes ",
          q.String("bnb_4bit_quant_type").empty() ? "4-bit" : q.String("bnb_4bit_quant_type"),
          ": linear layers 4-bit");
    } else {
      out.bytes = 1.0;
      out.description = "bitsandbytes: linear layers 8-bit";
    }
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(q.Field("quant_method"), ": unsupported \"", method,
                     "\" (supported: fp8, mxfp4, compressed-tensors, gptq, awq, bitsandbytes)"));
  }
  return out;
}

// Shared experts (count, total width) from the MoE fields any family may
// use: n_shared_experts / num_shared_experts of moe_intermediate_size each
// (DeepSeek, Kimi, GLM), shared_expert_intermediate_size (Qwen2-MoE), or
// enable_moe_block with a dense MLP of intermediate_size beside the experts
// in every layer (Gemma 4).
absl::StatusOr<std::pair<double, double>> SharedExperts(const Config& c, double inter,
                                                        double expert_inter) {
  double shared = 0, width = 0;
  HF_ASSIGN(shared, c.Int("n_shared_experts", 0));
  if (shared == 0) HF_ASSIGN(shared, c.Int("num_shared_experts", 0));
  HF_ASSIGN(width, c.Int("shared_expert_intermediate_size", 0));
  if (width == 0) width = shared * expert_inter;
  if (width > 0 && shared == 0) shared = 1;
  if (width == 0 && c.Bool("enable_moe_block").value_or(false)) {
    shared = 1;
    width = inter;
  }
  return std::make_pair(shared, width);
}

// Which layers hold experts, from the fields any family may use:
// first_k_dense_replace leading dense layers and moe_layer_freq (DeepSeek),
// decoder_sparse_step and mlp_only_layers (Qwen MoE), interleave_moe_layer_step
// (Llama 4: every step-th layer).
absl::StatusOr<std::vector<bool>> MoeLayers(const Config& c, double layers, bool moe) {
  std::vector<bool> out(static_cast<size_t>(layers), moe);
  if (!moe) return out;
  double first_dense, freq, step, interleave;
  HF_ASSIGN(first_dense, c.Int("first_k_dense_replace", 0));
  HF_ASSIGN(freq, c.Int("moe_layer_freq", 1));
  HF_ASSIGN(step, c.Int("decoder_sparse_step", 1));
  HF_ASSIGN(interleave, c.Int("interleave_moe_layer_step", 1));
  const size_t f = static_cast<size_t>(std::max(freq, 1.0));
  const size_t st = static_cast<size_t>(std::max(step, 1.0));
  const size_t il = static_cast<size_t>(std::max(interleave, 1.0));
  std::vector<bool> mlp_only(out.size(), false);
  if (const Value* list = c.Get("mlp_only_layers");
      list != nullptr && list->kind_case() == Value::kListValue) {
    for (const Value& v : list->list_value().values()) {
      const double i = v.number_value();
      if (i >= 0 && i < layers) mlp_only[static_cast<size_t>(i)] = true;
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] =
        i >= first_dense && i % f == 0 && (i + 1) % st == 0 && (i + 1) % il == 0 && !mlp_only[i];
  }
  return out;
}

// RoPE scaling that extends the context beyond max_position_embeddings
// (config.json rope_scaling: factor x original_max_position_embeddings).
// Llama 3.1's llama3 scaling and DeepSeek's YaRN already stay within their
// max_position_embeddings; a YaRN x4 added to Qwen3's config reaches 131,072.
struct RopeScaling {
  double max_context = 0;  // 0 = no extension
  std::string description;
};

absl::StatusOr<RopeScaling> ReadRopeScaling(const Config& c, double max_context) {
  RopeScaling out;
  const Value* v = c.Get("rope_scaling");
  if (v == nullptr || v->kind_case() != Value::kStructValue) return out;
  const Config r(v, c.Field("rope_scaling"));
  const double factor = r.Number("factor").value_or(0);
  if (!(factor > 1) || !std::isfinite(factor)) return out;
  double original;
  HF_ASSIGN(original, r.Int("original_max_position_embeddings", max_context));
  std::string type = r.String("rope_type");
  if (type.empty()) type = r.String("type");
  if (original > 0 && factor * original > max_context) {
    out.max_context = std::min(factor * original, 134217728.0);
    out.description = absl::StrFormat("%s x%g over %.0f positions",
                                      type.empty() ? std::string("rope") : type, factor, original);
  }
  return out;
}

// The architecture read from a config.json, step by step.
struct HfArch {
  std::string model_type;
  std::string family;   // a kFamilies entry or "generic"
  bool nested = false;  // read from text_config
  bool mla = false;
  bool gemma = false;
  double layers = 0, h = 0, heads = 0, vocab = 0, kv_heads = 0, head_dim = 0, inter = 0;
  double max_context = 0;
  RopeScaling rope;
  bool tie = false;
  // MoE.
  double experts = 0, active = 0, expert_inter = 0, shared = 0, shared_inter = 0;
  double dense_inter = 0, moe_layers = 0, dense_layers = 0;
  // MLA and sliding windows.
  double kv_lora = 0, rope_dim = 0, q_lora = 0, nope_dim = 0, v_dim = 0;
  double window = 0, window_layers = 0;
  // Parameter counts.
  double params = 0, active_params = 0, body_attn = 0, norms = 0, other_mlp = 0;
  double experts_total = 0;
  // Checkpoint.
  std::string dtype;
  Quantization quant;
  double weight_bytes = 0;
};

absl::StatusOr<Value> ParseRoot(absl::string_view json, absl::string_view path) {
  Value root;
  google::protobuf::util::JsonParseOptions options;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &root, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not JSON: ", std::string(parsed.message())));
  }
  if (root.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": must be a JSON object"));
  }
  return root;
}

// model_type (from text_config first) and the family it is read as.
absl::Status ReadFamily(const Config& top, const Config& c, HfArch* a) {
  a->model_type = c.String("model_type");
  std::string type_field = c.Field("model_type");
  if (a->model_type.empty()) {
    a->model_type = top.String("model_type");
    type_field = top.Field("model_type");
  }
  if (a->model_type.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(type_field, ": missing"));
  }
  a->family = Family(a->model_type);
  if (a->family.empty()) {
    // Another family: read it from the standard decoder fields (and the MoE
    // fields below) when the config has them.
    bool standard = true;
    for (const char* key :
         {"num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size"}) {
      standard = standard && c.Number(key).has_value();
    }
    standard = standard && (c.Number("intermediate_size") || c.Number("moe_intermediate_size"));
    if (!standard) {
      return absl::InvalidArgumentError(absl::StrCat(
          type_field, ": unsupported \"", a->model_type,
          "\" (supported: ", absl::StrJoin(kFamilies, ", "),
          "; another family needs num_hidden_layers, hidden_size, num_attention_heads, "
          "vocab_size and intermediate_size)"));
    }
    a->family = "generic";
  }
  a->mla = a->family == "deepseek_v2" || a->family == "deepseek_v3";
  a->gemma = a->family == "gemma" || a->family == "gemma2" || a->family == "gemma3";
  return absl::OkStatus();
}

// Layers, widths, heads, vocabulary, context and tied embeddings.
absl::Status ReadShape(const Config& top, const Config& c, HfArch* a) {
  HF_ASSIGN(a->layers, c.RequiredInt("num_hidden_layers"));
  HF_ASSIGN(a->h, c.RequiredInt("hidden_size"));
  HF_ASSIGN(a->heads, c.RequiredInt("num_attention_heads"));
  HF_ASSIGN(a->vocab, c.RequiredInt("vocab_size"));
  HF_ASSIGN(a->kv_heads, c.Int("num_key_value_heads", a->heads));
  if (a->kv_heads == 0) a->kv_heads = a->heads;
  HF_ASSIGN(a->head_dim, c.Int("head_dim", 0));
  if (a->head_dim == 0) a->head_dim = std::floor(a->h / a->heads);
  HF_ASSIGN(a->inter, c.Number("intermediate_size") || a->family != "generic"
                          ? c.RequiredInt("intermediate_size")
                          : c.RequiredInt("moe_intermediate_size"));
  HF_ASSIGN(a->max_context, c.Int("max_position_embeddings", 0));
  absl::StatusOr<RopeScaling> rope = ReadRopeScaling(c, a->max_context);
  if (!rope.ok()) return rope.status();
  a->rope = *rope;
  // Tied embeddings: the key may sit on the wrapper; Gemma ties by default.
  std::optional<bool> tied = c.Bool("tie_word_embeddings");
  if (!tied) tied = top.Bool("tie_word_embeddings");
  a->tie = tied.value_or(a->gemma);
  return absl::OkStatus();
}

// Experts, experts per token, expert width, shared experts and MoE layers.
absl::Status ReadMoe(const Config& c, HfArch* a) {
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (a->experts == 0) HF_ASSIGN(a->experts, c.Int(key, 0));
  }
  for (const char* key : {"num_experts_per_tok", "experts_per_token", "top_k_experts"}) {
    if (a->active == 0) HF_ASSIGN(a->active, c.Int(key, 0));
  }
  if (a->experts > 0 && a->active == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(c.Field("num_experts_per_tok"), ": missing for an MoE model"));
  }
  if (a->active > a->experts) {
    return absl::InvalidArgumentError(
        absl::StrCat(c.Field("num_experts_per_tok"), ": must be <= the number of experts"));
  }
  HF_ASSIGN(a->expert_inter, c.Int("moe_intermediate_size", a->inter));
  if (a->family == "llama4") {
    a->shared_inter = a->inter;  // one shared expert of intermediate_size
    a->shared = 1;
  } else if (a->experts > 0) {
    absl::StatusOr<std::pair<double, double>> sh = SharedExperts(c, a->inter, a->expert_inter);
    if (!sh.ok()) return sh.status();
    std::tie(a->shared, a->shared_inter) = *sh;
  }
  a->dense_inter = a->inter;
  if (a->family == "llama4") HF_ASSIGN(a->dense_inter, c.Int("intermediate_size_mlp", a->inter));
  absl::StatusOr<std::vector<bool>> moe_pattern = MoeLayers(c, a->layers, a->experts > 0);
  if (!moe_pattern.ok()) return moe_pattern.status();
  a->moe_layers = static_cast<double>(std::count(moe_pattern->begin(), moe_pattern->end(), true));
  a->dense_layers = a->layers - a->moe_layers;
  return absl::OkStatus();
}

// Multi-head latent attention (DeepSeek V2/V3).
absl::Status ReadMla(const Config& c, HfArch* a) {
  if (!a->mla) return absl::OkStatus();
  HF_ASSIGN(a->kv_lora, c.RequiredInt("kv_lora_rank"));
  HF_ASSIGN(a->rope_dim, c.RequiredInt("qk_rope_head_dim"));
  HF_ASSIGN(a->q_lora, c.Int("q_lora_rank", 0));
  HF_ASSIGN(a->nope_dim, c.Int("qk_nope_head_dim", a->head_dim));
  HF_ASSIGN(a->v_dim, c.Int("v_head_dim", a->nope_dim));
  a->head_dim = a->nope_dim + a->rope_dim;
  return absl::OkStatus();
}

// Llama 4's chunked attention on the RoPE layers; every 4th layer is global
// (NoPE).
absl::Status ReadChunkedAttention(const Config& c, HfArch* a) {
  HF_ASSIGN(a->window, c.Int("attention_chunk_size", 0));
  if (a->window <= 0) return absl::OkStatus();
  a->window_layers = 0;
  if (const Value* no_rope = c.Get("no_rope_layers");
      no_rope != nullptr && no_rope->kind_case() == Value::kListValue &&
      no_rope->list_value().values_size() == static_cast<int>(a->layers)) {
    for (const Value& v : no_rope->list_value().values()) a->window_layers += v.number_value() != 0;
    return absl::OkStatus();
  }
  a->window_layers = a->layers - std::floor(a->layers / 4.0);
  return absl::OkStatus();
}

// Sliding windows and the layers that use them.
absl::Status ReadWindows(const Config& c, HfArch* a) {
  const std::string& family = a->family;
  HF_ASSIGN(a->window, c.Int("sliding_window", 0));
  if (const Value* types = c.Get("layer_types");
      types != nullptr && types->kind_case() == Value::kListValue) {
    for (const Value& t : types->list_value().values()) {
      if (t.string_value() == "sliding_attention" || t.string_value() == "chunked_attention") {
        ++a->window_layers;
      }
    }
  } else if (family == "gemma3") {
    double pattern;
    HF_ASSIGN(pattern, c.Int("sliding_window_pattern", 6));
    if (pattern >= 1) a->window_layers = a->layers - std::floor(a->layers / pattern);
  } else if (family == "gemma2") {
    a->window_layers = std::ceil(a->layers / 2.0);  // even layers are local
  } else if (family == "qwen2" || family == "qwen3" || family == "qwen2_moe" ||
             family == "qwen3_moe") {
    if (c.Bool("use_sliding_window").value_or(false) && a->window > 0) {
      double max_window_layers;
      HF_ASSIGN(max_window_layers, c.Int("max_window_layers", a->layers));
      a->window_layers = std::max(0.0, a->layers - max_window_layers);
    } else {
      a->window = 0;
    }
  } else if (family == "llama4") {
    if (absl::Status s = ReadChunkedAttention(c, a); !s.ok()) return s;
  } else if (a->window > 0) {
    a->window_layers = a->layers;  // mistral, phi3, llama: one window on every layer
  }
  if (a->window == 0) a->window_layers = 0;
  if (a->window_layers == 0) a->window = 0;
  return absl::OkStatus();
}

// Attention parameters of one layer.
double AttentionParams(const Config& c, const HfArch& a) {
  const double h = a.h, heads = a.heads, head_dim = a.head_dim;
  if (a.mla) {
    const double q =
        a.q_lora > 0 ? h * a.q_lora + a.q_lora + a.q_lora * heads * head_dim : h * heads * head_dim;
    return q + h * (a.kv_lora + a.rope_dim) + a.kv_lora +
           a.kv_lora * heads * (a.nope_dim + a.v_dim) + heads * a.v_dim * h;
  }
  const std::string& family = a.family;
  const bool attention_bias = c.Bool("attention_bias").value_or(false);
  double attn = h * heads * head_dim + 2.0 * h * a.kv_heads * head_dim + heads * head_dim * h;
  if (family == "qwen2" || family == "qwen2_moe" || attention_bias) {
    attn += heads * head_dim + 2.0 * a.kv_heads * head_dim;  // q, k, v biases
  }
  if (attention_bias) attn += h;  // o bias
  if (family == "qwen3" || family == "qwen3_moe" || family == "gemma3") attn += 2.0 * head_dim;
  if (family == "gpt_oss") attn += heads;  // attention sinks
  return attn;
}

// Total and active parameters, embeddings included.
void CountParams(const Config& c, HfArch* a) {
  const double h = a->h;
  const double attn = AttentionParams(c, *a);
  a->norms = (a->family == "gemma2" || a->family == "gemma3") ? 4.0 * h : 2.0 * h;
  const double dense_mlp = 3.0 * h * a->dense_inter;
  double expert = 3.0 * h * a->expert_inter;
  double router = h * a->experts;
  if (a->family == "gpt_oss") {
    expert += 2.0 * a->expert_inter + h;  // gate_up and down biases
    router += a->experts;
  }
  const double shared_mlp = 3.0 * h * a->shared_inter + (a->family == "qwen2_moe" ? h : 0.0);
  const double embedding = a->vocab * h;
  const double head = a->tie ? 0.0 : a->vocab * h;
  a->body_attn = a->layers * (attn + a->norms);
  a->experts_total = a->moe_layers * a->experts * expert;
  const double experts_active = a->moe_layers * a->active * expert;
  a->other_mlp = a->dense_layers * dense_mlp + a->moe_layers * (router + shared_mlp);
  a->params = embedding + head + h + a->body_attn + a->other_mlp + a->experts_total;
  a->active_params = embedding + head + h + a->body_attn + a->other_mlp + experts_active;
}

// The published weights as stored: dtype and quantization_config.
absl::Status CheckpointBytes(const Config& top, const Config& c, HfArch* a) {
  a->dtype = c.String("torch_dtype");
  if (a->dtype.empty()) a->dtype = c.String("dtype");
  if (a->dtype.empty()) a->dtype = top.String("torch_dtype");
  if (a->dtype.empty()) a->dtype = top.String("dtype");
  const double base_bytes = DtypeBytes(a->dtype);
  const Value* qv = top.Get("quantization_config");
  std::string q_path = top.Field("quantization_config");
  if (qv == nullptr) {
    qv = c.Get("quantization_config");
    q_path = c.Field("quantization_config");
  }
  if (qv != nullptr) {
    absl::StatusOr<Quantization> q = ReadQuantization(Config(qv, q_path));
    if (!q.ok()) return q.status();
    a->quant = *q;
  }
  a->weight_bytes = a->params * base_bytes;
  if (a->quant.present) {
    // Norms, embeddings and the LM head stay 16-bit; mxfp4 converts only experts.
    const double linear = a->body_attn - a->layers * a->norms + a->other_mlp + a->experts_total;
    const double quantized = a->quant.experts_only ? a->experts_total : linear;
    a->weight_bytes = (a->params - quantized) * base_bytes + quantized * a->quant.bytes;
  }
  return absl::OkStatus();
}

std::string ArchitectureName(const Config& top) {
  const Value* a = top.Get("architectures");
  if (a != nullptr && a->kind_case() == Value::kListValue && a->list_value().values_size() > 0) {
    return a->list_value().values(0).string_value();
  }
  return std::string();
}

Model ToModel(const Config& top, const HfArch& a) {
  Model m;
  m.set_kind(v1::MODEL_KIND_DECODER);
  const std::string architecture = ArchitectureName(top);
  m.set_name(architecture.empty() ? a.model_type
                                  : absl::StrCat(architecture, " (", a.model_type, ")"));
  m.set_source(absl::StrCat("Hugging Face config.json, model_type ", a.model_type,
                            "; parameters computed from the architecture",
                            a.nested ? "; text model only (vision/audio towers not counted)" : ""));
  m.set_params(std::round(a.params));
  if (a.experts > 0) m.set_active_params(std::round(a.active_params));
  m.set_layers(static_cast<int>(a.layers));
  m.set_hidden_size(static_cast<int>(a.h));
  m.set_attention_heads(static_cast<int>(a.heads));
  m.set_kv_heads(static_cast<int>(a.kv_heads));
  m.set_head_dim(static_cast<int>(a.head_dim));
  m.set_intermediate_size(static_cast<int>(a.dense_inter));
  m.set_vocab_size(static_cast<int>(a.vocab));
  m.set_max_context_length(static_cast<int>(std::min(a.max_context, 134217728.0)));
  if (a.rope.max_context > 0) {
    m.set_rope_scaled_max_context_length(static_cast<int>(a.rope.max_context));
    m.set_rope_scaling(a.rope.description);
  }
  m.set_tied_embeddings(a.tie);
  if (a.experts > 0) {
    m.set_experts(static_cast<int>(a.experts));
    m.set_active_experts(static_cast<int>(a.active));
    m.set_expert_intermediate_size(static_cast<int>(a.expert_inter));
    m.set_shared_experts(static_cast<int>(a.shared));
    m.set_dense_layers(static_cast<int>(a.dense_layers));
  }
  if (a.mla) {
    m.set_kv_lora_rank(static_cast<int>(a.kv_lora));
    m.set_qk_rope_head_dim(static_cast<int>(a.rope_dim));
  }
  if (a.window > 0) {
    m.set_sliding_window(static_cast<int>(a.window));
    m.set_sliding_window_layers(static_cast<int>(a.window_layers));
  }
  m.set_checkpoint_weight_bytes(std::round(a.weight_bytes));
  m.set_quantization(a.quant.present
                         ? a.quant.description
                         : absl::StrCat(a.dtype.empty() ? "bfloat16" : a.dtype, " (unquantized)"));
  return m;
}

}  // namespace

absl::StatusOr<Model> ModelFromHfConfig(absl::string_view json, absl::string_view path) {
  absl::StatusOr<Value> root = ParseRoot(json, path);
  if (!root.ok()) return root.status();
  const Config top(&*root, std::string(path));
  const Value* text = top.Get("text_config");
  HfArch a;
  a.nested = text != nullptr && text->kind_case() == Value::kStructValue;
  const Config c = a.nested ? Config(text, top.Field("text_config")) : top;
  if (absl::Status s = ReadFamily(top, c, &a); !s.ok()) return s;
  if (absl::Status s = ReadShape(top, c, &a); !s.ok()) return s;
  if (absl::Status s = ReadMoe(c, &a); !s.ok()) return s;
  if (absl::Status s = ReadMla(c, &a); !s.ok()) return s;
  if (absl::Status s = ReadWindows(c, &a); !s.ok()) return s;
  CountParams(c, &a);
  if (absl::Status s = CheckpointBytes(top, c, &a); !s.ok()) return s;
  return ToModel(top, a);
}

}  // namespace gpuadvisor::sizing
