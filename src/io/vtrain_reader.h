// The measured Megatron-DeepSpeed runs of data/vtrain (CSV with a UTF-8 byte-order mark).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/measured_run.h"

namespace paraplan::io {

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
