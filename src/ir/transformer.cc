// Parameter counts of a transformer configuration.
#include "ir/transformer.h"

namespace paraplan {

double TransformerConfig::attention_parameters() const {
  const double h = static_cast<double>(hidden_size);
  const double a = static_cast<double>(num_attention_heads);
  double p = 0;
  if (mla()) {
    const double qk = static_cast<double>(qk_nope_head_dim + qk_rope_head_dim);
    const double v = static_cast<double>(v_head_dim), r = static_cast<double>(kv_lora_rank);
    const double rq = static_cast<double>(q_lora_rank);
    p += q_lora_rank > 0 ? h * rq + rq + rq * a * qk : h * a * qk;  // queries (with their norm)
    p += h * (r + static_cast<double>(qk_rope_head_dim)) + r;       // compressed keys/values, norm
    p += r * a * (static_cast<double>(qk_nope_head_dim) + v);       // their up-projection
    p += a * v * h;                                                 // output
  } else {
    const double q = static_cast<double>(num_attention_heads * head_dim);
    const double kv = static_cast<double>(num_kv_heads * head_dim);
    p += h * q + 2 * h * kv + q * h;  // Q, K, V, output
    if (biases || attention_bias) p += q + 2 * kv + (biases ? h : 0.0);
    if (qk_norm) p += 2 * static_cast<double>(head_dim);
  }
  if (attention_sinks) p += a;
  p += biases ? 2 * h : h;  // the norm before attention (scale, and shift with biases)
  return p;
}

double TransformerConfig::mlp_parameters(std::int64_t ffn) const {
  const double h = static_cast<double>(hidden_size), f = static_cast<double>(ffn);
  double p = (gated_mlp ? 3 : 2) * h * f;
  if (biases) p += f + h;
  return p;
}

double TransformerConfig::embedding_parameters() const {
  const double h = static_cast<double>(hidden_size), v = static_cast<double>(vocab_size);
  double p = v * h;
  if (!tied_embeddings) p += v * h;
  if (learned_positions) p += static_cast<double>(max_positions) * h;
  p += biases ? 2 * h : h;  // final norm
  return p;
}

namespace {
double moe_mlp(const TransformerConfig& c, std::int64_t routed) {
  // Each shared expert is an MLP of its own width (the expert width unless given), as the
  // analytic model prices and the exports write them.
  const std::int64_t shared_ffn =
      c.shared_expert_ffn_hidden_size ? c.shared_expert_ffn_hidden_size : c.expert_ffn_hidden_size;
  double p = static_cast<double>(routed) * c.mlp_parameters(c.expert_ffn_hidden_size);
  if (c.expert_biases)  // each expert's input (gated: two) and output biases, and the router's
    p += static_cast<double>(routed) *
             static_cast<double>((c.gated_mlp ? 2 : 1) * c.expert_ffn_hidden_size + c.hidden_size) +
         static_cast<double>(c.num_experts);
  p += static_cast<double>(c.shared_experts) * c.mlp_parameters(shared_ffn);
  p += static_cast<double>(c.hidden_size * c.num_experts);  // router
  return p;
}
}  // namespace

double TransformerConfig::parameters() const {
  const double dense_layers = static_cast<double>(num_layers - moe_layers());
  double p = embedding_parameters() + static_cast<double>(num_layers) * attention_parameters();
  // The norm before the MLP.
  p += static_cast<double>(num_layers) * (biases ? 2.0 : 1.0) * static_cast<double>(hidden_size);
  p += dense_layers * mlp_parameters(ffn_hidden_size);
  if (moe()) p += static_cast<double>(moe_layers()) * moe_mlp(*this, num_experts);
  return p;
}

double TransformerConfig::active_parameters() const {
  if (!moe()) return parameters();
  const double dense_layers = static_cast<double>(num_layers - moe_layers());
  double p = embedding_parameters() + static_cast<double>(num_layers) * attention_parameters();
  p += static_cast<double>(num_layers) * (biases ? 2.0 : 1.0) * static_cast<double>(hidden_size);
  p += dense_layers * mlp_parameters(ffn_hidden_size);
  p += static_cast<double>(moe_layers()) * moe_mlp(*this, experts_per_token);
  return p;
}

}  // namespace paraplan
