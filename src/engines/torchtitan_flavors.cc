// The models torchtitan 238fa99 builds by name and flavor that paraplan prices: llama3's
// (torchtitan/models/llama3/__init__.py), deepseek_v3's debug model and 16B
// (torchtitan/models/deepseek_v3/__init__.py: DeepSeek-V2-Lite's shape) and qwen3's
// (torchtitan/models/qwen3/__init__.py: Qwen3's published shapes), as built-ins or as the
// config.json of the same shape (torchtitan's FeedForward: ffn = 256·⌈(2/3 · 4·dim) ÷ 256⌉ for
// the llama3 debug model, which sets neither multiplier).
#include "engines/torchtitan_flavors.h"

#include <fmt/format.h>

#include "io/hf_config.h"

namespace paraplan::engines {
namespace {

const TorchtitanFlavor kFlavors[] = {
    {"llama3", "8B", "llama3-8b", nullptr, "llama3_8b"},
    {"llama3", "70B", "llama3-70b", nullptr, "llama3_70b"},
    {"llama3", "405B", "llama3-405b", nullptr, "llama3_405b"},
    {"llama3", "debugmodel", nullptr,
     R"({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 6,
         "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 768,
         "vocab_size": 2048, "rope_theta": 500000, "tie_word_embeddings": false,
         "max_position_embeddings": 131072, "hidden_act": "silu", "rms_norm_eps": 1e-05})",
     "llama3_debugmodel"},
    {"deepseek_v3", "debugmodel", nullptr,
     R"({"model_type": "deepseek_v3", "hidden_size": 256, "intermediate_size": 1024,
         "moe_intermediate_size": 256, "num_hidden_layers": 6, "first_k_dense_replace": 1,
         "num_attention_heads": 16, "num_key_value_heads": 16, "n_routed_experts": 8,
         "n_shared_experts": 2, "num_experts_per_tok": 3, "moe_layer_freq": 1,
         "q_lora_rank": null, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
         "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 2048,
         "tie_word_embeddings": false, "hidden_act": "silu", "scoring_func": "softmax",
         "norm_topk_prob": false, "max_position_embeddings": 163840, "rms_norm_eps": 1e-06})",
     "deepseek_v3_debugmodel"},
    {"deepseek_v3", "16B", nullptr,
     R"({"model_type": "deepseek_v3", "hidden_size": 2048, "intermediate_size": 10944,
         "moe_intermediate_size": 1408, "num_hidden_layers": 27, "first_k_dense_replace": 1,
         "num_attention_heads": 16, "num_key_value_heads": 16, "n_routed_experts": 64,
         "n_shared_experts": 2, "num_experts_per_tok": 6, "moe_layer_freq": 1,
         "q_lora_rank": null, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
         "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400,
         "tie_word_embeddings": false, "hidden_act": "silu", "scoring_func": "softmax",
         "norm_topk_prob": false, "max_position_embeddings": 163840, "rms_norm_eps": 1e-06})",
     "deepseek_v3_16b"},
    {"qwen3", "0.6B", nullptr,
     R"({"model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 28,
         "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
         "intermediate_size": 3072, "vocab_size": 151936, "tie_word_embeddings": true,
         "rope_theta": 1000000, "max_position_embeddings": 40960, "hidden_act": "silu",
         "rms_norm_eps": 1e-06})",
     "qwen3_0_6b"},
    {"qwen3", "1.7B", nullptr,
     R"({"model_type": "qwen3", "hidden_size": 2048, "num_hidden_layers": 28,
         "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
         "intermediate_size": 6144, "vocab_size": 151936, "tie_word_embeddings": true,
         "rope_theta": 1000000, "max_position_embeddings": 40960, "hidden_act": "silu",
         "rms_norm_eps": 1e-06})",
     "qwen3_1_7b"},
    {"qwen3", "4B", nullptr,
     R"({"model_type": "qwen3", "hidden_size": 2560, "num_hidden_layers": 36,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
         "intermediate_size": 9728, "vocab_size": 151936, "tie_word_embeddings": true,
         "rope_theta": 1000000, "max_position_embeddings": 40960, "hidden_act": "silu",
         "rms_norm_eps": 1e-06})",
     nullptr},
    {"qwen3", "8B", nullptr,
     R"({"model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 36,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
         "intermediate_size": 12288, "vocab_size": 151936, "tie_word_embeddings": false,
         "rope_theta": 1000000, "max_position_embeddings": 40960, "hidden_act": "silu",
         "rms_norm_eps": 1e-06})",
     nullptr},
    {"qwen3", "14B", nullptr,
     R"({"model_type": "qwen3", "hidden_size": 5120, "num_hidden_layers": 40,
         "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
         "intermediate_size": 17408, "vocab_size": 151936, "tie_word_embeddings": false,
         "rope_theta": 1000000, "max_position_embeddings": 40960, "hidden_act": "silu",
         "rms_norm_eps": 1e-06})",
     "qwen3_14b"},
    {"qwen3", "32B", nullptr,
     R"({"model_type": "qwen3", "hidden_size": 5120, "num_hidden_layers": 64,
         "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
         "intermediate_size": 25600, "vocab_size": 151936, "tie_word_embeddings": false,
         "rope_theta": 1000000, "max_position_embeddings": 40960, "hidden_act": "silu",
         "rms_norm_eps": 1e-06})",
     "qwen3_32b"},
    {"qwen3", "30B-A3B", nullptr,
     R"({"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48,
         "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
         "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128,
         "num_experts_per_tok": 8, "norm_topk_prob": true, "decoder_sparse_step": 1,
         "mlp_only_layers": [], "vocab_size": 151936, "tie_word_embeddings": false,
         "rope_theta": 1000000, "max_position_embeddings": 40960, "hidden_act": "silu",
         "rms_norm_eps": 1e-06})",
     "qwen3_30b_a3b"}};

