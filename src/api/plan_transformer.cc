// The plan job of the transformer search under the analytic model: the search, the simulator's
// re-ranking, the best plan Megatron-LM runs, and the products of the best plan.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>

#include "api/evaluate.h"
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

namespace {

// The fewest devices on which some configuration fits: doubling from the devices asked, then
// the multiples of a node between the last two counts tried, in order (at most 16 of them).
// Each count is a whole search (its best plan); counts whose batch no shape divides fit nothing.
void fewest_devices(const TransformerPlanRequest& request,
                    const std::function<std::optional<Cluster>(int)>& grow,
                    TransformerInfeasible& out) {
  const LlmSearchSettings& asked = request.settings;
  if (!grow || asked.dp) return;
  const auto start = std::chrono::steady_clock::now();
  auto fits_on = [&](int devices) -> std::optional<LlmCandidate> {
    const std::optional<Cluster> cluster = grow(devices);
    if (!cluster) return std::nullopt;
    LlmSearchSettings s = asked;
    s.devices = devices;
    s.top_k = 1;
    s.progress = nullptr;
    s.time_limit_s = 10;
    try {
      const AnalyticCostModel cost(request.model, *cluster, request.calibration);
      LlmSearchResult r = search_llm(cost, s);
      if (!r.top.empty()) return r.top[0];
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kUsage && e.kind() != ErrorKind::kInfeasible) throw;
    }
    return std::nullopt;
  };
  auto late = [&] { return std::chrono::steady_clock::now() - start > std::chrono::seconds(30); };
  const int node = request.cluster.machine_sizes.empty() ? 1 : request.cluster.machine_sizes[0];
  int below = asked.devices, found = 0;
  std::optional<LlmCandidate> plan;
  for (int d = asked.devices * 2; d <= asked.devices * 64 && d <= (1 << 20) && !late(); d *= 2) {
    if (auto c = fits_on(d)) {
      found = d;
      plan = std::move(c);
      break;
    }
    below = d;
  }
  if (!found) return;
  const int step = std::max(node, (found - below) / 16 / node * node);
  for (int d = (below / step + 1) * step; d < found && !late(); d += step)
    if (auto c = fits_on(d)) {
      found = d;
      plan = std::move(c);
      break;
    }
  out.fewest_devices = found;
  out.at_fewest = std::move(plan);
}

}  // namespace

TransformerPlanResult plan_transformer(
    const TransformerPlanRequest& request,
    const std::function<std::optional<Cluster>(int devices)>& grow) {
  LlmSearchSettings s = request.settings;
  if (request.engine) search_within(s, *request.engine);
  const AnalyticCostModel cost(request.model, request.cluster, request.calibration);
  TransformerPlanResult out;
  out.search = search_llm(cost, s);
  if (request.resimulate < 0) throw FieldError("resimulate", ": expected K >= 0");
  if (out.search.top.empty()) {
    TransformerInfeasible what;
    what.leanest = out.search.leanest;
    TransformerPlanRequest wider = request;
    wider.settings = s;
    fewest_devices(wider, grow, what);
    out.infeasible = std::move(what);
    return out;
  }
  out.simulated_s = resimulate(cost, out.search.top, request.resimulate);
  // Plans within the stack's validated time error of the fastest are ties: the model cannot
  // order them, so the leanest of them (least peak memory; the faster on equal memory) leads.
  out.time_band = time_band(s.stack);
  {
    auto& top = out.search.top;
    auto time_of = [&](std::size_t i) {
      return out.simulated_s[i] >= 0 ? out.simulated_s[i] : top[i].result.iteration_time_s;
    };
    std::size_t leanest = 0;
    out.ties = 0;
    for (std::size_t i = 0; i < top.size(); ++i) {
      if (time_of(i) > time_of(0) * (1 + out.time_band)) break;
      ++out.ties;
      if (top[i].result.memory.peak_bytes < top[leanest].result.memory.peak_bytes) leanest = i;
    }
    if (leanest > 0) {
      std::rotate(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(leanest),
                  top.begin() + static_cast<std::ptrdiff_t>(leanest) + 1);
      std::rotate(out.simulated_s.begin(),
                  out.simulated_s.begin() + static_cast<std::ptrdiff_t>(leanest),
                  out.simulated_s.begin() + static_cast<std::ptrdiff_t>(leanest) + 1);
      out.leaner_chosen = true;
    }
  }
  for (const LlmCandidate& c : out.search.top) out.plans.push_back(llm_plan(c));
  const TrainingConfig& best = out.search.top[0].config;
  if (request.products.simulation || request.products.report)
    out.simulation = sim::simulate_transformer(cost, best, sim::default_schedule(best));
  if (request.products.report) {
    // The report plots the frontier of the same search, lists the runners-up and the launch.
    report::TransformerReportExtras extras;
    extras.runners_up.assign(out.search.top.begin() + 1, out.search.top.end());
    extras.time_band = out.time_band;
    const Engine engine = stack_engine(best.stack);
    try {
      extras.launch = fmt::format("{} ({}):\n{}", engine_rules(engine).title, engine_name(engine),
                                  export_plan(std::string(engine_name(engine)), request.model, best,
                                              devices_per_node(request.cluster)));
    } catch (const FieldError& e) {  // a plan its engine cannot express: say why
      extras.launch = fmt::format("{} cannot run this plan as priced: {}",
                                  engine_rules(engine).title, e.what());
    }
    out.report_html = report::transformer_report(cost, best, *out.simulation, request.cluster_name,
                                                 report_frontier(cost, s), s.devices, extras);
  }
  return out;
}

}  // namespace paraplan::api
