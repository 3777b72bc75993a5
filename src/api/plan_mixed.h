// The transformer plan job on a cluster of several device types: the mixed pipelines
// (search/llm_mixed), the best plan on each type's devices alone, and the plan the homogeneous
// planner makes when it treats every device as one type, priced on the real devices. The answer
// is the fastest of the mixed and the single-type plans.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/knobs.h"
#include "cost/analytic_mixed.h"
#include "search/llm.h"
#include "search/llm_mixed.h"

namespace paraplan::api {

struct MixedTransformerPlanRequest {
  TransformerConfig model;
  Cluster cluster;
  std::string cluster_name;
  int devices = 0;                        ///< the first `devices` devices of the cluster
  std::vector<Calibration> calibrations;  ///< per device type of the cluster
  MixedSearchSettings settings;
  /// The type a type-blind planner takes every device for (empty: the type of least peak FLOP/s).
  std::string blind_device_type;
};

struct SingleTypePlan {
  std::string device_type;
  int devices = 0;
  std::optional<LlmCandidate> best;  ///< none when nothing fits on them
};

struct TypeBlindPlan {
  std::string device_type;           ///< what every device was taken for
  std::optional<LlmCandidate> plan;  ///< the homogeneous planner's best under that assumption
  double iteration_time_s = 0;       ///< that plan on the real devices
  bool fits = false;                 ///< ... and whether it fits there
  /// How it was priced: "stages" (each stage on one type: a mixed pipeline) or "slowest type"
  /// (stages span types or there is no pipeline: every device waits for the slowest type).
  std::string priced_as;
};

struct MixedTransformerPlanResult {
  MixedSearchResult search;
  std::vector<SingleTypePlan> alone;  ///< per device type of the job, in type order
  TypeBlindPlan blind;
  /// The answer: the best mixed pipeline, unless a type alone is faster (then its index in
  /// `alone`).
  std::optional<std::size_t> best_alone;
  double best_iteration_time_s = 0;
};

/// The request from a front end's inputs: calibrations per type (api::load_calibrations),
/// seq_len and attention from the knobs, which must fix nothing else (FieldError naming the knob:
/// the mixed planner searches them all; MoE models are refused the same way).
MixedTransformerPlanRequest mixed_transformer_request(TransformerConfig model, Cluster cluster,
                                                      std::string cluster_name, int devices,
                                                      const TransformerKnobs& knobs,
                                                      std::int64_t batch, int top,
                                                      std::string blind_device_type);

/// Error(kInfeasible) when no plan fits; Error(kUsage) for a cluster of one device type.
MixedTransformerPlanResult plan_mixed_transformer(const MixedTransformerPlanRequest& request);

}  // namespace paraplan::api
