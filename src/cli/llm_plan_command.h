// The transformer path of `paraplan plan`: search the training knobs with the analytic model.
#pragma once

#include <cstdint>
#include <string>

#include "cli/transformer_common.h"

namespace paraplan::cli {

struct LlmPlanArgs {
  std::string model;
  std::string cluster;  ///< preset name or cluster file; empty: dgx-a100
  int devices = 0;
  std::int64_t batch = 0;
  TransformerKnobs knobs;
  bool uniform_stages = false;  ///< do not search non-uniform layer splits
  int top = 5;
  int resimulate = 0;  ///< re-score (and re-rank) the first K plans with the simulator
  double time_limit_s = 0;
  bool json = false;
  std::string output;
  std::string export_to;  ///< megatron | deepspeed: print the best plan for that engine
  std::string report;     ///< write the HTML report of the best plan here
  std::string trace;      ///< write the Chrome trace of the best plan's simulated iteration here
  ProgressSink* progress = nullptr;
  bool showcase = false;
  /// A cluster of several device types: the type the type-blind comparison assumes.
  std::string model_device;  ///< the built-in example: end with how to plan one's own model
};

int run_llm_plan(const LlmPlanArgs& args);

}  // namespace paraplan::cli
