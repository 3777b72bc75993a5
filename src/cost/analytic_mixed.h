// The analytic model of a transformer pipeline over devices of several types (Metis, AMP): the
// pipeline is cut into segments, each on the devices of one type with its own tensor- and
// data-parallel widths and its own stage count; the layers are split unevenly over all stages.
// A pipeline micro-batch of `samples_per_microbatch` sequences is split over each stage's
// data-parallel replicas, so a stage of width d works on samples / d sequences per micro-batch.
// Each segment's stages are priced by the homogeneous AnalyticCostModel of its device type (its
// calibration, its memory, its NVLink; the cluster's network between machines) on a virtual
// cluster holding the whole pipeline at that segment's widths; the iteration is then the 1F1B
// pipeline paced by the slowest stage, the slowest stage's data-parallel synchronisation and the
// slowest optimizer step.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/analytic.h"

namespace paraplan {

struct MixedStage {
  int segment = 0, device_type = 0, tp = 1, dp = 1;
  int first_layer = 0, layers = 0;
  double time_per_microbatch_s = 0;  ///< one device of it: its share of a micro-batch, fwd + bwd
  double sync_s = 0;                 ///< its exposed data-parallel synchronisation
  double optimizer_s = 0;
  MemoryBreakdown memory;
  double memory_limit_bytes = 0;  ///< its device type's
  std::vector<int> device_ids;    ///< replica-major, tensor-parallel rank fastest
};

struct MixedResult {
  double iteration_time_s = 0;
  double pipeline_s = 0, bubble_s = 0, dp_allreduce_s = 0, optimizer_s = 0;
  double tokens_per_s = 0;
  double tflops_per_device = 0;  ///< model FLOPs per device per second / 1e12
  double mfu = 0;                ///< of the devices' summed peak FLOP/s
  std::vector<MixedStage> stages;
  std::vector<int> stage_layers;
  bool fits = true;
};

class MixedAnalyticModel {
 public:
  /// `calibrations[k]` calibrates cluster.device_types[k]. The job runs on the first `devices`
  /// devices of the cluster (by id).
  MixedAnalyticModel(TransformerConfig model, Cluster cluster,
                     std::vector<Calibration> calibrations, int devices);

  const TransformerConfig& model() const { return model_; }
  const Cluster& cluster() const { return cluster_; }
  /// The job's device ids of each device type, ascending.
  const std::vector<std::vector<int>>& devices_of_type() const { return devices_of_type_; }

  /// The homogeneous model and configuration that price segment `s`'s stages (a virtual cluster of
  /// the segment's device type holding all stages at the segment's widths, in one machine when
  /// the segment's devices are: its sends then stay on the machine's links).
  AnalyticCostModel segment_model(const MixedConfig& config, int s) const;
  TrainingConfig segment_config(const MixedConfig& config, int s) const;
  /// What a stage of segment `s` next to another segment adds per micro-batch: one of its two
  /// sends per chunk crosses to the other segment's machines (the cluster's outermost tier).
  double boundary_send_extra_s(const MixedConfig& config, int s) const;
  /// The devices of each segment: each type's devices in id order, segment by segment, stage by
  /// stage (replica-major, tensor-parallel rank fastest).
  std::vector<std::vector<int>> segment_devices(const MixedConfig& config) const;
  /// RuleViolation or Error(kUsage) when a segment breaks a rule, segments of one type need more
  /// devices than the job has of it, or the split does not match the stages.
  void check(const MixedConfig& config) const;
  MixedResult evaluate(const MixedConfig& config) const;

  /// A cluster of `devices` devices of type `device_type` in machines of that type's size, with
  /// its machines' inner links and the cluster's network between machines.
  Cluster type_cluster(int device_type, int devices, bool one_machine = false) const;

 private:
  TransformerConfig model_;
  Cluster cluster_;
  std::vector<Calibration> cal_;
  std::vector<std::vector<int>> devices_of_type_;
  std::vector<LinkTier> tier0_of_type_;  ///< the narrowest route inside one of its machines
  std::vector<LinkTier> tier1_of_type_;  ///< ... between two of its machines
  std::vector<int> machine_size_of_type_;
  std::vector<int> machine_of_device_;
};

}  // namespace paraplan
