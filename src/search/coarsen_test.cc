#include "search/coarsen.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <set>

#include "io/native_json.h"
#include "search/pipeline.h"
#include "sim/pipeline_program.h"
#include "zoo/transformer_stack.h"

namespace paraplan {
namespace {

// A random DAG of n layers (edges forward in index order), one or two degrees, 1..3 options,
// tensor-parallel sync bytes on the edges of t = 2 options.
Model random_dag(int n) {
  Model m;
  m.name = "random";
  for (int v = 0; v < n; ++v) m.layers.push_back(Layer{v, "", {}, 0, {}});
  for (int v = 0; v < n; ++v)
    for (int w = v + 1; w < n; ++w)
      if (w == v + 1 || *rc::gen::inRange(0, 4) == 0)
        m.edges.push_back({v, w, static_cast<double>(*rc::gen::inRange(0, 5))});
  m.index();
  for (int v = 0; v < n; ++v) {
    const int degrees = *rc::gen::inRange(1, 3);
    for (int t = 1; t <= degrees; ++t) {
      TensorParallelOptions deg{t, {}};
      const int options = *rc::gen::inRange(1, 4);
      for (int o = 0; o < options; ++o) {
        LayerOption opt;
        opt.id = fmt::format("o{}", o);
        opt.compute_time_s = *rc::gen::inRange(1, 20);
        opt.parameter_bytes = *rc::gen::inRange(0, 8);
        opt.memory_per_inflight_bytes = *rc::gen::inRange(0, 9);
        opt.memory_fixed_bytes = *rc::gen::inRange(0, 11);
        for (std::size_t q = 0; q < m.in_edge_ids[v].size(); ++q)
          opt.sync_in_bytes.push_back(t > 1 ? *rc::gen::inRange(0, 3) : 0);
        for (std::size_t q = 0; q < m.out_edge_ids[v].size(); ++q)
          opt.sync_out_bytes.push_back(t > 1 ? *rc::gen::inRange(0, 3) : 0);
        deg.options.push_back(opt);
      }
      m.layers[v].by_degree.push_back(deg);
    }
  }
  return m;
}

TEST(Coarsen, ChainsCutIntoBalancedSegments) {
  zoo::TransformerShape shape;
  shape.layers = 38;  // 40 layers with the embedding and the head
  const Model m = zoo::transformer_stack(shape);
  const CoarseModel c = coarsen(m, 8);
  ASSERT_EQ(c.model.size(), 8);
  std::set<int> seen;
  for (const auto& members : c.members)
    for (int v : members) EXPECT_TRUE(seen.insert(v).second);
  EXPECT_EQ(static_cast<int>(seen.size()), m.size());
  EXPECT_FALSE(c.model.topological_order().empty());
  EXPECT_EQ(c.model.edges.size(), 7u);  // a chain stays a chain
  // Every super-node holds 4 or 5 of the 38 identical blocks (the ends carry the embedding
  // and the head).
  for (std::size_t j = 1; j + 1 < c.members.size(); ++j) EXPECT_NEAR(c.members[j].size(), 5, 1);
  // Both aggregated options at each degree: the fastest and the leanest.
  EXPECT_EQ(c.model.layers[3].by_degree.front().options.size(), 2u);
}

TEST(Coarsen, AModelNoLargerThanTheTargetIsItself) {
  const Model m = zoo::transformer_stack({});
  const CoarsePlanResult r = plan_coarsened(m, {8, 16 * 1073741824.0, 25e9, 64}, m.size());
  PiperCostModel cost(m, {8, 16 * 1073741824.0, 25e9, 64});
  EXPECT_EQ(r.plan.objective, search_pipeline(m, cost).plan.objective);
}

// On random DAGs small enough to solve exactly: the coarse plan is valid on the real model,
// never better than the exact optimum, and refinement never makes it worse.
RC_GTEST_PROP(Coarsen, CoarsePlansAreValidAndNeverBeatTheExactOptimum, ()) {
  const int n = *rc::gen::inRange(4, 14);
  const Model m = random_dag(n);
  PiperSettings s;
  s.max_devices = *rc::gen::inRange(1, 7);
  s.microbatches = *rc::gen::inRange(1, 7);
  s.memory_per_device_bytes = *rc::gen::inRange(20, 80);
  s.bandwidth_bytes_per_s = *rc::gen::inRange(1, 4);
  const int nodes = *rc::gen::inRange(2, n);
  const CoarseModel c = coarsen(m, nodes);
  RC_ASSERT(c.model.size() == nodes);
  RC_ASSERT(!c.model.topological_order().empty());
  const CoarsePlanResult r = plan_coarsened(m, s, nodes);
  PiperCostModel cost(m, s);
  const Plan exact = search_pipeline(m, cost).plan;
  RC_TAG(r.plan.feasible, exact.feasible);
  RC_LOG() << "coarse " << r.coarse_objective << " uncoarsened " << r.uncoarsened_objective
           << " refined " << r.plan.objective << " exact " << exact.objective << "\n"
           << io::model_to_json(m).dump() << "\ncoarse model " << io::model_to_json(c.model).dump()
           << "\nK=" << s.max_devices << " N=" << s.microbatches
           << " M=" << s.memory_per_device_bytes << " B=" << s.bandwidth_bytes_per_s
           << " nodes=" << nodes << "\nplan " << io::plan_to_json(r.plan, m).dump() << "\n";
  if (!r.plan.feasible) return;
  RC_ASSERT(exact.feasible);
  const Plan again = cost.evaluate(r.plan);
  RC_ASSERT(again.objective == r.plan.objective);
  RC_ASSERT(r.plan.objective >= exact.objective * (1 - 1e-12));
  RC_ASSERT(r.plan.objective <= r.uncoarsened_objective);
  RC_ASSERT(r.uncoarsened_objective <= r.coarse_objective * (1 + 1e-12) ||
            !std::isfinite(r.coarse_objective));
}

// Under the iteration objective: the plan is valid on the real model, its iteration is its
// replay, no slower than the steady-state coarsened plan's (which it reports), never faster
// than the exact iteration search on the real model when that proves its answer, and holds
// the stage count asked for.
RC_GTEST_PROP(Coarsen, IterationPlansAreReplayedValidAndNoSlowerThanTheSteadyState, ()) {
  const int n = *rc::gen::inRange(4, 12);
  const Model m = random_dag(n);
  PiperSettings s;
  s.max_devices = *rc::gen::inRange(2, 7);
  s.microbatches = *rc::gen::inRange(2, 9);
  s.memory_per_device_bytes = *rc::gen::inRange(20, 80);
  s.bandwidth_bytes_per_s = *rc::gen::inRange(1, 4);
  const int nodes = *rc::gen::inRange(2, n);
  const int stages = *rc::gen::inRange(0, 3);
  CoarseIterationOptions iteration;
  iteration.replay = [&](const Model& model, const Plan& p) {
    return sim::simulate_pipeline_plan(model, p, s.microbatches).makespan_s;
  };
  iteration.search.stages = stages;
  const CoarsePlanResult r = plan_coarsened(m, s, nodes, {}, &iteration);
  const CoarsePlanResult steady = plan_coarsened(m, s, nodes);
  RC_TAG(stages, r.plan.feasible);
  RC_LOG() << io::model_to_json(m).dump() << "\nK=" << s.max_devices << " N=" << s.microbatches
           << " M=" << s.memory_per_device_bytes << " B=" << s.bandwidth_bytes_per_s
           << " nodes=" << nodes << " stages=" << stages << "\n";
  if (!steady.plan.feasible) {
    RC_ASSERT(!r.plan.feasible);
    return;
  }
  RC_ASSERT(r.iteration.has_value());
  if (stages == 0) RC_ASSERT(r.plan.feasible);
  if (!r.plan.feasible) return;
  if (stages > 0) RC_ASSERT(static_cast<int>(r.plan.stages.size()) == stages);
  PiperCostModel cost(m, s);
  RC_ASSERT(cost.evaluate(r.plan).feasible);
  const double replay = iteration.replay(m, r.plan);
  RC_ASSERT(r.iteration->iteration_s == replay);
  RC_ASSERT(r.iteration->steady_state_plan_iteration_s == iteration.replay(m, steady.plan));
  if (stages == 0) RC_ASSERT(replay <= r.iteration->steady_state_plan_iteration_s);
  const IterationSearchResult exact = search_pipeline_iteration(
      m, cost, s.microbatches, [&](const Plan& p) { return iteration.replay(m, p); },
      search_pipeline(m, cost).plan, iteration.search);
  if (exact.exact) RC_ASSERT(replay >= exact.iteration_s * (1 - 1e-12));
}

}  // namespace
}  // namespace paraplan
