// Key names differ between model families; each field lists the names it accepts, first wins.
#include "io/hf_config.h"

#include <fmt/format.h>

#include <filesystem>
#include <initializer_list>
#include <set>

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

TransformerConfig hf_config_from_json(const Json& doc, const std::string& source) {
  if (!doc.is_object())
    throw Error(ErrorKind::kInput, source, "a config.json must be a JSON object");
  Keys k(doc, source);
  TransformerConfig c;
  std::string type;
  if (const Json* t = k.find({"model_type"}); t && t->is_string()) type = t->get<std::string>();
  const std::filesystem::path file(source);
  c.name = doc.contains("_name_or_path") && doc["_name_or_path"].is_string()
               ? doc["_name_or_path"].get<std::string>()
           : file.filename() == "config.json" ? file.parent_path().filename().string()
                                              : file.stem().string();
  c.name = utf8_or_replaced(c.name);  // a folder name need not be UTF-8
  if (c.name.empty()) c.name = type.empty() ? "model" : type;
  const bool gpt2 = type == "gpt2", neox = type == "gpt_neox";
  c.hidden_size = k.count({"hidden_size", "n_embd", "d_model"}, "the hidden size");
  c.num_layers = k.count({"num_hidden_layers", "n_layer", "num_layers"}, "the number of layers");
  c.num_attention_heads =
      k.count({"num_attention_heads", "n_head"}, "the number of attention heads");
  c.num_kv_heads =
      k.count({"num_key_value_heads"}, "the number of key-value heads", c.num_attention_heads);
  if (c.num_attention_heads % c.num_kv_heads)
    throw Error(ErrorKind::kInput, source + ": /num_key_value_heads",
                fmt::format("{} attention heads cannot be grouped over {} key-value heads (it must "
                            "divide the number of heads)",
                            c.num_attention_heads, c.num_kv_heads));
  std::int64_t derived_head_dim = c.hidden_size / c.num_attention_heads;
  if (!k.find({"head_dim"}) && c.hidden_size % c.num_attention_heads)
    throw Error(ErrorKind::kInput, source + ": /num_attention_heads",
                fmt::format("the hidden size {} is not divisible by {} heads; give \"head_dim\"",
                            c.hidden_size, c.num_attention_heads));
  c.head_dim = k.count({"head_dim"}, "the width of an attention head", derived_head_dim);
  const std::int64_t default_ffn = gpt2 || neox ? 4 * c.hidden_size : -1;
  c.ffn_hidden_size =
      k.count({"intermediate_size", "n_inner", "ffn_hidden_size"}, "the MLP width", default_ffn);
  static const std::set<std::string> gated_types = {
      "llama",       "mistral",     "mixtral", "qwen2",  "qwen2_moe", "qwen3", "qwen3_moe",
      "deepseek_v2", "deepseek_v3", "gemma",   "gemma2", "phi3",      "olmo"};
  c.gated_mlp = gated_types.count(type) > 0;
  if (const Json* act = k.find({"hidden_act", "activation_function"}); act && act->is_string()) {
    const std::string a = act->get<std::string>();
    if (a.find("glu") != std::string::npos) c.gated_mlp = true;
  }
  c.vocab_size = k.count({"vocab_size", "padded_vocab_size"}, "the vocabulary size");
  c.tied_embeddings = k.flag("tie_word_embeddings", gpt2);
  c.learned_positions = gpt2;
  if (gpt2)
    c.max_positions =
        k.count({"n_positions", "max_position_embeddings"}, "the number of positions", 1024);
  c.biases = gpt2 || neox;
  c.num_experts = k.count({"num_local_experts", "n_routed_experts", "num_experts"},
                          "the number of experts", 0, true);
  if (c.moe()) {
    c.experts_per_token = k.count({"num_experts_per_tok", "moe_topk"}, "experts per token");
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
  }
  return c;
}

TransformerConfig read_hf_config(const std::string& path) {
  return hf_config_from_json(parse_json_file(path), path);
}

}  // namespace paraplan::io
