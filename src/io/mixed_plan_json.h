// A mixed transformer plan as a file (docs/formats.md, "Mixed transformer plan"): the
// architecture, the cluster of several device types, one calibration per type and the mixed
// configuration (segments of one device type each, in pipeline order), everything
// `paraplan simulate` needs to price and replay it.
#pragma once

#include <string>
#include <vector>

#include "io/json_fields.h"
#include "ir/calibration.h"
#include "ir/cluster.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::io {

/// The configuration as `config` of the plan JSON: device types by name.
Json mixed_config_to_json(const Cluster& cluster, const MixedConfig& config);
/// And back; fails naming the field (an unknown device type, a bad width, a split whose length
/// is not the stage count).
MixedConfig mixed_config_from_json(const JsonObject& object, const Cluster& cluster);

struct MixedPlanFile {
  TransformerConfig model;
  Cluster cluster;
  std::vector<Calibration> calibrations;  ///< per device type of the cluster, in its order
  int devices = 0;                        ///< the job's: the cluster's first `devices` devices
  MixedConfig config;
};

/// The keys `mixed_plan_from_json` needs besides the header (api::plan_file_json adds them).
void add_mixed_replay_keys(Json& plan, const TransformerConfig& model, const Cluster& cluster,
                           const std::vector<Calibration>& calibrations, int devices,
                           const MixedConfig& config);
/// The mixed plan's parts of a plan file: `"format": "paraplan-plan"` (or the earlier
/// "paraplan-mixed-transformer-plan"); Error(kInput) naming the field otherwise.
MixedPlanFile mixed_plan_from_json(const Json& doc, const std::string& path);

}  // namespace paraplan::io
