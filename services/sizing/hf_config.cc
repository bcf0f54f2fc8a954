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

}  // namespace

absl::StatusOr<Model> ModelFromHfConfig(absl::string_view json, absl::string_view path) {
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
  const Config top(&root, std::string(path));
  const Value* text = top.Get("text_config");
  const bool nested = text != nullptr && text->kind_case() == Value::kStructValue;
  const Config c = nested ? Config(text, top.Field("text_config")) : top;

  std::string model_type = c.String("model_type");
  std::string type_field = c.Field("model_type");
  if (model_type.empty()) {
    model_type = top.String("model_type");
    type_field = top.Field("model_type");
  }
  if (model_type.empty()) return absl::InvalidArgumentError(absl::StrCat(type_field, ": missing"));
  std::string family = Family(model_type);
  if (family.empty()) {
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
          type_field, ": unsupported \"", model_type,
          "\" (supported: ", absl::StrJoin(kFamilies, ", "),
          "; another family needs num_hidden_layers, hidden_size, num_attention_heads, "
          "vocab_size and intermediate_size)"));
    }
    family = "generic";
  }
  const bool mla = family == "deepseek_v2" || family == "deepseek_v3";
  const bool gemma = family == "gemma" || family == "gemma2" || family == "gemma3";

  double layers, h, heads, vocab, kv_heads, head_dim, inter;
  HF_ASSIGN(layers, c.RequiredInt("num_hidden_layers"));
  HF_ASSIGN(h, c.RequiredInt("hidden_size"));
  HF_ASSIGN(heads, c.RequiredInt("num_attention_heads"));
  HF_ASSIGN(vocab, c.RequiredInt("vocab_size"));
  HF_ASSIGN(kv_heads, c.Int("num_key_value_heads", heads));
  if (kv_heads == 0) kv_heads = heads;
  HF_ASSIGN(head_dim, c.Int("head_dim", 0));
  if (head_dim == 0) head_dim = std::floor(h / heads);
  HF_ASSIGN(inter, c.Number("intermediate_size") || family != "generic"
                       ? c.RequiredInt("intermediate_size")
                       : c.RequiredInt("moe_intermediate_size"));
  double max_context;
  HF_ASSIGN(max_context, c.Int("max_position_embeddings", 0));
  absl::StatusOr<RopeScaling> rope = ReadRopeScaling(c, max_context);
  if (!rope.ok()) return rope.status();

  // Tied embeddings: the key may sit on the wrapper; Gemma ties by default.
  std::optional<bool> tied = c.Bool("tie_word_embeddings");
  if (!tied) tied = top.Bool("tie_word_embeddings");
  const bool tie = tied.value_or(gemma);

  // --- MoE -----------------------------------------------------------------
  double experts = 0, active = 0, expert_inter = 0, shared = 0, shared_inter = 0;
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (experts == 0) HF_ASSIGN(experts, c.Int(key, 0));
  }
  for (const char* key : {"num_experts_per_tok", "experts_per_token", "top_k_experts"}) {
    if (active == 0) HF_ASSIGN(active, c.Int(key, 0));
  }
  if (experts > 0 && active == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(c.Field("num_experts_per_tok"), ": missing for an MoE model"));
  }
  if (active > experts) {
    return absl::InvalidArgumentError(
        absl::StrCat(c.Field("num_experts_per_tok"), ": must be <= the number of experts"));
  }
  HF_ASSIGN(expert_inter, c.Int("moe_intermediate_size", inter));
  if (family == "llama4") {
    shared_inter = inter;  // one shared expert of intermediate_size
    shared = 1;
  } else if (experts > 0) {
    absl::StatusOr<std::pair<double, double>> sh = SharedExperts(c, inter, expert_inter);
    if (!sh.ok()) return sh.status();
    std::tie(shared, shared_inter) = *sh;
  }
  double dense_inter = inter;
  if (family == "llama4") HF_ASSIGN(dense_inter, c.Int("intermediate_size_mlp", inter));
  // Which layers are MoE.
  absl::StatusOr<std::vector<bool>> moe_pattern = MoeLayers(c, layers, experts > 0);
  if (!moe_pattern.ok()) return moe_pattern.status();
  const std::vector<bool>& moe_layer = *moe_pattern;
  const double moe_layers =
      static_cast<double>(std::count(moe_layer.begin(), moe_layer.end(), true));
  const double dense_layers = layers - moe_layers;

  // --- Attention and sliding windows ------------------------------------------
  double kv_lora = 0, rope_dim = 0, q_lora = 0, nope_dim = 0, v_dim = 0;
  if (mla) {
    HF_ASSIGN(kv_lora, c.RequiredInt("kv_lora_rank"));
    HF_ASSIGN(rope_dim, c.RequiredInt("qk_rope_head_dim"));
    HF_ASSIGN(q_lora, c.Int("q_lora_rank", 0));
    HF_ASSIGN(nope_dim, c.Int("qk_nope_head_dim", head_dim));
    HF_ASSIGN(v_dim, c.Int("v_head_dim", nope_dim));
    head_dim = nope_dim + rope_dim;
  }
  double window = 0, window_layers = 0;
  HF_ASSIGN(window, c.Int("sliding_window", 0));
  if (const Value* types = c.Get("layer_types");
      types != nullptr && types->kind_case() == Value::kListValue) {
    for (const Value& t : types->list_value().values()) {
      if (t.string_value() == "sliding_attention" || t.string_value() == "chunked_attention") {
        ++window_layers;
      }
    }
  } else if (family == "gemma3") {
    double pattern;
    HF_ASSIGN(pattern, c.Int("sliding_window_pattern", 6));
    if (pattern >= 1) window_layers = layers - std::floor(layers / pattern);
  } else if (family == "gemma2") {
    window_layers = std::ceil(layers / 2.0);  // even layers are local
  } else if (family == "qwen2" || family == "qwen3" || family == "qwen2_moe" ||
             family == "qwen3_moe") {
    if (c.Bool("use_sliding_window").value_or(false) && window > 0) {
      double max_window_layers;
      HF_ASSIGN(max_window_layers, c.Int("max_window_layers", layers));
      window_layers = std::max(0.0, layers - max_window_layers);
    } else {
      window = 0;
    }
  } else if (family == "llama4") {
    // Chunked attention on the RoPE layers; every 4th layer is global (NoPE).
    HF_ASSIGN(window, c.Int("attention_chunk_size", 0));
    if (window > 0) {
      window_layers = 0;
      bool listed = false;
      if (const Value* no_rope = c.Get("no_rope_layers");
          no_rope != nullptr && no_rope->kind_case() == Value::kListValue &&
          no_rope->list_value().values_size() == static_cast<int>(layers)) {
        listed = true;
        for (const Value& v : no_rope->list_value().values())
          window_layers += v.number_value() != 0;
      }
      if (!listed) window_layers = layers - std::floor(layers / 4.0);
    }
  } else if (window > 0) {
    window_layers = layers;  // mistral, phi3, llama: one window on every layer
  }
  if (window == 0) window_layers = 0;
  if (window_layers == 0) window = 0;

  // --- Parameters ------------------------------------------------------------
  const bool attention_bias = c.Bool("attention_bias").value_or(false);
  double attn;
  if (mla) {
    const double q =
        q_lora > 0 ? h * q_lora + q_lora + q_lora * heads * head_dim : h * heads * head_dim;
    attn = q + h * (kv_lora + rope_dim) + kv_lora + kv_lora * heads * (nope_dim + v_dim) +
           heads * v_dim * h;
  } else {
    attn = h * heads * head_dim + 2.0 * h * kv_heads * head_dim + heads * head_dim * h;
    if (family == "qwen2" || family == "qwen2_moe" || attention_bias) {
      attn += heads * head_dim + 2.0 * kv_heads * head_dim;  // q, k, v biases
    }
    if (attention_bias) attn += h;  // o bias
    if (family == "qwen3" || family == "qwen3_moe" || family == "gemma3") attn += 2.0 * head_dim;
    if (family == "gpt_oss") attn += heads;  // attention sinks
  }
  const double norms = (family == "gemma2" || family == "gemma3") ? 4.0 * h : 2.0 * h;
  const double dense_mlp = 3.0 * h * dense_inter;
  double expert = 3.0 * h * expert_inter;
  double router = h * experts;
  if (family == "gpt_oss") {
    expert += 2.0 * expert_inter + h;  // gate_up and down biases
    router += experts;
  }
  const double shared_mlp = 3.0 * h * shared_inter + (family == "qwen2_moe" ? h : 0.0);
  const double embedding = vocab * h;
  const double head = tie ? 0.0 : vocab * h;
  const double body_attn = layers * (attn + norms);
  const double experts_total = moe_layers * experts * expert;
  const double experts_active = moe_layers * active * expert;
  const double other_mlp = dense_layers * dense_mlp + moe_layers * (router + shared_mlp);
  const double params = embedding + head + h + body_attn + other_mlp + experts_total;
  const double active_params = embedding + head + h + body_attn + other_mlp + experts_active;

  // --- Checkpoint bytes ----------------------------------------------------------
  std::string dtype = c.String("torch_dtype");
  if (dtype.empty()) dtype = c.String("dtype");
  if (dtype.empty()) dtype = top.String("torch_dtype");
  if (dtype.empty()) dtype = top.String("dtype");
  const double base_bytes = DtypeBytes(dtype);
  Quantization quant;
  const Value* qv = top.Get("quantization_config");
  std::string q_path = top.Field("quantization_config");
  if (qv == nullptr) {
    qv = c.Get("quantization_config");
    q_path = c.Field("quantization_config");
  }
  if (qv != nullptr) {
    absl::StatusOr<Quantization> q = ReadQuantization(Config(qv, q_path));
    if (!q.ok()) return q.status();
    quant = *q;
  }
  double weight_bytes = params * base_bytes;
  if (quant.present) {
    // Norms, embeddings and the LM head stay 16-bit; mxfp4 converts only experts.
    const double linear = body_attn - layers * norms + other_mlp + experts_total;
    const double quantized = quant.experts_only ? experts_total : linear;
    weight_bytes = (params - quantized) * base_bytes + quantized * quant.bytes;
  }

  Model m;
  m.set_kind(v1::MODEL_KIND_DECODER);
  const std::string architecture = [&] {
    const Value* a = top.Get("architectures");
    if (a != nullptr && a->kind_case() == Value::kListValue && a->list_value().values_size() > 0) {
      return a->list_value().values(0).string_value();
    }
    return std::string();
  }();
  m.set_name(architecture.empty() ? model_type : absl::StrCat(architecture, " (", model_type, ")"));
  m.set_source(absl::StrCat("Hugging Face config.json, model_type ", model_type,
                            "; parameters computed from the architecture",
                            nested ? "; text model only (vision/audio towers not counted)" : ""));
  m.set_params(std::round(params));
  if (experts > 0) m.set_active_params(std::round(active_params));
  m.set_layers(static_cast<int>(layers));
  m.set_hidden_size(static_cast<int>(h));
  m.set_attention_heads(static_cast<int>(heads));
  m.set_kv_heads(static_cast<int>(kv_heads));
  m.set_head_dim(static_cast<int>(head_dim));
  m.set_intermediate_size(static_cast<int>(dense_inter));
  m.set_vocab_size(static_cast<int>(vocab));
  m.set_max_context_length(static_cast<int>(std::min(max_context, 134217728.0)));
  if (rope->max_context > 0) {
    m.set_rope_scaled_max_context_length(static_cast<int>(rope->max_context));
    m.set_rope_scaling(rope->description);
  }
  m.set_tied_embeddings(tie);
  if (experts > 0) {
    m.set_experts(static_cast<int>(experts));
    m.set_active_experts(static_cast<int>(active));
    m.set_expert_intermediate_size(static_cast<int>(expert_inter));
    m.set_shared_experts(static_cast<int>(shared));
    m.set_dense_layers(static_cast<int>(dense_layers));
  }
  if (mla) {
    m.set_kv_lora_rank(static_cast<int>(kv_lora));
    m.set_qk_rope_head_dim(static_cast<int>(rope_dim));
  }
  if (window > 0) {
    m.set_sliding_window(static_cast<int>(window));
    m.set_sliding_window_layers(static_cast<int>(window_layers));
  }
  m.set_checkpoint_weight_bytes(std::round(weight_bytes));
  m.set_quantization(quant.present
                         ? quant.description
                         : absl::StrCat(dtype.empty() ? "bfloat16" : dtype, " (unquantized)"));
  return m;
}

}  // namespace gpuadvisor::sizing
