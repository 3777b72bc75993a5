// Dimensions from the models' papers and published config.json files.
#include "zoo/llm_models.h"

#include <cctype>
#include <map>

namespace paraplan::zoo {
TransformerConfig megatron_gpt(const std::string& name, std::int64_t heads, std::int64_t hidden,
                               std::int64_t layers, std::int64_t vocab) {
  TransformerConfig c;
  c.name = name;
  c.hidden_size = hidden;
  c.num_layers = layers;
  c.num_attention_heads = heads;
  c.num_kv_heads = heads;
  c.head_dim = hidden / heads;
  c.ffn_hidden_size = 4 * hidden;
  c.vocab_size = vocab;
  c.tied_embeddings = true;
  c.learned_positions = true;
  c.max_positions = 2048;
  c.biases = true;
  return c;
}

namespace {

TransformerConfig gpt(const std::string& name, std::int64_t heads, std::int64_t hidden,
                      std::int64_t layers, std::int64_t vocab = 51200) {
  return megatron_gpt(name, heads, hidden, layers, vocab);
}

TransformerConfig llama(const std::string& name, std::int64_t hidden, std::int64_t layers,
                        std::int64_t heads, std::int64_t kv_heads, std::int64_t ffn,
                        std::int64_t vocab) {
  TransformerConfig c;
  c.name = name;
  c.hidden_size = hidden;
  c.num_layers = layers;
  c.num_attention_heads = heads;
  c.num_kv_heads = kv_heads;
  c.head_dim = hidden / heads;
  c.ffn_hidden_size = ffn;
  c.gated_mlp = true;
  c.vocab_size = vocab;
  c.dropout = false;  // Llama and its descendants train without dropout
  return c;
}

const std::map<std::string, TransformerConfig>& table() {
  static const std::map<std::string, TransformerConfig> models = [] {
    std::map<std::string, TransformerConfig> m;
    auto add = [&](TransformerConfig c) { m[c.name] = c; };
    // Megatron-LM scaling study: vocabulary 51,200, sequence 2,048.
    add(gpt("gpt-1.7b", 24, 2304, 24));
    add(gpt("gpt-3.6b", 32, 3072, 30));
    add(gpt("gpt-7.5b", 32, 4096, 36));
    add(gpt("gpt-18.4b", 48, 6144, 40));
    add(gpt("gpt-39.1b", 64, 8192, 48));
    add(gpt("gpt-76.1b", 80, 10240, 60));
    add(gpt("gpt-145.6b", 96, 12288, 80));
    add(gpt("gpt-310.1b", 128, 16384, 96));
    add(gpt("gpt-529.6b", 128, 20480, 105));
    add(gpt("gpt-1t", 160, 25600, 128));
    add(gpt("gpt3-175b", 96, 12288, 96, 50257));
    add(llama("llama2-7b", 4096, 32, 32, 32, 11008, 32000));
    add(llama("llama2-13b", 5120, 40, 40, 40, 13824, 32000));
    add(llama("llama2-70b", 8192, 80, 64, 8, 28672, 32000));
    // Llama 3's rope_theta is 500,000 (its config.json).
    for (TransformerConfig c : {llama("llama3-8b", 4096, 32, 32, 8, 14336, 128256),
                                llama("llama3-70b", 8192, 80, 64, 8, 28672, 128256),
                                llama("llama3-405b", 16384, 126, 128, 8, 53248, 128256)}) {
      c.rotary_base = 500000;
      add(c);
    }
    TransformerConfig mixtral = llama("mixtral-8x7b", 4096, 32, 32, 8, 14336, 32000);
    mixtral.rotary_base = 1000000;
    mixtral.num_experts = 8;
    mixtral.experts_per_token = 2;
    mixtral.expert_ffn_hidden_size = 14336;
    add(mixtral);
    // DeepSeek-V3's dimensions with grouped-query attention standing in for multi-head latent
    // attention: 61 layers (3 dense), 256 routed experts (top 8) and 1 shared expert.
    TransformerConfig ds = llama("deepseek-v3-like", 7168, 61, 128, 8, 18432, 129280);
    ds.head_dim = 128;
    ds.num_experts = 256;
    ds.experts_per_token = 8;
    ds.shared_experts = 1;
    ds.expert_ffn_hidden_size = 2048;
    ds.first_dense_layers = 3;
    add(ds);
    return m;
  }();
  return models;
}

}  // namespace

const std::vector<std::string>& llm_model_names() {
  static const std::vector<std::string> names = {
      "gpt-1.7b",   "gpt-3.6b",    "gpt-7.5b",     "gpt-18.4b",       "gpt-39.1b",
      "gpt-76.1b",  "gpt-145.6b",  "gpt-310.1b",   "gpt-529.6b",      "gpt-1t",
      "gpt3-175b",  "llama2-7b",   "llama2-13b",   "llama2-70b",      "llama3-8b",
      "llama3-70b", "llama3-405b", "mixtral-8x7b", "deepseek-v3-like"};
  return names;
}

const std::vector<std::pair<std::string, std::string>>& llm_model_aliases() {
  static const std::vector<std::pair<std::string, std::string>> aliases = {
      {"llama3.1-8b", "llama3-8b"},
      {"llama3.1-70b", "llama3-70b"},
      {"llama3.1-405b", "llama3-405b"},
      {"meta-llama/Meta-Llama-3-8B", "llama3-8b"},
      {"meta-llama/Meta-Llama-3.1-8B", "llama3-8b"},
      {"meta-llama/Llama-3.1-8B", "llama3-8b"},
      {"meta-llama/Meta-Llama-3-70B", "llama3-70b"},
      {"meta-llama/Meta-Llama-3.1-70B", "llama3-70b"},
      {"meta-llama/Llama-3.1-70B", "llama3-70b"},
      {"meta-llama/Meta-Llama-3.1-405B", "llama3-405b"},
      {"meta-llama/Llama-3.1-405B", "llama3-405b"},
      {"meta-llama/Llama-2-7b-hf", "llama2-7b"},
      {"meta-llama/Llama-2-13b-hf", "llama2-13b"},
      {"meta-llama/Llama-2-70b-hf", "llama2-70b"},
      {"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b"},
  };
  return aliases;
}

std::string hugging_face_id(const std::string& name) {
  const auto slash = name.find('/');
  if (slash != std::string::npos && slash > 0 && slash + 1 < name.size() &&
      name.find('/', slash + 1) == std::string::npos && name.find(' ') == std::string::npos)
    return name;
  for (const auto& [alias, builtin] : llm_model_aliases())
    if (builtin == name && alias.find('/') != std::string::npos) return alias;
  return "";
}

std::optional<TransformerConfig> llm_model(const std::string& name) {
  if (auto it = table().find(name); it != table().end()) return it->second;
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  // A Hugging Face id of an instruction-tuned model has the base model's shapes.
  std::string key = lower(name);
  for (const auto& [tuned, base] : {std::pair{"-instruct", ""}, std::pair{"-chat-hf", "-hf"},
                                    std::pair{"-instruct-v0.1", "-v0.1"}}) {
    const std::string t = tuned;
    if (key.size() > t.size() && key.compare(key.size() - t.size(), std::string::npos, t) == 0) {
      key.resize(key.size() - t.size());
      key += base;
    }
  }
  for (const auto& [alias, builtin] : llm_model_aliases())
    if (lower(alias) == key) return table().at(builtin);
  return std::nullopt;
}

}  // namespace paraplan::zoo
