// One iteration of a pipeline planner's plan (Piper's cost model) as a simulator program: every
// data-parallel replica of every stage is a device (its t tensor-parallel devices act as one),
// micro-batch j runs on replica j mod d of each stage, each replica runs its micro-batches
// 1F1B with at most Piper's in-flight count y, pays its stage's edge traffic after each pass,
// the data-parallel all-reduce once at the end and then the optimizer step (where the model's
// options carry one). Forward is the stage's measured forward share
// when every layer's option has one (paraplan's profiler), else one third of Piper's
// per-micro-batch compute (its profiles give forward + backward together), backward the rest.
#pragma once

#include <string>
#include <vector>

#include "ir/model.h"
#include "ir/plan.h"
#include "ir/topology.h"
#include "sim/simulator.h"

namespace paraplan::sim {

/// What a replayed stage does per micro-batch.
struct ReplayStage {
  std::string name;
  int replicas = 1;  ///< micro-batch j runs on replica j mod replicas
  int inflight = 1;  ///< 1F1B: at most this many micro-batches in flight
  double forward_s = 0, backward_s = 0;
  double traffic_s = 0;        ///< after each pass, on the pipeline stream
  bool traffic_blocks = true;  ///< the next pass waits for it (else only the receiver does)
  double allreduce_s = 0;      ///< once, after the last pass
  double optimizer_s = 0;      ///< once, after the all-reduce (on the compute stream)
  double fixed_bytes = 0, activation_bytes = 0;  ///< held throughout; per micro-batch in flight
  // On a network (staged_program's topology): traffic as bytes on the routes between devices
  // instead of traffic_s and allreduce_s. A tensor-parallel group's traffic goes over its rank
  // 0's route, its bytes divided by t (each rank moves its share on its own route).
  std::vector<int> devices;  ///< per replica: its rank 0's device
  int tensor_parallel = 1;
  std::vector<std::pair<int, double>> sends;     ///< (later stage, activation bytes) per pass
  std::vector<std::pair<int, double>> receives;  ///< (earlier stage, bytes): gradients back
  double ring_bytes = 0;  ///< a rank's ring all-reduce send: 2(d − 1)/d × its gradient bytes
};
/// With a topology, transfers cross its links (channel c is link c) and share them.
Program staged_program(const std::vector<ReplayStage>& stages, int microbatches,
                       const Topology* topology = nullptr);

/// `plan` as evaluated by the Piper cost model (stage times filled), with N micro-batches. With
/// a topology and device ids on every stage (a placed plan): activations, gradients and the
/// ring all-reduce as transfers on the routes between the devices, sharing their links.
Program pipeline_program(const Model& model, const Plan& plan, int microbatches,
                         const Topology* topology = nullptr);
/// A DAPPLE plan (stage figures as its cost model fills them): one device group per stage,
/// each micro-batch split across the group's GPUs, forward a third of the stage's time per
/// micro-batch, the activation hop overlapped with compute (DAPPLE takes their maximum). The
/// all-reduce tail of DAPPLE's latency is not in its stage figures and not replayed.
Program dapple_program(const Plan& plan);
/// A mixed transformer plan (search/llm_mixed's mixed_plan): one lane per stage whose tp × dp
/// devices work in lockstep on their share of each micro-batch (forward a third of the stage's
/// time per micro-batch, backward two thirds, its sends inside that time), 1F1B with p − i
/// micro-batches in flight, then each stage's exposed gradient synchronisation and optimizer step.
/// Memory: the stage's peak, its activations held per micro-batch in flight.
Program mixed_program(const Plan& plan, const std::vector<std::string>& stage_names);

struct PipelineSimulation {
  Result result;
  double makespan_s = 0;
  /// N × the plan's objective (Piper's throughput, no fill or drain); on a network, N × the
  /// placement's cost (its slowest stage on the links)
  double bound_s = 0;
  double difference = 0;  ///< makespan / bound − 1 (≥ 0: the bound has no bubble)
};
PipelineSimulation simulate_pipeline_plan(const Model& model, const Plan& plan, int microbatches,
                                          const Topology* topology = nullptr);

}  // namespace paraplan::sim
