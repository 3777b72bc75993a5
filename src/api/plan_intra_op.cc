// The plan job of the intra-operator planner under PaSE's cost model: the elimination, the
// memory per device, and the products (simulation, report with its frontier) of the plan.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "api/frontier.h"
#include "api/plan.h"
#include "ir/error.h"
#include "ir/units.h"
#include "render/graph_svg.h"
#include "report/plan_report.h"
#include "sim/intra_op_program.h"

namespace paraplan::api {

namespace {

// The report's frontier: the plan's settings, memory step 0.01; none beyond the frontier's limits.
std::vector<render::PlotSeries> report_intra_op_frontier(const IntraOpPlanRequest& request) {
  IntraOpFrontierRequest r{request.model, request.batch, request.settings, 0, {}};
  r.options.memory_step = 0.01;
  r.options.time_limit_s = 20;
  try {
    return intra_op_frontier_series(intra_op_frontier(r, request.model.name));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kLimit) throw;
  }
  return {};
}

}  // namespace

IntraOpPlanResult plan_intra_op(const IntraOpPlanRequest& request) {
  const PaseSettings& s = request.settings;
  PaseCostModel cost(request.model, s);
  IntraOpOptions solve;
  solve.progress = request.progress;
  IntraOpPlanResult out;
  out.solve = solve_intra_op(cost.network(), solve);
  out.plan = cost.to_plan(out.solve.choice);
  for (int v = 0; v < request.model.size(); ++v) {
    const MemoryBreakdown m = cost.layer_memory(v, cost.configs(v)[out.solve.choice[v]]);
    out.memory.weights_bytes += m.weights_bytes;
    out.memory.gradients_bytes += m.gradients_bytes;
    out.memory.optimizer_bytes += m.optimizer_bytes;
    out.memory.activations_bytes += m.activations_bytes;
    out.memory.peak_bytes += m.peak_bytes;
  }
  if (request.products.simulation || request.products.report) {
    std::vector<std::string> names;
    const std::vector<LayerSplit>& splits = out.plan.as<IntraOpDetail>().layer_splits;
    for (const LayerSplit& ls : splits) names.push_back(request.model.layers[ls.layer].name);
    out.simulation = sim::simulate(sim::intra_op_program(splits, names, s.flops_per_s, s.devices));
  }
  if (request.products.report)
    out.report_html = report::intra_op_report(
        request.model.name, s.devices, s.flops_per_s, out.plan.objective,
        report::intra_op_rows(request.model, out.plan), *out.simulation,
        render::operator_graph_svg(request.model, out.plan), report_intra_op_frontier(request),
        {{"batch", std::to_string(request.batch)},
         {"memory per device", format_bytes(out.memory.peak_bytes)},
         {"bandwidth", fmt::format("{:.4g} GB/s per device", s.bandwidth_bytes_per_s / 1e9)}});
  return out;
}

}  // namespace paraplan::api
