// The validate job (the analytic model against measured and published runs) and the calibrate
// job (fit its calibration to measured runs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/mpt_reader.h"
#include "ir/calibration.h"
#include "ir/progress.h"
#include "validate/calibrate.h"
#include "validate/published.h"
#include "validate/single_gpu.h"
#include "validate/vtrain.h"

namespace paraplan::api {

struct ValidateRequest {
  std::string vtrain_dir;  ///< ground_truth_multi.csv and ground_truth_single.csv
  std::string mpt_file;    ///< empty: skip the MPT table
  /// Published-runs files, read in order (empty names are skipped).
  std::vector<std::string> published_files;
  std::string nemo_file;    ///< empty: skip the NeMo H100 table
  std::string calibration;  ///< empty: the shipped A100 calibration
  /// Folders of plain-PyTorch single-GPU runs, each a set scored on its own and all pooled
  /// (empty names are skipped).
  std::vector<std::string> single_gpu_dirs;
};

/// One folder of single-GPU runs, scored (its name: the folder's last component).
struct SingleGpuSet {
  std::string name;
  std::vector<validate::ScoredSingleGpu> rows;
};

struct ValidateResult {
  std::vector<validate::ScoredRun> multi, single, mpt;
  io::MptTable mpt_table;  ///< the rows read and those skipped (with why)
  std::vector<validate::ScoredPublished> published;
  std::vector<validate::ScoredPublished> nemo;  ///< NeMo / Megatron-Core on H100
  std::vector<SingleGpuSet> single_gpu;         ///< plain PyTorch on one GPU, set by set
};

/// Every input is read and priced before anything is returned: a bad file is the only answer.
ValidateResult validate_model(const ValidateRequest& request);

/// The answer in words: every row (unless `summary`), each set's error, the rankings, the memory
/// verdicts and the `worst` MPT rows.
std::string validate_words(const ValidateResult& result, bool summary, int worst);

struct CalibrateRequest {
  std::string vtrain_dir;
  std::string mpt_file;  ///< empty: fit the vTrain runs only (else the calibration's device rows)
  std::string from;      ///< empty: start from the shipped A100 calibration
  int iterations = 3000;
  std::uint64_t seed = 1;
  ProgressSink* progress = nullptr;
};

struct CalibrateResult {
  validate::FitResult fit;
  std::size_t multi_runs = 0, single_runs = 0, mpt_runs = 0;
};

CalibrateResult calibrate(const CalibrateRequest& request);

}  // namespace paraplan::api
