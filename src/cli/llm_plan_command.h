// The transformer path of `paraplan plan`: search the training knobs with the analytic model.
#pragma once

#include <cstdint>
#include <string>

namespace paraplan::cli {

struct LlmPlanArgs {
  std::string model;
  std::string cluster;  ///< preset name; empty: dgx-a100
  int devices = 0;
  std::int64_t batch = 0;
  std::int64_t seq_len = 0;
  std::int64_t micro_batch = 0;
  int tp = 0, pp = 0, dp = 0;
  std::string recompute;
  bool sequence_parallel = false;
  int zero = -1;
  int top = 5;
  double time_limit_s = 0;
  bool json = false;
  std::string output;
  std::string export_to;  ///< megatron | deepspeed: print the best plan for that engine
};

/// True if `model` names a transformer (built-in or config.json) rather than an operator graph.
bool is_transformer_model(const std::string& model);
int run_llm_plan(const LlmPlanArgs& args);

}  // namespace paraplan::cli
