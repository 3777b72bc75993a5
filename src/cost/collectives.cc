// Formulas of docs/cost-models.md, section `analytic`, "Collectives".
#include "cost/collectives.h"

#include <algorithm>
#include <cmath>

namespace paraplan {

/// Latency of one collective call over a ring of n members spread over `nodes` nodes: NCCL's
/// model (src/graph/tuning.cc) charges each ring step inside a node the intra-node latency and
/// each step that crosses nodes the network latency; a reduce-scatter or all-gather takes n - 1
/// steps, of which nodes - 1 cross.
double ring_latency_s(int n, int nodes, const Calibration& cal) {
  if (n <= 1) return 0;
  nodes = std::clamp(nodes, 1, n);
  return (n - nodes) * cal.ring_step_latency_s + (nodes - 1) * cal.network_step_latency_s;
}

/// Ring all-reduce of `bytes` over n devices (reduce-scatter + all-gather: twice the half).
double ring_allreduce_s(double bytes, int n, double bandwidth, double latency_per_half) {
  if (n <= 1) return 0;
  return 2.0 * (n - 1) / n * bytes / bandwidth + 2.0 * latency_per_half;
}

/// Ring reduce-scatter or all-gather of `bytes` (the full buffer) over n devices.
double ring_half_s(double bytes, int n, double bandwidth, double latency) {
  if (n <= 1) return 0;
  return (n - 1.0) / n * bytes / bandwidth + latency;
}

/// NCCL's tree all-reduce (a double binary tree across nodes, a chain inside each): the
/// bandwidth of the ring (NCCL discounts it to 90 %, and counts the whole buffer twice), a
/// latency that grows with log2 of the nodes instead of the ranks.
double tree_allreduce_s(double bytes, int n, int nodes, double bandwidth, const Calibration& cal) {
  if (n <= 1) return 0;
  const int per_node = std::max(1, n / std::max(1, nodes));
  const double levels = nodes > 1 ? std::ceil(std::log2(static_cast<double>(nodes))) : 0.0;
  return 2.0 * bytes / (0.9 * bandwidth) +
         2.0 * ((per_node - 1) * cal.ring_step_latency_s + levels * cal.network_step_latency_s);
}

}  // namespace paraplan
