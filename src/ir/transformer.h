// A decoder-only transformer described by its architecture (what a Hugging Face config.json
// says), independent of how it is trained: sequence length and batch are training settings.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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
  /// Trained with attention and residual dropout (the config's dropout probabilities are not
  /// all 0): the dropout masks are kept for the backward. GPT-2/3 style: yes; Llama: no.
  bool dropout = true;
  // Mixture of experts (num_experts = 0: dense).
  std::int64_t num_experts = 0;
  std::int64_t experts_per_token = 0;  ///< top-k
  std::int64_t shared_experts = 0;
  std::int64_t expert_ffn_hidden_size = 0;
  std::int64_t shared_expert_ffn_hidden_size = 0;  ///< 0: = expert_ffn_hidden_size
  std::int64_t first_dense_layers = 0;             ///< leading layers with a dense MLP (DeepSeek)
  /// Dense layers among the others: every `moe_every`-th layer is MoE (1: all of them).
  std::int64_t moe_every = 1;
  bool expert_biases = false;  ///< the experts' linear layers carry biases (GPT-OSS)
  // Multi-head latent attention (DeepSeek-V2/V3; kv_lora_rank = 0: none). Queries through a
  // rank-q_lora_rank bottleneck (0: one projection), keys and values through kv_lora_rank;
  // per head qk_nope + qk_rope dimensions score, v_head_dim are weighted.
  std::int64_t q_lora_rank = 0, kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  bool attention_bias = false;   ///< Q, K, V (and output) projections carry biases
  bool qk_norm = false;          ///< a norm per head on queries and keys (Qwen3, Gemma 3)
  bool attention_sinks = false;  ///< one learned sink logit per head (GPT-OSS)
  /// Sliding-window attention: `sliding_window` keys before each query, on the layers listed.
  std::int64_t sliding_window = 0;
  std::vector<int> sliding_window_layers;
  double attention_softcap = 0;  ///< tanh soft-capping of the attention logits (Gemma 2)
  double logit_softcap = 0;      ///< tanh soft-capping of the final logits (Gemma 2)
  double partial_rotary = 1;     ///< the share of each head rotated by RoPE (Phi)
  /// RoPE's base frequency θ (costs nothing; the engines need it to build the model priced);
  /// 0: the engine's default (10,000).
  std::int64_t rotary_base = 0;
  bool alibi = false;           ///< ALiBi position biases in the attention (MPT)
  std::int64_t mtp_layers = 0;  ///< multi-token-prediction modules (DeepSeek-V3), trained too
  /// Keys the reader understood to cost nothing in training (name: why), for inspect.
  std::vector<std::pair<std::string, std::string>> unpriced_keys;

  bool mla() const { return kv_lora_rank > 0; }
  /// Layers using the sliding window (0 when no window).
  std::int64_t windowed_layers() const {
    return sliding_window > 0 ? static_cast<std::int64_t>(sliding_window_layers.size()) : 0;
  }

  bool moe() const { return num_experts > 0; }
  /// Layers with a mixture-of-experts MLP.
  std::int64_t moe_layers() const {
    return moe() ? (num_layers - first_dense_layers) / std::max<std::int64_t>(1, moe_every) : 0;
  }

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
