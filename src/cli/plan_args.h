// The flags of `paraplan plan`, shared by its planner paths (pipeline, intra-op, transformer).
#pragma once

#include <string>
#include <vector>

#include "cli/transformer_common.h"
#include "ir/progress.h"

namespace paraplan::cli {

struct PlanArgs {
  std::string input;
  std::string format = "auto";
  std::string cost_model = "auto";
  std::string cluster_file;
  int devices = 0;
  std::string memory;
  std::string bandwidth;
  int microbatches = 0;
  std::string machines;
  std::string placement = "search";  ///< the pipeline planner on a cluster: search or rank-order
  int coarsen = 0;           ///< the pipeline planner: coarsen to this many super-nodes (0: exact)
  std::string model_device;  ///< the pipeline planner: the device the model's times are for
  int batch = 0;
  int microbatch_size = 0;
  int profile_batch = 0;
  bool json = false;
  std::string output;
  // The intra-op planner.
  std::string planner = "auto";
  std::string model;
  std::string flops;
  int min_block = 0;
  bool keep_all_flows = false;
  bool powers_of_two = false;
  bool all_devices = false;
  std::string dot;
  // The transformer planner.
  TransformerKnobs knobs;
  bool uniform_stages = false;
  int top = 5;
  int resimulate = 0;
  std::string report;  ///< every planner: the HTML report of the best plan
  std::string trace;   ///< every planner: a Chrome trace of its simulated iteration
  double time_limit_s = 0;
  bool quiet = false;
  ProgressSink* progress = nullptr;  ///< set by run(): the terminal, unless --quiet
  std::string export_to;
  std::vector<std::string> given;  ///< the flags on the command line (set by the callback)
};

// What each planner takes (every other flag is refused, naming it).
inline const std::vector<std::string> kOutputFlags = {"--json", "--output", "--quiet", "--report",
                                                      "--trace"};
inline const std::vector<std::string> kPiperFlags = {
    "INPUT",       "--format",  "--cost-model",  "--planner",      "--cluster",
    "--devices",   "--memory",  "--bandwidth",   "--microbatches", "--profile-batch",
    "--placement", "--coarsen", "--model-device"};
inline const std::vector<std::string> kDappleFlags = {
    "INPUT",      "--format", "--cost-model",      "--planner",
    "--machines", "--batch",  "--microbatch-size", "--profile-batch"};
inline const std::vector<std::string> kIntraOpFlags = {
    "INPUT",         "--format",    "--cost-model",     "--planner",
    "--model",       "--devices",   "--batch",          "--flops",
    "--bandwidth",   "--min-block", "--keep-all-flows", "--powers-of-two",
    "--all-devices", "--dot"};
inline const std::vector<std::string> kLlmFlags = {
    "--model",      "--planner", "--cluster",    "--devices", "--batch",        "--uniform-stages",
    "--resimulate", "--top",     "--time-limit", "--export",  "--model-device", "--memory"};

/// The pipeline planner (Piper's or DAPPLE's cost model, following the input unless given).
int run_pipeline_path(const PlanArgs& args);

}  // namespace paraplan::cli
