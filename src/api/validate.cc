// The validate and calibrate jobs: read the measured runs, price or fit.
#include "api/validate.h"

#include "cost/analytic.h"
#include "io/calibration_file.h"
#include "io/nemo_reader.h"
#include "io/published_runs.h"
#include "io/single_gpu_runs.h"
#include "io/vtrain_reader.h"
#include "zoo/llm_models.h"

namespace paraplan::api {
namespace {

Calibration start_from(const std::string& file) {
  return file.empty() ? default_calibration("A100") : io::read_calibration_file(file);
}

}  // namespace

ValidateResult validate_model(const ValidateRequest& request) {
  const Calibration calibration = start_from(request.calibration);
  const io::MeasuredRuns runs = io::read_vtrain_folder(request.vtrain_dir);
  ValidateResult out;
  if (!request.mpt_file.empty()) out.mpt_table = io::read_mpt_table(request.mpt_file);
  out.multi = validate::score_runs(runs.multi, calibration);
  out.single = validate::score_runs(runs.single, calibration);
  out.mpt = validate::score_runs(out.mpt_table.runs, calibration);
  for (const std::string& file : request.published_files) {
    if (file.empty()) continue;
    auto scored = validate::score_published(io::read_published_runs(file));
    out.published.insert(out.published.end(), scored.begin(), scored.end());
  }
  if (!request.nemo_file.empty())
    out.nemo = validate::score_published(io::read_nemo_table(request.nemo_file, zoo::llm_model));
  for (const std::string& dir : request.single_gpu_dirs) {
    if (dir.empty()) continue;
    std::string name = dir;
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    name = name.substr(name.find_last_of('/') + 1);
    out.single_gpu.push_back({name, validate::score_single_gpu(io::read_single_gpu_runs(dir))});
  }
  return out;
}

CalibrateResult calibrate(const CalibrateRequest& request) {
  const Calibration start = start_from(request.from);
  const io::MeasuredRuns runs = io::read_vtrain_folder(request.vtrain_dir);
  validate::FitData data{runs.multi, runs.single, {}};
  if (!request.mpt_file.empty()) {
    io::MptTable table = io::read_mpt_table(request.mpt_file);
    for (auto& r : table.runs)
      if (r.device == start.device) data.mpt.push_back(std::move(r));
  }
  CalibrateResult out;
  out.multi_runs = data.multi.size();
  out.single_runs = data.single.size();
  out.mpt_runs = data.mpt.size();
  out.fit =
      validate::fit_calibration(data, start, {request.iterations, request.seed, request.progress});
  return out;
}

}  // namespace paraplan::api
