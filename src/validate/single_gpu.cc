// Prices data/h100-single-gpu's runs.
#include "validate/single_gpu.h"

#include <fmt/format.h>

#include "ir/training_rules.h"
#include "zoo/cluster_presets.h"

namespace paraplan::validate {
namespace {

const char* preset_of(const std::string& device) {
  if (device.find("H100") != std::string::npos) return "dgx-h100";
  if (device.find("H200") != std::string::npos) return "h200";
  if (device.find("A100") != std::string::npos && device.find("40GB") == std::string::npos)
    return "dgx-a100";
  return nullptr;
}

}  // namespace

TrainingConfig single_gpu_config(const io::SingleGpuRun& run) {
  TrainingConfig t;
  t.stack = Stack::kFsdp;
  t.seq_len = run.seq_len;
  t.global_batch = run.batch;
  t.micro_batch = run.micro_batch;
  t.recompute = run.recompute;
  t.zero_stage = 3;
  StackChoices fixed;
  fixed.fused_elementwise = run.compiled;
  apply_stack_defaults(t, fixed);
  return t;
}

std::vector<ScoredSingleGpu> score_single_gpu(const std::vector<io::SingleGpuRun>& runs) {
  std::vector<ScoredSingleGpu> out;
  for (const io::SingleGpuRun& r : runs) {
    const char* preset = preset_of(r.device);
    if (preset == nullptr)
      throw Error(ErrorKind::kInput, r.place + ": device",
                  fmt::format("\"{}\" is no GPU with a cluster preset (an H100, H200 or A100 80GB)",
                              r.device));
    const auto cluster = zoo::cluster_preset(preset, 1);
    const AnalyticCostModel cost(r.model, *cluster,
                                 default_calibration(cluster->device_types[0].name));
    ScoredSingleGpu s;
    s.run = r;
    s.config = single_gpu_config(r);
    try {
      s.predicted = cost.evaluate(s.config);
    } catch (const RuleViolation& e) {
      throw e.in_file(r.place);
    }
    s.device_memory_bytes = cluster->device_types[0].memory_bytes;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace paraplan::validate
