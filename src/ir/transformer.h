// A decoder-only transformer described by its architecture (what a Hugging Face config.json
// says), independent of how it is trained: sequence length and batch are training settings.
#pragma once

#include <cstdint>
#include <string>

namespace paraplan {

struct TransformerConfig {
  std::string name;
  std::int64_t hidden_size = 0;          ///< h
  std::int64_t num_layers = 0;           ///< L
  std::int64_t num_attention_heads = 0;  ///< a
  std::int64_t num_kv_heads = 0;         ///< grouped-query attention; = a for multi-head
  std::int64_t head_dim = 0;             ///< h / a unless the config says otherwise
  std::int64_t ffn_hidden_size = 0;      ///< dense MLP width
  bool gated_mlp = false;                ///< SwiGLU-style: three matrices instead of two
  std::int64_t vocab_size = 0;
  bool tied_embeddings = false;    ///< the LM head reuses the input embedding
  bool learned_positions = false;  ///< GPT-2 style position embedding table
  std::int64_t max_positions = 0;  ///< rows of that table
  bool biases = false;             ///< linear layers carry biases (GPT-2, GPT-NeoX)
  // Mixture of experts (num_experts = 0: dense).
  std::int64_t num_experts = 0;
  std::int64_t experts_per_token = 0;  ///< top-k
  std::int64_t shared_experts = 0;
  std::int64_t expert_ffn_hidden_size = 0;
  std::int64_t shared_expert_ffn_hidden_size = 0;  ///< 0: = expert_ffn_hidden_size
  std::int64_t first_dense_layers = 0;             ///< leading layers with a dense MLP (DeepSeek)

  bool moe() const { return num_experts > 0; }
  /// Layers with a mixture-of-experts MLP.
  std::int64_t moe_layers() const { return moe() ? num_layers - first_dense_layers : 0; }

  /// Parameters of one layer's attention block (projections, norms).
  double attention_parameters() const;
  /// Parameters of one dense MLP of width `ffn`.
  double mlp_parameters(std::int64_t ffn) const;
  /// Embedding (+ position table) and, unless tied, the LM head; plus the final norm.
  double embedding_parameters() const;
  /// Every weight.
  double parameters() const;
  /// Weights a token passes through (MoE: only its top-k and the shared experts).
  double active_parameters() const;
};

}  // namespace paraplan
