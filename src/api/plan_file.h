// The plan file: one reader and one writer for every kind of plan. A plan file is the answer
// document of the job that made it (`plan -o FILE`: what `--json` prints) with what it takes to
// price and replay the plan again, under one header: `"format": "paraplan-plan"`, a version, and
// the planner and cost model, which together name the plan's kind (docs/formats.md, "Plans").
// The reader checks every field against its kind, so a user's file is refused with its place
// and never reaches a checked cast of the wrong kind.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cost/piper_cost.h"
#include "io/json_fields.h"
#include "ir/calibration.h"
#include "ir/cluster.h"
#include "ir/model.h"
#include "ir/plan.h"
#include "ir/transformer.h"

namespace paraplan::api {

/// What each kind of plan needs besides the Plan to be priced and replayed again; the
/// alternatives follow PlanKind's order (PlanFile::replay's index is the plan's kind).
struct PipelineReplay {  ///< kPipeline: the model, Piper's settings, the cluster it was placed on
  Model model;
  PiperSettings settings;
  std::optional<Cluster> cluster;  ///< placed plans replay on its links
};
struct DappleReplay {};  ///< kDapple: the plan's stage figures are all the replay needs
struct IntraOpReplay {   ///< kIntraOp: the devices' speed and the layers' names and cuts
  double flops_per_s = 0;
  int devices = 1;
  std::vector<std::string> layer_names;  ///< per layer split, in order
  std::vector<std::string> layer_types;
  std::vector<std::string> layer_cuts;  ///< "b/4 n/2", or "unsplit"
};
struct TransformerReplay {  ///< kTransformer: the plan's knobs are its TrainingPlan::config
  TransformerConfig model;
  Cluster cluster;
  Calibration calibration;
};
struct MixedReplay {  ///< kMixedTransformer: the knobs are its MixedTrainingPlan::config
  TransformerConfig model;
  Cluster cluster;
  std::vector<Calibration> calibrations;  ///< per device type of the cluster, in its order
  int devices = 0;                        ///< the job's: the cluster's first `devices` devices
};
using Replay =
    std::variant<PipelineReplay, DappleReplay, IntraOpReplay, TransformerReplay, MixedReplay>;

struct PlanFile {
  std::string model;  ///< the model's name
  Plan plan;          ///< plan.kind() is the replay's kind
  Replay replay;
};

/// Reads any plan file `plan -o` writes, by the kind its planner and cost model name (files of
/// the earlier per-kind formats "paraplan-transformer-plan" and
/// "paraplan-mixed-transformer-plan" too). Error(kInput) placed in the file for anything it
/// cannot read: a field of another kind, an unknown schedule, a plan its model lacks.
PlanFile read_plan_file(const io::Json& doc, const std::string& path);
PlanFile read_plan_file(const std::string& path);

/// The plan file: `answer` (the job's document) with the header and what the replay needs,
/// by the plan's kind. Error(kInternal) when the replay is of another kind than the plan.
io::Json plan_file_json(const PlanFile& file, io::Json answer);

}  // namespace paraplan::api
