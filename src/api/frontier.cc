// The frontier job: device budgets, cost models per budget and memory limit, the searches.
#include "api/frontier.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <memory>
#include <vector>

#include "cost/analytic.h"
#include "ir/error.h"
#include "ir/units.h"

namespace paraplan::api {

PipelineFrontierPlan pipeline_frontier(const PipelineFrontierRequest& request,
                                       const std::string& source) {
  const PiperSettings& settings = request.settings;
  if (!settings.device_groups.empty())
    throw FieldError("cluster",
                     ": the pipeline frontier sweeps one device type's memory and "
                     "count; a cluster of several device types (or --model-device) is "
                     "planned with `paraplan plan`");
  std::vector<int> budgets;  // 1, 2, 4, ... and the most devices
  for (int k = 1; k < settings.max_devices; k *= 2) budgets.push_back(k);
  budgets.push_back(settings.max_devices);
  const Model& model = request.model;
  auto factory = [&](int devices, double memory) -> std::unique_ptr<PipelineCostModel> {
    PiperSettings s = settings;
    s.max_devices = devices;
    s.memory_per_device_bytes = memory;
    return std::make_unique<PiperCostModel>(model, s);
  };
  const auto start = std::chrono::steady_clock::now();
  PipelineFrontierPlan out;
  out.frontier = paraplan::pipeline_frontier(model, factory, budgets,
                                             settings.memory_per_device_bytes, request.options);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (out.frontier.points.empty())
    throw Error(ErrorKind::kInfeasible, source,
                fmt::format("no plan fits in {} per device on up to {} devices",
                            format_bytes(settings.memory_per_device_bytes), settings.max_devices));
  return out;
}

IntraOpFrontierPlan intra_op_frontier(const IntraOpFrontierRequest& request,
                                      const std::string& source) {
  const auto start = std::chrono::steady_clock::now();
  const PaseCostModel cost(request.model, request.settings);
  IntraOpFrontierPlan out;
  IntraOpFrontierResult found =
      paraplan::intra_op_frontier(cost.network(), cost.resources(), request.options);
  out.frontier = found;
  out.frontier.points.clear();
  for (auto& point : found.points) {
    MemoryBreakdown memory;
    for (int v = 0; v < request.model.size(); ++v) {
      const MemoryBreakdown m = cost.layer_memory(v, cost.configs(v)[point.choice[v]]);
      memory.weights_bytes += m.weights_bytes;
      memory.gradients_bytes += m.gradients_bytes;
      memory.optimizer_bytes += m.optimizer_bytes;
      memory.activations_bytes += m.activations_bytes;
      memory.peak_bytes += m.peak_bytes;
    }
    if (request.memory_limit_bytes > 0 && memory.peak_bytes > request.memory_limit_bytes) continue;
    out.plans.push_back(cost.to_plan(point.choice));
    out.memory.push_back(memory);
    out.frontier.points.push_back(std::move(point));
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (out.frontier.points.empty())
    throw Error(ErrorKind::kInfeasible, source,
                fmt::format("no sharding on up to {} devices fits in {} per device",
                            request.settings.devices, format_bytes(request.memory_limit_bytes)));
  return out;
}

std::vector<render::PlotSeries> intra_op_frontier_series(const IntraOpFrontierPlan& f) {
  std::map<int, render::PlotSeries> by_devices;
  for (std::size_t i = 0; i < f.plans.size(); ++i) {
    auto& series = by_devices[f.frontier.points[i].devices];
    series.name = fmt::format("{} devices", f.frontier.points[i].devices);
    series.points.emplace_back(f.memory[i].peak_bytes / 1073741824.0,
                               f.plans[i].as<IntraOpDetail>().step_time_s);
  }
  std::vector<render::PlotSeries> series;
  for (auto it = by_devices.rbegin(); it != by_devices.rend(); ++it) series.push_back(it->second);
  return series;
}

LlmFrontierResult transformer_frontier(const TransformerFrontierRequest& request) {
  const AnalyticCostModel cost(request.model, request.cluster, request.calibration);
  LlmFrontierResult f = llm_frontier(cost, request.settings);
  if (f.points.empty())
    throw Error(ErrorKind::kInfeasible, "",
                fmt::format("no configuration of {} on up to {} × {} fits in {} per device",
                            request.model.name, request.settings.devices,
                            request.cluster.device_types[0].name,
                            format_bytes(request.cluster.device_types[0].memory_bytes)));
  return f;
}

std::optional<PipelineFrontierResult> report_frontier(const Model& model,
                                                      const PiperSettings& settings,
                                                      ProgressSink* progress) {
  if (!settings.device_groups.empty()) return std::nullopt;
  auto factory = [&](int devices, double memory) -> std::unique_ptr<PipelineCostModel> {
    PiperSettings st = settings;
    st.max_devices = devices;
    st.memory_per_device_bytes = memory;
    return std::make_unique<PiperCostModel>(model, st);
  };
  PipelineFrontierOptions options;
  options.memory_step = 0.05;
  options.time_limit_s = 20;
  options.progress = progress;
  return pipeline_frontier(model, factory, {settings.max_devices}, settings.memory_per_device_bytes,
                           options);
}

LlmFrontierResult report_frontier(const AnalyticCostModel& cost, LlmSearchSettings settings) {
  settings.top_k = 1;
  settings.time_limit_s = 0;
  return llm_frontier(cost, settings);
}

}  // namespace paraplan::api
