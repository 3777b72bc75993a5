// The plan job of the transformer search under the analytic model: the search, the simulator's
// re-ranking, the best plan Megatron-LM runs, and the products of the best plan.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "api/frontier.h"
#include "api/knobs.h"
#include "api/plan.h"
#include "ir/error.h"
#include "ir/units.h"
#include "report/plan_report.h"

namespace paraplan::api {

namespace {

// Replays the first `k` plans in the simulator and ranks those by its time (stable: ties keep
// the analytic order); the rest keep their place and -1.
std::vector<double> resimulate(const AnalyticCostModel& cost, std::vector<LlmCandidate>& top,
                               int k_requested) {
  std::vector<double> simulated(top.size(), -1);
  const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(k_requested), top.size());
  if (k == 0) return simulated;
  for (std::size_t i = 0; i < k; ++i)
    simulated[i] =
        sim::simulate_transformer(cost, top[i].config, sim::default_schedule(top[i].config))
            .iteration_time_s;
  std::vector<std::size_t> order(top.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k),
                   [&](std::size_t x, std::size_t y) { return simulated[x] < simulated[y]; });
  std::vector<LlmCandidate> ranked;
  std::vector<double> times;
  for (std::size_t i : order) {
    ranked.push_back(top[i]);
    times.push_back(simulated[i]);
  }
  top = std::move(ranked);
  return times;
}

}  // namespace

TransformerPlanResult plan_transformer(const TransformerPlanRequest& request) {
  LlmSearchSettings s = request.settings;
  if (request.engine) search_within(s, *request.engine);
  const AnalyticCostModel cost(request.model, request.cluster, request.calibration);
  TransformerPlanResult out;
  out.search = search_llm(cost, s);
  if (request.resimulate < 0) throw FieldError("resimulate", ": expected K >= 0");
  if (out.search.top.empty())
    throw Error(ErrorKind::kInfeasible, "",
                fmt::format("none of the {} configurations of {} on {} × {} fits in {} per device",
                            out.search.evaluated, request.model.name, s.devices,
                            request.cluster.device_types[0].name,
                            format_bytes(request.cluster.device_types[0].memory_bytes)));
  out.simulated_s = resimulate(cost, out.search.top, request.resimulate);
  for (const LlmCandidate& c : out.search.top) out.plans.push_back(llm_plan(c));
  const TrainingConfig& best = out.search.top[0].config;
  if (request.products.simulation || request.products.report)
    out.simulation = sim::simulate_transformer(cost, best, sim::default_schedule(best));
  if (request.products.report) {
    // The report plots the frontier of the same search.
    out.report_html = report::transformer_report(cost, best, *out.simulation, request.cluster_name,
                                                 report_frontier(cost, s), s.devices);
  }
  return out;
}

}  // namespace paraplan::api
