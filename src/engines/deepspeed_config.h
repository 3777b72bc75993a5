// A DeepSpeed configuration (ds_config.json, beside a Hugging Face model) read into a
// LaunchConfig: data parallelism with ZeRO, its batch, activation checkpointing and precision.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engines/launch_config.h"

namespace paraplan::engines {

/// Every key that changes time or memory is read (or refused, naming it: fp16, offload,
/// "auto" values the Hugging Face Trainer fills in); keys that do not (logging, the optimizer's
/// hyper-parameters, the scheduler) are ignored; an unknown top-level or zero_optimization key
/// is refused. The world size is train_batch_size ÷ (micro-batch × accumulation) when all three
/// are given. The sequence length and the model are not in the file (the caller's). Errors are
/// Error(kUsage) placed at "SOURCE: key".
LaunchConfig read_deepspeed_config(const std::string& text, const std::string& source);

/// The keys paraplan searches, as DeepSpeed spells them, with their JSON values.
std::vector<std::pair<std::string, std::string>> deepspeed_searched_options(
    const TrainingConfig& training);

}  // namespace paraplan::engines
