// The job the user already runs, read from its launch configuration (engines::LaunchConfig), priced
// as it is, and the best plan paraplan finds on the same devices and batch, with the change as a
// diff of the user's own arguments.
#pragma once

#include <string>
#include <vector>

#include "api/jobs.h"
#include "engines/launch_config.h"

namespace paraplan::api {

struct LaunchOptions {
  std::string format;  ///< megatron | nemo
  std::string file;    ///< the launch configuration ("-": `text` holds standard input)
  std::string text;    ///< the file's content when the front end read it already
  std::string model;   ///< when the launch does not give the model's shape
  std::string cluster = std::string(kDefaultCluster);
  int devices = 0;         ///< when the launch does not say its world size
  TransformerKnobs knobs;  ///< memory, memory_headroom and calibration only
  bool explain = false, words = false;
  std::vector<std::string> given;  ///< the fields the user set, by name
  std::string export_to;           ///< the best plan for megatron or deepspeed (plan --from)
  /// A DeepSpeed configuration's global batch where it leaves it out or to "auto" (0: none);
  /// its micro-batch is knobs.micro_batch.
  std::int64_t batch = 0;
};

/// Reads the launch (FieldError("from") for an unknown format; the reader's Error(kUsage) at
/// FILE:LINE for a bad one; FieldError("devices") when the world size is unknown or disagrees),
/// prices it, searches the best plan Megatron-LM runs with the launch's sequence length, global
/// batch, precision and devices fixed, and gives both, the speed-up and the diff.
JobOutcome launch_job(const LaunchOptions& options);

/// The diff between a launch's options and a plan's in the launch's own spelling: Megatron-LM's
/// ("- --flag old" then "+ --flag new") or a NeMo recipe's ("- model.key: old", "+ model.key:
/// new"), for each searched option that changes, in a fixed order; empty when equal.
std::vector<std::string> launch_diff(const std::string& format, const TransformerConfig& model,
                                     const TrainingConfig& from, const TrainingConfig& to);

}  // namespace paraplan::api