// The shape torchtitan builds: every count the parameters and the passes depend on.
bool same_shape(const TransformerConfig& a, const TransformerConfig& b) {
  return a.num_layers == b.num_layers && a.hidden_size == b.hidden_size &&
         a.num_attention_heads == b.num_attention_heads && a.num_kv_heads == b.num_kv_heads &&
         a.ffn_hidden_size == b.ffn_hidden_size && a.vocab_size == b.vocab_size &&
         a.tied_embeddings == b.tied_embeddings && a.num_experts == b.num_experts &&
         a.expert_ffn_hidden_size == b.expert_ffn_hidden_size &&
         a.experts_per_token == b.experts_per_token &&
         a.first_dense_layers == b.first_dense_layers && a.shared_experts == b.shared_experts &&
         a.kv_lora_rank == b.kv_lora_rank && a.q_lora_rank == b.q_lora_rank &&
         a.parameters() == b.parameters();
}

std::string model_name(const TorchtitanFlavor& f) {
  return f.builtin != nullptr ? std::string(f.builtin)
                              : fmt::format("torchtitan-{}-{}", f.name, f.flavor);
}

}  // namespace

const TorchtitanFlavor* find_torchtitan_flavor(const std::string& name, const std::string& flavor) {
  for (const TorchtitanFlavor& f : kFlavors)
    if (name == f.name && flavor == f.flavor) return &f;
  return nullptr;
}

TransformerConfig torchtitan_flavor_model(const TorchtitanFlavor& f) {
  TransformerConfig m = io::hf_config_from_json(
      io::Json::parse(f.shape), fmt::format("torchtitan 238fa99 {} flavor {}", f.name, f.flavor));
  m.name = model_name(f);
  return m;
}

const TorchtitanFlavor* torchtitan_flavor_of(const TransformerConfig& model) {
  for (const TorchtitanFlavor& f : kFlavors)
    if (model.name == model_name(f) ||
        (f.builtin == nullptr && same_shape(model, torchtitan_flavor_model(f))))
      return &f;
  return nullptr;
}

}  // namespace paraplan::engines
