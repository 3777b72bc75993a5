// A torchtitan job (its TOML job config, the format of torchtitan before its February 2026
// move to Python configs) read into a LaunchConfig, and a plan written as one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engines/launch_config.h"

namespace paraplan::engines {

/// Every key that changes time or memory is read or refused by name (CPU offload, MX
/// formats, other pipeline schedules, memory-budget checkpointing); keys that do not (logging,
/// checkpoints, the learning rate) are ignored; an unknown key of a section that matters is
/// refused. The model is named (model_name) when the file's is built in (llama3 8B, 70B, 405B).
/// Degrees, batch and stage split are resolved by complete_torchtitan. Errors are Error(kUsage)
/// at "SOURCE: section.key" (or SOURCE:LINE for TOML syntax).
LaunchConfig read_torchtitan_config(const std::string& text, const std::string& source);

/// The configuration the job runs, once the model's layers and the world size are known:
/// FSDP (ZeRO 3; 2 without resharding after the forward), HSDP (ZeRO 3 sharded over
/// data_parallel_shard_degree × cp, replicated data_parallel_replicate_degree times) or DDP, the
/// batch, torchtitan's own stage split (embedding and output weighted as layers) or the model
/// parts given, selective checkpointing of every N-th layer. Error(kUsage) at the source for
/// degrees that do not multiply to the world size, HSDP without resharding, or an interleaved
/// split paraplan does not price.
TrainingConfig complete_torchtitan(const LaunchConfig& launch, std::int64_t layers, int world);

/// torchtitan's (data_parallel_replicate_degree, data_parallel_shard_degree) of a plan.
std::pair<int, int> torchtitan_degrees(const TrainingConfig& training);

/// torchtitan's split of `layers` over `stages` (generate_llm_fqn_per_model_part): the
/// embedding and the output count as `first_less` and `last_less` layers, the first stages
/// take the remainder.
std::vector<int> torchtitan_split(std::int64_t layers, int stages, int first_less, int last_less);

/// The model parts of a pipeline by torchtitan's module names, one line each, `indent` before
/// and ",\n" after: ["tok_embeddings", "layers.0", ...], ..., [..., "norm", "OUTPUT"] (238fa99
/// names the LM head "output", b5bcd76 "lm_head").
std::string torchtitan_parts_lines(const std::vector<int>& stages, const std::string& output,
                                   const std::string& indent);

/// The plan as a torchtitan job TOML that read_torchtitan_config reads back as the same
/// configuration. FieldError("export") for a plan torchtitan does not run (another stack than
/// fsdp, ZeRO 1, a partial recomputation no AC frequency gives).
std::string torchtitan_config(const TransformerConfig& model, const TrainingConfig& config);

/// The keys paraplan searches, as torchtitan spells them, with their TOML values.
std::vector<std::pair<std::string, std::string>> torchtitan_searched_options(
    const TrainingConfig& training);

}  // namespace paraplan::engines
