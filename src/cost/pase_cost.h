// PaSE's cost model (specs/pase.md §2–3), exactly: every layer picks a configuration (how many
// equal parts each iteration dimension is cut into); costs are FLOPs per device, communication
// converted to FLOP-equivalents through r = FLOP/s ÷ words/s.
#pragma once

#include <string>
#include <vector>

#include "cost/intra_op_network.h"
#include "ir/model.h"
#include "ir/plan.h"

namespace paraplan {

struct PaseSettings {
  int devices = 8;             ///< p
  double flops_per_s = 10e12;  ///< peak FLOP/s per device (PaSE's --flops, in TFLOP/s there)
  double bandwidth_bytes_per_s = 16e9;  ///< link bandwidth (PaSE's --bw, in GB/s there)
  int min_block = 1;  ///< PaSE's cutoff: d/f must stay >= this (if any f allows it)
  // Beyond PaSE:
  bool keep_all_flows =
      false;                   ///< price every tensor flow between two layers (PaSE keeps the last)
  bool powers_of_two = false;  ///< only split dimensions by powers of two
  bool use_all_devices = false;  ///< every layer uses exactly `devices` devices
  /// Refuse models with a layer of more configurations than this (exit 6).
  long max_configs_per_layer = 200000;
  // Memory per device (PaSE has no memory model; TensorOpt's frontier needs one): fp32 training
  // with Adam unless told otherwise.
  double bytes_per_element = 4;              ///< weights, gradients and activations
  double optimizer_bytes_per_parameter = 8;  ///< Adam's two moments in fp32; SGD: 0
};

/// Cost split of a layer's configuration (FLOP-equivalents per device).
struct PaseLayerCost {
  double compute = 0;        ///< arithmetic
  double communication = 0;  ///< collectives inside the layer (all-reduces, halos, reshapes)
};

class PaseCostModel {
 public:
  /// Error(kInput) naming the layer if a model layer has no operator description;
  /// Error(kInfeasible) if a layer has no configuration under the settings; Error(kLimit) above
  /// max_configs_per_layer.
  PaseCostModel(const Model& model, const PaseSettings& settings);

  const Model& model() const { return model_; }
  const PaseSettings& settings() const { return settings_; }
  /// FLOP-equivalents of moving one 8-byte word.
  double word_cost() const { return r_; }

  /// The configurations of layer v: one split count per iteration dimension, in the documented
  /// order (per dimension divisors ascending, the first dimension varying slowest).
  const std::vector<std::vector<int>>& configs(int v) const { return configs_[v]; }
  PaseLayerCost layer_cost(int v, const std::vector<int>& config) const;
  /// What one device holds for layer v under `config`: its shard of the weights, of their
  /// gradients and of the optimizer's state, and of the activations kept for the backward pass
  /// (the layer's outputs, and its inputs where no layer produces them). A shard is the tensor cut
  /// by the splits of the iteration dimensions it is a projection of (rounded up); a layer on
  /// fewer devices than the others sits on the first ones, so device 0 holds a shard of every
  /// layer and the peak per device is the sum over layers.
  MemoryBreakdown layer_memory(int v, const std::vector<int>& config) const;
  /// Per configuration of every layer: its memory per device (the breakdown's sum) and devices
  /// used, for the frontier.
  IntraOpResources resources() const;
  /// Redistribution cost of the tensor flowing from output `out` of u into input `in` of v.
  double flow_cost(int u, int out, const std::vector<int>& cu, int v, int in,
                   const std::vector<int>& cv) const;

  /// The min-sum network the intra-op planner solves.
  const IntraOpNetwork& network() const { return network_; }
  /// Cost(φ) recomputed from the formulas (not from the network's tables).
  double evaluate(const std::vector<int>& choice) const;
  /// The plan for one configuration per layer: per-layer splits and costs, objective = Cost(φ),
  /// step time = Cost / peak FLOP/s.
  Plan to_plan(const std::vector<int>& choice) const;
  /// The tensor flows priced between layers, after PaSE's collapse unless keep_all_flows:
  /// (from, to, from_output, to_input).
  struct Flow {
    int from, to, from_output, to_input;
  };
  const std::vector<Flow>& flows() const { return flows_; }

 private:
  void enumerate(int v);
  void build_network();

  const Model& model_;
  PaseSettings settings_;
  double r_ = 0;
  std::vector<std::vector<std::vector<int>>> configs_;
  std::vector<Flow> flows_;
  IntraOpNetwork network_;
};

}  // namespace paraplan
