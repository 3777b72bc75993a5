// Measured NeMo / Megatron-Core training step times (data/nemo-h100: NVIDIA's DGX Cloud
// benchmarking recipes on H100): one tab-separated row per run, read into published runs that
// validate/ prices like the others (stack megatron with its overlaps, as every recipe runs).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/published_runs.h"

namespace paraplan::io {

/// A built-in transformer by name (the caller's catalogue: zoo/llm_models), or nullopt.
using BuiltinModels = std::function<std::optional<TransformerConfig>(const std::string&)>;

/// Error(kInput) naming the file, line and column for a malformed row, an unknown model or a
/// model whose shape disagrees with the row's columns; Error(kIo) if a file cannot be read.
/// The `model` column is a built-in transformer or a config.json beside the table.
std::vector<PublishedRun> read_nemo_table(const std::string& path, const BuiltinModels& builtin);
/// The same from the table's text; model files are looked up in `folder`.
std::vector<PublishedRun> parse_nemo_table(const std::string& text, const std::string& path,
                                           const std::string& folder, const BuiltinModels& builtin);

}  // namespace paraplan::io
