// Parameter counts of a transformer configuration.
#include "ir/transformer.h"

namespace paraplan {

double TransformerConfig::attention_parameters() const {
  const double h = static_cast<double>(hidden_size);
  const double q = static_cast<double>(num_attention_heads * head_dim);
  const double kv = static_cast<double>(num_kv_heads * head_dim);
  double p = h * q + 2 * h * kv + q * h;  // Q, K, V, output
  if (biases) p += q + 2 * kv + h;
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
  const double shared_ffn = static_cast<double>(c.shared_expert_ffn_hidden_size
                                                    ? c.shared_expert_ffn_hidden_size
                                                    : c.expert_ffn_hidden_size * c.shared_experts);
  double p = static_cast<double>(routed) * c.mlp_parameters(c.expert_ffn_hidden_size);
  if (c.shared_experts > 0) p += c.mlp_parameters(static_cast<std::int64_t>(shared_ffn));
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
