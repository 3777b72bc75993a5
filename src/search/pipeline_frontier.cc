#include "search/pipeline_frontier.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "search/pipeline.h"

namespace paraplan {
namespace {

struct PlanBefore {
  bool operator()(const Plan& a, const Plan& b) const {
    // Equal objectives: the plan with fewer stages, then the earlier-found one is kept.
    return a.stages.size() < b.stages.size();
  }
};

}  // namespace

double plan_peak_memory(const Plan& plan) {
  double peak = 0;
  for (const auto& s : plan.stages) peak = std::max(peak, s.memory_bytes);
  return peak;
}

PipelineFrontierResult pipeline_frontier(const Model& model, const PipelineCostFactory& factory,
                                         const std::vector<int>& device_budgets,
                                         double memory_limit_bytes,
                                         const PipelineFrontierOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PipelineFrontierResult out;
  ParetoSet<Plan, PlanBefore> set;
  for (int budget : device_budgets) {
    double limit = memory_limit_bytes;
    for (int found = 0;; ++found) {
      if (found == options.max_points_per_budget ||
          (options.time_limit_s > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
               options.time_limit_s)) {
        out.truncated = true;
        break;
      }
      auto cost = factory(budget, limit);
      PipelineSearchResult r = search_pipeline(model, *cost);
      ++out.solves;
      if (!r.plan.feasible) break;
      const double peak = plan_peak_memory(r.plan);
      set.offer({r.plan.objective, peak, r.plan.devices_used}, r.plan);
      if (options.progress)
        options.progress->report(
            {model.name + ": time-memory frontier", double(out.solves), 0,
             fmt::format("planner runs, {} points; {} devices, {:.4g} GiB and leaner", set.size(),
                         budget, limit / 1073741824.0),
             NAN, ""});
      // Strictly leaner next: the largest limit below this plan's peak (and below this limit:
      // the planner's sums may place a peak a rounding error above the limit it met).
      const double below = std::min(peak, limit);
      limit =
          options.memory_step > 0 ? below * (1 - options.memory_step) : std::nextafter(below, 0.0);
      if (!(limit > 0)) break;
    }
  }
  for (auto& [o, p] : set.sorted()) out.points.push_back({o, std::move(p)});
  return out;
}

}  // namespace paraplan
