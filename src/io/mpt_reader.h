// Published MPT training throughput (MosaicML llm-foundry's benchmark tables: FSDP, FlashAttention,
// bf16): the tab-separated file of data/mpt, or the tables as llm-foundry's README prints them
// (Markdown pipe tables under "## <hardware>" headings). Columns are found by name in either
// spelling ("seq_len" or "SeqLen (T)", ...); the model's shape comes from the d_model, n_heads,
// n_layers and vocab columns when present, else from the MPT size name (125m ... 70b).
#pragma once

#include <string>
#include <vector>

#include "io/json_fields.h"
#include "io/measured_run.h"

namespace paraplan::io {

struct MptTable {
  std::vector<MeasuredRun> runs;  ///< set "mpt", one per priced row
  /// Rows read but not priceable by the analytic model, each "file:line: reason" (CPU offload,
  /// hybrid sharding, fp32 parameters).
  std::vector<std::string> skipped;
};

/// The config.json (MPT's own keys, model_type "mpt") of the model a row benchmarks, as
/// llm-foundry's benchmark YAMLs build it: learned positions of the run's sequence length, no
/// biases, no dropout, an MLP 4 × wide, no ALiBi. validate prices the row with this model, so a
/// user's `evaluate --stack fsdp --model` of the same file gives the same figures.
Json mpt_config_json(const MeasuredRun& run);

/// Error(kInput) naming the file, line and column for a malformed row or an unknown value,
/// Error(kIo) if the file cannot be read.
MptTable read_mpt_table(const std::string& path);
/// The same from the file's text; `path` names it in messages.
MptTable parse_mpt_table(const std::string& text, const std::string& path);

}  // namespace paraplan::io
