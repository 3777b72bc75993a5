// Transformer stack generator (Megatron-style costs: 24·b·s·h² + 4·b·s²·h forward FLOPs per layer,
// backward twice the forward; activations after Korthikanti et al. 2022; 16 bytes of weights,
// gradients and Adam states per parameter).
#include "zoo/transformer_stack.h"

namespace paraplan::zoo {
namespace {

LayerOption option(const char* id, double time_s, double params, double a, double b) {
  LayerOption o;
  o.id = id;
  o.compute_time_s = time_s;
  o.parameter_bytes = params;
  o.memory_per_inflight_bytes = a;
  o.memory_fixed_bytes = b;
  return o;
}

}  // namespace

Model transformer_stack(const TransformerShape& p) {
  Model m;
  m.name = "gpt3-2.7b-like";
  m.microbatches = p.microbatches;
  const double b = p.microbatch_size, s = p.sequence, h = p.hidden, a = p.heads;
  const double rate = p.peak_flops_per_s * p.efficiency;
  const double activation_bytes = 2 * b * s * h;  // bf16 hidden state between layers
  auto add_layer = [&](std::int64_t id, std::string name, double fwd_flops, double params,
                       double act_bytes, double tp_allreduce_bytes) {
    Layer layer;
    layer.id = id;
    layer.name = std::move(name);
    for (int t : {1, 2, 4, 8}) {
      TensorParallelOptions deg;
      deg.degree = t;
      const double time = 3 * fwd_flops / t / rate;
      const double weights = 2 * params / t;                // bf16 weights, used for the all-reduce
      const double states = 16 * params / t;                // weights, gradients, Adam moments
      const double act = act_bytes / t + activation_bytes;  // replicated layer input stays whole
      // Tensor parallelism adds all-reduces of the hidden state inside the layer; we charge them
      // to the layer's input edge (Piper's sync bytes): 2 forward + 2 backward ring all-reduces.
      const double tp_bytes = t > 1 ? tp_allreduce_bytes * 2.0 * (t - 1) / t : 0.0;
      LayerOption vanilla = option("vanilla", time, weights, act, states);
      LayerOption recompute =
          option("activation recomp", time * 4 / 3, weights, activation_bytes, states + act);
      for (LayerOption* o : {&vanilla, &recompute}) o->sync_in_bytes.assign(1, tp_bytes);
      deg.options = {vanilla, recompute};
      layer.by_degree.push_back(std::move(deg));
    }
    m.layers.push_back(std::move(layer));
  };
  // Embedding: a lookup (negligible FLOPs) with vocabulary × hidden parameters.
  add_layer(0, "embedding", 2 * b * s * h, p.vocabulary * h, activation_bytes, 0);
  for (int i = 0; i < p.layers; ++i) {
    double flops = 24 * b * s * h * h + 4 * b * s * s * h;
    double params = 12 * h * h;
    double act = s * b * h * 34 + 5 * a * s * s * b;
    add_layer(i + 1, "transformer_" + std::to_string(i), flops, params, act, 2 * activation_bytes);
  }
  add_layer(p.layers + 1, "head", 2 * b * s * h * p.vocabulary, 0, 4 * b * s * p.vocabulary, 0);
  for (int i = 0; i + 1 < static_cast<int>(m.layers.size()); ++i)
    m.edges.push_back({i, i + 1, activation_bytes});
  m.index();
  // The embedding has no input edge and the sync vectors must match the edge lists.
  for (int v = 0; v < m.size(); ++v)
    for (auto& deg : m.layers[v].by_degree)
      for (auto& o : deg.options) {
        o.sync_in_bytes.resize(m.in_edge_ids[v].size(), 0.0);
        o.sync_out_bytes.assign(m.out_edge_ids[v].size(), 0.0);
      }
  return m;
}

Cluster default_cluster() {
  Cluster c;
  c.name = "2x8 A100-16GiB";
  c.device_types.push_back({"A100", 16.0 * (1ULL << 30), 312e12});
  c.machine_sizes = {8, 8};
  c.machine_device_type = {0, 0};
  c.tiers.push_back({"nvlink", 300.0 * (1ULL << 30), 0});
  c.tiers.push_back({"infiniband", 25.0 * (1ULL << 30), 0});
  return c;
}

}  // namespace paraplan::zoo
