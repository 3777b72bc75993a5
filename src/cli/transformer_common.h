// Shared by `evaluate`, `frontier` and the transformer path of `plan`: the knob flags, the
// search settings they fix, and the JSON of a priced configuration.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cost/analytic.h"
#include "io/json_fields.h"
#include "search/llm.h"

namespace paraplan::cli {

/// The training knobs as `evaluate` and `plan` take them (0 / -1 / empty: not given).
struct TransformerKnobs {
  std::int64_t seq_len = 0, micro_batch = 0;
  int tp = 0, cp = 0, pp = 0, dp = 0, ep = 0, vpp = 0;
  std::string recompute;
  bool sequence_parallel = false;
  int zero = -1;
  bool overlap_on = false,
       overlap_off = false;        ///< --overlap-grad-reduce, --no-overlap-grad-reduce
  std::string attention;           ///< --attention flash|standard; empty: flash
  double moe_capacity_factor = 0;  ///< --moe-capacity-factor; 0: dropless
  std::string stage_layers;
  std::string calibration;
};

/// The search settings of `plan` and `frontier`: every knob given is fixed; Error(kUsage) for
/// --stage-layers (the split is searched; --uniform-stages keeps it even).
LlmSearchSettings search_settings(const TransformerKnobs& knobs, int devices, std::int64_t batch,
                                  bool uniform_stages);

/// Registers --seq-len, --micro-batch, --tp, --cp, --pp, --dp, --ep, --vpp, --recompute,
/// --sequence-parallel, --zero, --[no-]overlap-grad-reduce, --attention, --moe-capacity-factor,
/// --stage-layers and
/// --calibration.
/// `what` says whether a knob is a value (evaluate) or fixed against the search (plan).
void add_transformer_knob_flags(CLI::App* cmd, TransformerKnobs& knobs, bool for_plan);
/// The long names of the flags add_transformer_knob_flags registers.
const std::vector<std::string>& transformer_knob_flags();

/// none, selective, full or a number of layers N (full recomputation of N layers per stage).
struct RecomputeChoice {
  Recompute kind = Recompute::kFull;
  int layers = 0;
};
RecomputeChoice parse_recompute(const std::string& text);
/// none, selective, full, or the number of recomputed layers.
std::string recompute_text(const TrainingConfig& t);
/// "9,8,8,7" → {9, 8, 8, 7}; Error(kUsage) naming --stage-layers otherwise.
std::vector<int> parse_stage_layers(const std::string& text);

}  // namespace paraplan::cli
