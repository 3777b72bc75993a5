// Key names differ between model families; each field lists the names it accepts, first wins.
#include "io/hf_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <utility>
#include <vector>

namespace paraplan::io {
namespace {

class Keys {
 public:
  Keys(const Json& doc, std::string source) : doc_(doc), source_(std::move(source)) {}

  const Json* find(std::initializer_list<const char*> names) const {
    for (const char* n : names)
      if (doc_.contains(n) && !doc_.at(n).is_null()) return &doc_.at(n);
    return nullptr;
  }
  std::string first_name(std::initializer_list<const char*> names) const {
    for (const char* n : names)
      if (doc_.contains(n) && !doc_.at(n).is_null()) return n;
    return *names.begin();
  }
  /// A positive integer under one of `names`; `fallback` < 0 means required.
  std::int64_t count(std::initializer_list<const char*> names, const char* what,
                     std::int64_t fallback = -1, bool allow_zero = false) const {
    const Json* v = find(names);
    if (!v) {
      if (fallback >= 0) return fallback;
      std::string alts;
      for (const char* n : names) {
        alts += alts.empty() ? "\"" : ", \"";
        alts += n;
        alts += '"';
      }
      throw Error(ErrorKind::kInput, source_,
                  fmt::format("missing key {}: {} (a positive integer)", alts, what));
    }
    if (!v->is_number_integer() || v->get<std::int64_t>() < (allow_zero ? 0 : 1))
      throw Error(ErrorKind::kInput, source_ + ": /" + first_name(names),
                  fmt::format("{} must be a {} integer, got {}", what,
                              allow_zero ? "non-negative" : "positive", describe(*v)));
    return v->get<std::int64_t>();
  }
  bool flag(const char* name, bool fallback) const {
    const Json* v = find({name});
    if (!v) return fallback;
    if (!v->is_boolean())
      throw Error(ErrorKind::kInput, source_ + ": /" + name,
                  "must be true or false, got " + describe(*v));
    return v->get<bool>();
  }

