// What a placement costs: the devices of every stage replica's tensor-parallel ranks, priced on
// the links their traffic crosses. A pipeline plan (its stage figures from the Piper cost model,
// time per micro-batch) becomes slots — (stage, replica, rank) — and flows between slots per
// iteration: each cut edge's activation forward and its gradient back (micro-batch j goes from
// replica j mod d of one stage to replica j mod d' of the next; rank k to rank k, the bytes split
// over the ranks) and each stage's ring all-reduce over its replicas (replica r sends
// 2(d − 1)/d of its gradient bytes to replica r + 1 mod d, per rank). Links are full duplex; the
// flows crossing a link direction share it.
//
// A stage's time per micro-batch under a placement is its compute and optimizer share plus
// - pipeline traffic: the busiest link direction any flow to or from the stage crosses, at the
//   load of every pipeline flow on it (all stages send at once in the steady state), plus each
//   flow's latency per message;
// - the all-reduce: likewise over its ring's flows, at the load of every stage's ring (they all
//   run at the end of the iteration), plus 2(d − 1) latencies.
// The placement's cost is the slowest stage's (Piper's bottleneck objective, on real links).
// Only flows between placed slots count, so a partial placement's cost never exceeds any of its
// completions' (what makes branch and bound exact).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/model.h"
#include "ir/plan.h"
#include "ir/topology.h"

namespace paraplan {

/// Activation bytes per micro-batch between each ordered pair of a plan's stages (cut edges,
/// summed; the gradients flow back with the same size).
std::map<std::pair<int, int>, double> stage_cut_bytes(const Model& model, const Plan& plan);
/// The gradient bytes one device of the stage all-reduces (its options' parameter bytes).
double stage_gradient_bytes(const Model& model, const Stage& stage);

class PlacementCostModel {
 public:
  struct Slot {
    int stage = 0, replica = 0, rank = 0;
  };
  struct Flow {
    int from = 0, to = 0;  ///< slots
    double bytes = 0;      ///< per iteration
    int messages = 0;      ///< per iteration (each pays the route's latency)
    bool allreduce = false;
    int stage = 0;         ///< the stage that pays it (both ends of a pipeline flow do)
    int other_stage = -1;  ///< pipeline flows: the other end's stage
  };

  /// `plan`: stages with their layers, options, d, t and Piper's figures (compute_time,
  /// optimizer_time per micro-batch); `microbatches`: N. `machine_of_device` (optional): a
  /// tensor-parallel group must stay inside one machine — its options were priced on the
  /// machine's links, and its traffic is not among the flows —, so a placement that splits one
  /// costs infinity. Error(kInput) if the plan needs more devices than the topology has.
  /// `group_of_device` (optional): the device group of each device (mixed clusters); a stage
  /// runs on devices of its `device_type` group only, or costs infinity.
  PlacementCostModel(const Model& model, const Plan& plan, const Topology& topology,
                     int microbatches, std::vector<int> machine_of_device = {},
                     std::vector<int> group_of_device = {});

  int slot_count() const { return static_cast<int>(slots_.size()); }
  int device_count() const { return topology_.device_count(); }
  const std::vector<Slot>& slots() const { return slots_; }
  const std::vector<Flow>& flows() const { return flows_; }
  const Topology& topology() const { return topology_; }
  const std::vector<int>& machine_of_device() const { return machine_of_device_; }
  const std::vector<int>& group_of_device() const { return group_of_device_; }

  /// The slowest stage's time per micro-batch; device_of_slot[s] < 0: not placed (its flows do
  /// not count).
  double cost(const std::vector<int>& device_of_slot) const;
  /// Per stage, the same figures (seconds per micro-batch): compute + optimizer, pipeline
  /// traffic, all-reduce.
  struct StageCost {
    double base_s = 0, pipeline_s = 0, allreduce_s = 0;
    double total() const { return base_s + pipeline_s + allreduce_s; }
  };
  std::vector<StageCost> stage_costs(const std::vector<int>& device_of_slot) const;
  /// A bound no placement beats: each stage's compute and its largest flow at the widest link.
  double lower_bound() const;
  /// Slots on devices 0, 1, 2, ... in slot order (stage, then replica, then rank); with device
  /// groups, each slot on the next unused device of its stage's group.
  std::vector<int> rank_order() const;
  /// Writes the placement into the plan's stages' device_ids (replica-major, t per replica).
  void apply(const std::vector<int>& device_of_slot, Plan& plan) const;
  /// The placement a plan's device_ids give (Error(kInput) unless each stage names d × t).
  std::vector<int> read(const Plan& plan) const;
  /// Bytes per iteration on each channel (pipeline and all-reduce flows together).
  std::vector<double> channel_bytes(const std::vector<int>& device_of_slot) const;

 private:
  const Topology& topology_;
  int stages_ = 0;
  double n_ = 1;
  std::vector<Slot> slots_;
  std::vector<Flow> flows_;
  std::vector<double> base_;  ///< per stage: compute + optimizer per micro-batch
  std::vector<int> machine_of_device_;
  std::vector<int> group_of_device_;
  std::vector<int> group_of_stage_;
  std::vector<int> group_head_;  ///< per slot: the slot of its replica's rank 0
};

}  // namespace paraplan
