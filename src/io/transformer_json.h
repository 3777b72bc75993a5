// A transformer plan as a file (docs/formats.md, "Transformer plan"): the architecture, the
// cluster, the calibration and the training configuration, everything `paraplan simulate`
// needs to replay it, in paraplan's own field names.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "io/json_fields.h"
#include "ir/calibration.h"
#include "ir/cluster.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::io {

Json transformer_to_json(const TransformerConfig& model);
TransformerConfig transformer_from_json(const JsonObject& object);

/// none, selective, full, or the number of recomputed layers.
std::string recompute_text(const TrainingConfig& config);
/// And back: the kind and the number of recomputed layers (0: all), nullopt for anything else.
struct RecomputeText {
  Recompute kind = Recompute::kFull;
  int layers = 0;
};
std::optional<RecomputeText> recompute_from_text(std::string_view text);
/// "flash" or "standard", and back (nullopt for anything else).
std::string attention_text(Attention attention);
std::optional<Attention> attention_from_text(std::string_view text);
/// The knobs as in `config` of the plan JSON (recompute: none, selective, full or N).
Json training_to_json(const TrainingConfig& config);
TrainingConfig training_from_json(const JsonObject& object);

struct TransformerPlanFile {
  TransformerConfig model;
  Cluster cluster;
  Calibration calibration;
  TrainingConfig config;
  int devices = 0;
};

/// The transformer plan's parts of a plan file (api/plan_file.h reads the file by its kind):
/// `"format": "paraplan-plan"` (or the earlier "paraplan-transformer-plan"); Error(kInput)
/// naming the field otherwise.
/// `path` names the document in messages.
TransformerPlanFile transformer_plan_from_json(const Json& doc, const std::string& path);
/// The keys `transformer_plan_from_json` needs besides the header (api::plan_file_json adds them).
void add_replay_keys(Json& plan, const TransformerConfig& model, const Cluster& cluster,
                     const Calibration& calibration);

}  // namespace paraplan::io
