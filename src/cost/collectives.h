// Collective communication priced after NCCL's own cost model (src/graph/tuning.cc): ring
// reduce-scatter, all-gather and all-reduce, and the tree all-reduce, with latencies per ring
// step inside a node and per step that crosses nodes (docs/cost-models.md, `analytic`).
#pragma once

#include "ir/calibration.h"

namespace paraplan {

/// Latency of one ring reduce-scatter or all-gather call over n members spread over `nodes`
/// nodes: n - 1 steps, nodes - 1 of them across the network.
double ring_latency_s(int n, int nodes, const Calibration& cal);
/// Ring all-reduce of `bytes` over n devices: twice the half, with `latency_per_half` each.
double ring_allreduce_s(double bytes, int n, double bandwidth, double latency_per_half);
/// Ring reduce-scatter or all-gather of `bytes` (the full buffer) over n devices.
double ring_half_s(double bytes, int n, double bandwidth, double latency);
/// NCCL's tree all-reduce: the ring's bandwidth discounted to 90 % over the whole buffer twice,
/// a latency growing with log2 of the nodes.
double tree_allreduce_s(double bytes, int n, int nodes, double bandwidth, const Calibration& cal);

}  // namespace paraplan