 private:
  const Json& doc_;
  std::string source_;
};

}  // namespace

namespace {

// The model families whose Hugging Face implementation paraplan follows (defaults included).
struct Family {
  const char* type;
  bool gated;           ///< gated MLP whatever the activation is called
  bool tied;            ///< tie_word_embeddings' default
  bool attention_bias;  ///< attention_bias' default (Qwen2: Q, K, V biases always)
  bool qk_norm;
};
constexpr Family kFamilies[] = {
    {"gpt2", false, true, false, false},        {"gpt_neox", false, false, false, false},
    {"llama", true, false, false, false},       {"mistral", true, false, false, false},
    {"mixtral", true, false, false, false},     {"qwen2", true, false, true, false},
    {"qwen2_moe", true, false, true, false},    {"qwen3", true, false, false, true},
    {"qwen3_moe", true, false, false, true},    {"deepseek_v2", true, false, false, false},
    {"deepseek_v3", true, false, false, false}, {"gemma", true, true, false, false},
    {"gemma2", true, true, false, false},       {"gemma3_text", true, true, false, true},
    {"phi3", true, false, false, false},        {"olmo", true, false, false, false},
    {"gpt_oss", true, false, false, false},     {"mpt", false, true, false, false},
    {"starcoder2", false, true, false, false},  {"olmo2", true, false, false, true},
    {"smollm3", true, true, false, false},      {"cohere", true, true, false, false},
    {"falcon", false, true, false, false},      {"nemotron", false, false, false, false},
};

std::string family_names() {
  std::string out;
  for (const Family& f : kFamilies) out += (out.empty() ? "" : ", ") + std::string(f.type);
  return out;
}

double number_or(const Json& doc, const char* key, double fallback) {
  return doc.contains(key) && doc.at(key).is_number() ? doc.at(key).get<double>() : fallback;
}

// A layer index or count read as a number: clamped to [0, layers] before it becomes an int.
int layer_number(const Json& doc, const char* key, double fallback, std::int64_t layers) {
  const double v = number_or(doc, key, fallback);
  return static_cast<int>(std::clamp(std::isfinite(v) ? v : 0.0, 0.0, static_cast<double>(layers)));
}

// Which layers use the sliding window, by the family's rule (HF's layer_types when given).
void read_sliding_window(const Json& doc, const Keys& k, const std::string& type,
                         const std::string& source, TransformerConfig& c) {
  const Json* w = k.find({"sliding_window"});
  if (!w) return;
  if (!w->is_number_integer() || w->get<std::int64_t>() < 1)
    throw Error(ErrorKind::kInput, source + ": /sliding_window",
                "must be a positive integer or null, got " + describe(*w));
  const int layers = static_cast<int>(c.num_layers);
  std::vector<int> on;
  if (const Json* types = k.find({"layer_types"})) {
    if (!types->is_array() || static_cast<int>(types->size()) != layers)
      throw Error(ErrorKind::kInput, source + ": /layer_types",
                  fmt::format("must list one attention type per layer ({})", layers));
    for (int i = 0; i < layers; ++i) {
      const Json& t = (*types)[static_cast<std::size_t>(i)];
      if (t == "sliding_attention") {
        on.push_back(i);
      } else if (t != "full_attention") {
        throw Error(ErrorKind::kInput, source + ": /layer_types/" + std::to_string(i),
                    "must be \"sliding_attention\" or \"full_attention\", got " + describe(t));
      }
    }
  } else if (type == "gemma2") {  // every other layer, from the first
    for (int i = 0; i < layers; i += 2) on.push_back(i);
  } else if (type == "gemma3_text") {  // all but every sliding_window_pattern-th
    const int pattern = layer_number(doc, "sliding_window_pattern", 6, c.num_layers);
    for (int i = 0; i < layers; ++i)
      if (pattern <= 0 || (i + 1) % pattern) on.push_back(i);
  } else if (type == "qwen2" || type == "qwen2_moe" || type == "qwen3" || type == "qwen3_moe") {
    if (k.flag("use_sliding_window", false)) {  // from max_window_layers on
      const int from = layer_number(doc, "max_window_layers", 0, c.num_layers);
      for (int i = from; i < layers; ++i) on.push_back(i);
    }
  } else {  // Mistral, Mixtral, Phi-3: every layer
    for (int i = 0; i < layers; ++i) on.push_back(i);
  }
  if (on.empty()) return;
  c.sliding_window = w->get<std::int64_t>();
  c.sliding_window_layers = std::move(on);
}

// Mixture of experts: the experts, how many a token takes, their widths, shared experts, the
// leading dense layers and the MoE layers' interval.
void read_experts(const Keys& k, const std::string& type, const std::string& source,
                  TransformerConfig& c) {
  c.num_experts = k.count({"num_local_experts", "n_routed_experts", "num_experts"},
                          "the number of experts", 0, true);
  if (c.moe()) {
    c.experts_per_token =
        k.count({"num_experts_per_tok", "experts_per_token", "moe_topk"}, "experts per token");
    if (c.experts_per_token > c.num_experts)
      throw Error(ErrorKind::kInput, source + ": /num_experts_per_tok",
                  fmt::format("{} experts per token exceeds the {} experts", c.experts_per_token,
                              c.num_experts));
    c.expert_ffn_hidden_size =
        k.count({"moe_intermediate_size"}, "the expert MLP width", c.ffn_hidden_size);
    c.shared_experts = k.count({"n_shared_experts"}, "the number of shared experts", 0, true);
    c.shared_expert_ffn_hidden_size =
        k.count({"shared_expert_intermediate_size"}, "the shared expert MLP width", 0, true);
    if (c.shared_expert_ffn_hidden_size > 0 && c.shared_experts == 0) c.shared_experts = 1;
    c.first_dense_layers = k.count({"first_k_dense_replace"}, "the leading dense layers", 0, true);
    if (c.first_dense_layers > c.num_layers)
      throw Error(ErrorKind::kInput, source + ": /first_k_dense_replace",
                  "more leading dense layers than layers");
    c.moe_every = k.count({"moe_layer_freq", "decoder_sparse_step"}, "the MoE layer interval", 1);
    if (const Json* only = k.find({"mlp_only_layers"});
        only && !(only->is_array() && only->empty()))
      throw Error(ErrorKind::kUsage, source + ": /mlp_only_layers",
                  "dense layers at given places are not modelled (give an empty list, or "
                  "first_k_dense_replace for leading ones)");
    c.expert_biases = type == "gpt_oss";
  }
}

// MPT's own keys (llm-foundry's MPTConfig): d_model, n_heads, n_layers, expansion_ratio, no_bias,
// attn_config with ALiBi; the LM head is the embedding.
TransformerConfig read_mpt(const Json& doc, const Keys& k, const std::string& source) {
  TransformerConfig c;
  c.hidden_size = k.count({"d_model"}, "the hidden size");
  c.num_layers = k.count({"n_layers"}, "the number of layers");
  c.num_attention_heads = k.count({"n_heads"}, "the number of attention heads");
  if (c.hidden_size % c.num_attention_heads)
    throw Error(ErrorKind::kInput, source + ": /n_heads",
                "the hidden size must be divisible by the number of heads");
  c.num_kv_heads = c.num_attention_heads;
  c.head_dim = c.hidden_size / c.num_attention_heads;
  const Json* ratio = k.find({"expansion_ratio"});
  const double expansion = ratio && ratio->is_number() ? ratio->get<double>() : 4.0;
  if (!(expansion > 0 && expansion <= 256))
    throw Error(ErrorKind::kInput, source + ": /expansion_ratio",
                "must be a positive number (the MLP's width over d_model), at most 256");
  const double ffn = expansion * static_cast<double>(c.hidden_size);
  if (!(ffn >= 1 && ffn <= 1e12))
    throw Error(ErrorKind::kInput, source + ": /expansion_ratio",
                fmt::format("gives an MLP {} wide; expected 1 to 1e12", ffn));
  c.ffn_hidden_size = static_cast<std::int64_t>(ffn);
  c.vocab_size = k.count({"vocab_size"}, "the vocabulary size");
  c.tied_embeddings = true;
  c.biases = !k.flag("no_bias", false);
  double dropout = number_or(doc, "resid_pdrop", 0) + number_or(doc, "emb_pdrop", 0);
  if (doc.contains("attn_config") && doc.at("attn_config").is_object()) {
    const Json& a = doc.at("attn_config");
    c.alibi = a.contains("alibi") && a.at("alibi").is_boolean() && a.at("alibi").get<bool>();
    dropout += number_or(a, "attn_pdrop", 0);
    const std::string attn_type = a.contains("attn_type") && a.at("attn_type").is_string()
                                      ? a.at("attn_type").get<std::string>()
                                      : "multihead_attention";
    if (attn_type == "grouped_query_attention") {
      c.num_kv_heads = a.contains("kv_n_heads") && a.at("kv_n_heads").is_number_integer()
                           ? a.at("kv_n_heads").get<std::int64_t>()
                           : c.num_attention_heads;
      if (c.num_kv_heads < 1 || c.num_attention_heads % c.num_kv_heads)
        throw Error(
            ErrorKind::kInput, source + ": /attn_config/kv_n_heads",
            fmt::format("must be a positive divisor of the {} heads", c.num_attention_heads));
    } else if (attn_type == "multiquery_attention") {
      c.num_kv_heads = 1;
    } else if (attn_type != "multihead_attention") {
      throw Error(ErrorKind::kInput, source + ": /attn_config/attn_type",
                  "unknown attention type \"" + attn_type +
                      "\" (multihead_attention, multiquery_attention, grouped_query_attention)");
    }
  }
  c.dropout = dropout > 0;
  // A position table only without ALiBi (llm-foundry builds none when ALiBi gives positions).
  c.learned_positions = k.flag("learned_pos_emb", true) && !c.alibi;
  if (c.learned_positions) c.max_positions = k.count({"max_seq_len"}, "the sequence length", 2048);
  if (c.alibi) c.unpriced_keys.push_back({"attn_config.alibi", "a bias per score in the kernel"});
  return c;
}

}  // namespace

TransformerConfig hf_config_from_json(const Json& doc, const std::string& source) {
  if (!doc.is_object())
    throw Error(ErrorKind::kInput, source, "a config.json must be a JSON object");
  Keys k(doc, source);
  std::string type;
  if (const Json* t = k.find({"model_type"}); t && t->is_string()) type = t->get<std::string>();
  const Family* family = nullptr;
  for (const Family& f : kFamilies)
    if (type == f.type) family = &f;
  if (!type.empty() && !family)
    throw Error(ErrorKind::kUsage, source + ": /model_type",
                fmt::format("unknown model type \"{}\": paraplan prices the families whose "
                            "Hugging Face implementation it follows ({}); for another, give a "
                            "config without model_type in Llama's keys",
                            type, family_names()));
  TransformerConfig c = type == "mpt" ? read_mpt(doc, k, source) : TransformerConfig{};
  const std::filesystem::path file(source);
  c.name = doc.contains("_name_or_path") && doc["_name_or_path"].is_string()
               ? doc["_name_or_path"].get<std::string>()
           : file.filename() == "config.json" ? file.parent_path().filename().string()
                                              : file.stem().string();
  c.name = utf8_or_replaced(c.name);  // a folder name need not be UTF-8
  if (c.name.empty()) c.name = type.empty() ? "model" : type;
  if (type == "mpt") return c;
  const bool gpt2 = type == "gpt2", neox = type == "gpt_neox";
  c.hidden_size = k.count({"hidden_size", "n_embd", "d_model"}, "the hidden size");
  c.num_layers = k.count({"num_hidden_layers", "n_layer", "num_layers"}, "the number of layers");
  c.num_attention_heads =
      k.count({"num_attention_heads", "n_head"}, "the number of attention heads");
  c.num_kv_heads =
      k.count({"num_key_value_heads"}, "the number of key-value heads", c.num_attention_heads);
  if (type == "falcon") {  // Falcon's own: new_decoder_architecture, else multi_query's one head
    if (k.flag("new_decoder_architecture", false))
      c.num_kv_heads =
          k.count({"num_kv_heads"}, "the number of key-value heads", c.num_attention_heads);
    else if (k.flag("multi_query", true))
      c.num_kv_heads = 1;
  }
  if (c.num_attention_heads % c.num_kv_heads)
    throw Error(ErrorKind::kInput, source + ": /num_key_value_heads",
                fmt::format("{} attention heads cannot be grouped over {} key-value heads (it must "
                            "divide the number of heads)",
                            c.num_attention_heads, c.num_kv_heads));
  // Multi-head latent attention (DeepSeek): every head gets its own key and value back from the
  // compressed latent.
  c.kv_lora_rank = k.count({"kv_lora_rank"}, "the key-value latent rank", 0, true);
  if (c.mla()) {
    c.q_lora_rank = k.count({"q_lora_rank"}, "the query latent rank", 0, true);
    c.qk_nope_head_dim = k.count({"qk_nope_head_dim"}, "the non-rotary query/key head width");
    c.qk_rope_head_dim = k.count({"qk_rope_head_dim"}, "the rotary query/key head width");
    c.v_head_dim = k.count({"v_head_dim"}, "the value head width");
    c.num_kv_heads = c.num_attention_heads;
    c.head_dim = c.qk_nope_head_dim + c.qk_rope_head_dim;
  } else {
    std::int64_t derived_head_dim = c.hidden_size / c.num_attention_heads;
    if (!k.find({"head_dim"}) && c.hidden_size % c.num_attention_heads)
      throw Error(ErrorKind::kInput, source + ": /num_attention_heads",
                  fmt::format("the hidden size {} is not divisible by {} heads; give \"head_dim\"",
                              c.hidden_size, c.num_attention_heads));
    c.head_dim = k.count({"head_dim"}, "the width of an attention head", derived_head_dim);
  }
  const std::int64_t default_ffn = gpt2 || neox || type == "falcon" ? 4 * c.hidden_size : -1;
  c.ffn_hidden_size =
      k.count({"intermediate_size", "n_inner", "ffn_hidden_size"}, "the MLP width", default_ffn);
  c.gated_mlp = family && family->gated;
  if (const Json* act = k.find({"hidden_act", "activation_function", "hidden_activation"});
      act && act->is_string()) {
    const std::string a = act->get<std::string>();
    if (a.find("glu") != std::string::npos) c.gated_mlp = true;
  }
  c.vocab_size = k.count({"vocab_size", "padded_vocab_size"}, "the vocabulary size");
  c.tied_embeddings = k.flag("tie_word_embeddings", family ? family->tied : false);
  c.learned_positions = gpt2;
  if (gpt2)
    c.max_positions =
        k.count({"n_positions", "max_position_embeddings"}, "the number of positions", 1024);
  // Biases on every linear layer and norm: GPT-2, GPT-NeoX; StarCoder2 unless use_bias is false.
  c.biases = gpt2 || neox || (type == "starcoder2" && k.flag("use_bias", true)) ||
             (type == "falcon" && k.flag("bias", false));
  c.attention_bias = k.flag("attention_bias", family ? family->attention_bias : false);
  c.qk_norm = (family && family->qk_norm) || (type == "cohere" && k.flag("use_qk_norm", false));
  if (type == "falcon") c.alibi = k.flag("alibi", false);
  c.attention_sinks = type == "gpt_oss";
  // Dropout: any of the family's dropout probabilities above 0 (GPT-2's default 0.1 each).
  bool any_dropout_key = false;
  c.dropout = false;
  for (const char* key : {"attention_dropout", "hidden_dropout", "resid_pdrop", "attn_pdrop",
                          "embd_pdrop", "hidden_dropout_prob", "attention_probs_dropout_prob",
                          "residual_dropout", "embedding_dropout"})
    if (const Json* v = k.find({key}); v && v->is_number()) {
      any_dropout_key = true;
      if (v->get<double>() > 0) c.dropout = true;
    }
  if (!any_dropout_key) c.dropout = gpt2;
  read_experts(k, type, source, c);
  read_sliding_window(doc, k, type, source, c);
  c.attention_softcap = number_or(doc, "attn_logit_softcapping", 0);
  c.logit_softcap = number_or(doc, "final_logit_softcapping", 0);
  c.partial_rotary = number_or(doc, "partial_rotary_factor", 1);
  if (!(c.partial_rotary > 0 && c.partial_rotary <= 1))
    throw Error(ErrorKind::kInput, source + ": /partial_rotary_factor", "must be in (0, 1]");
  if (const double theta = number_or(doc, "rope_theta", 0); theta >= 1 && theta < 1e15)
    c.rotary_base = static_cast<std::int64_t>(theta);
  c.mtp_layers =
      k.count({"num_nextn_predict_layers"}, "the multi-token-prediction modules", 0, true);
  // Keys read and known to cost nothing the model prices (inspect lists them).
  const std::pair<const char*, const char*> free_keys[] = {
      {"rope_scaling", "rotary frequencies: no work beside RoPE's"},
      {"rope_theta", "rotary base: no work"},
      {"partial_rotary_factor", "RoPE on part of each head: element-wise work only"},
      {"quantization_config", "the checkpoint's storage format; training runs in bf16"},
      {"routed_scaling_factor", "a scale on the routed output"},
      {"scoring_func", "the router's score function (its cost is priced per expert)"},
      {"topk_method", "how the router picks experts"},
      {"n_group", "group-limited routing: fewer nodes per token (priced as unrestricted)"},
      {"topk_group", "group-limited routing: fewer nodes per token (priced as unrestricted)"},
      {"norm_topk_prob", "a normalisation of the routing weights"},
      {"swiglu_limit", "a clamp inside the gated activation"},
      {"query_pre_attn_scalar", "the attention's scale"},
      {"rms_norm_eps", "the norm's epsilon"},
      {"max_position_embeddings", "the longest sequence (no table: rotary positions)"},
      {"no_rope_layers", "layers without RoPE (SmolLM3): less element-wise work, priced with it"},
      {"no_rope_layer_interval", "every n-th layer without RoPE (SmolLM3)"},
      {"logit_scale", "a scale on the logits (Cohere): element-wise"},
      {"parallel_attn", "attention and MLP side by side on one norm (Falcon): the same work"},
      {"multi_query", "one key-value head (Falcon): read as such"},
      {"new_decoder_architecture", "Falcon's grouped key-value heads: read as such"},
      {"layer_norm_eps", "the norm's epsilon"},
      {"layer_norm_epsilon", "the norm's epsilon"},
      {"norm_eps", "the norm's epsilon"}};
  for (const auto& [key, why] : free_keys)
    if (k.find({key})) c.unpriced_keys.push_back({key, why});
  return c;
}

TransformerConfig read_hf_config(const std::string& path) {
  return hf_config_from_json(parse_json_file(path), path);
}

}  // namespace paraplan::io
