// The measured Megatron-DeepSpeed runs of data/vtrain (CSV with a UTF-8 byte-order mark).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace paraplan::io {

struct MeasuredRun {
  int line = 0;  ///< 1-based line in the file
  double parameters_billion = 0;  ///< 0 in the single-node file (no such column)
  int gpus = 0;
  std::int64_t global_batch = 0, micro_batch = 0;
  std::int64_t hidden = 0, heads = 0, layers = 0, seq_len = 0;
  int tp = 0, dp = 0, pp = 0;
  double iteration_time_s = 0;
};

/// Error(kInput) naming the file and line for a malformed row, Error(kIo) if unreadable.
std::vector<MeasuredRun> read_vtrain_csv(const std::string& path);
/// The same from the file's text; `path` names it in messages.
std::vector<MeasuredRun> parse_vtrain_csv(std::string text, const std::string& path);

/// A folder's two files: ground_truth_multi.csv and ground_truth_single.csv.
struct MeasuredRuns {
  std::vector<MeasuredRun> multi, single;
};
MeasuredRuns read_vtrain_folder(const std::string& folder);

}  // namespace paraplan::io
