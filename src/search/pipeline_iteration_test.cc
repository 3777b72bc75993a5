// The iteration-time pipeline planner against its brute-force twin: every contiguous-stage plan
// (every layer-to-stage assignment, every shape per stage, every option per layer) replayed in
// the simulator, on seeded random small graphs whose optima often have several stages of
// unequal widths; and every plan's replay is at least N × its bottleneck (the bound the search
// prunes with).
#include "search/pipeline_iteration.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "cost/piper_cost.h"
#include "search/pipeline.h"
#include "sim/pipeline_program.h"

namespace paraplan {
namespace {

struct IterationCase {
  Model model;
  PiperSettings settings;
};

IterationCase random_case(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi - 1)(rng); };
  IterationCase c;
  Model& m = c.model;
  m.name = "random";
  const int n = pick(2, 5);
  for (int v = 0; v < n; ++v) m.layers.push_back(Layer{v, "", {}, 0, {}});
  for (int v = 0; v + 1 < n; ++v) m.edges.push_back({v, v + 1, static_cast<double>(pick(0, 4))});
  for (int v = 0; v + 2 < n; ++v)  // a few skip edges: a DAG, not only a chain
    if (pick(0, 4) == 0) m.edges.push_back({v, v + 2, static_cast<double>(pick(0, 3))});
  m.index();
  for (int v = 0; v < n; ++v)
    for (int t = 1; t <= 2; ++t) {
      if (t == 2 && pick(0, 3) == 0) continue;
      TensorParallelOptions deg;
      deg.degree = t;
      // As profiles give them: a plain option and, sometimes, recomputation (the forward run
      // twice, fewer activations kept); both hold the same parameters and optimizer step.
      LayerOption plain;
      plain.id = "vanilla";
      plain.forward_time_s = pick(1, 10) / static_cast<double>(t);
      plain.compute_time_s = plain.forward_time_s + pick(1, 20) / static_cast<double>(t);
      plain.optimizer_time_s = pick(0, 3);
      plain.parameter_bytes = pick(0, 12);
      plain.memory_per_inflight_bytes = pick(0, 6);
      plain.memory_fixed_bytes = pick(0, 8);
      plain.sync_in_bytes.assign(m.in_edge_ids[static_cast<std::size_t>(v)].size(), 0);
      plain.sync_out_bytes.assign(m.out_edge_ids[static_cast<std::size_t>(v)].size(), 0);
      deg.options.push_back(plain);
      if (pick(0, 2) == 0 && plain.memory_per_inflight_bytes > 0) {
        LayerOption recompute = plain;
        recompute.id = "recompute";
        recompute.compute_time_s += plain.forward_time_s;
        recompute.memory_per_inflight_bytes =
            pick(0, static_cast<int>(plain.memory_per_inflight_bytes));
        deg.options.push_back(recompute);
      }
      m.layers[static_cast<std::size_t>(v)].by_degree.push_back(deg);
    }
  PiperSettings& s = c.settings;
  s.max_devices = pick(2, 6);
  const int microbatches[] = {2, 4, 4, 6, 8};
  s.microbatches = microbatches[pick(0, 5)];
  s.memory_per_device_bytes = pick(20, 60);
  s.bandwidth_bytes_per_s = pick(1, 4);
  s.allreduce_bandwidth_bytes_per_s = pick(1, 4);
  return c;
}

double replay(const Model& m, const Plan& plan, int n) {
  return sim::simulate_pipeline_plan(m, plan, n).makespan_s;
}

// Every plan: stage per layer (contiguous: edges go forward), shape per stage, option per layer.
struct Brute {
  double best = std::numeric_limits<double>::infinity();
  Plan plan;
  std::map<int, double> best_of_stages;               // per stage count
  std::map<std::vector<int>, double> best_of_widths;  // per stage widths, first stage first
  bool bound_held = true;                             // every plan's replay >= N × its objective
};

Brute brute_force_iteration(const Model& m, const PiperCostModel& cost, const PiperSettings& s) {
  Brute out;
  const int n = m.size();
  std::vector<int> stage(static_cast<std::size_t>(n), 0);
  std::function<void(int)> assign = [&](int v) {
    if (v < n) {
      for (int x = 0; x < n; ++x) stage[static_cast<std::size_t>(v)] = x, assign(v + 1);
      return;
    }
    int count = 0;
    for (int x : stage) count = std::max(count, x + 1);
    std::vector<std::vector<int>> layers(static_cast<std::size_t>(count));
    for (int v2 = 0; v2 < n; ++v2) layers[static_cast<std::size_t>(stage[v2])].push_back(v2);
    for (const auto& l : layers)
      if (l.empty()) return;
    for (const auto& e : m.edges)
      if (stage[static_cast<std::size_t>(e.from)] > stage[static_cast<std::size_t>(e.to)]) return;
    Plan plan = Plan::of(PlanKind::kPipeline);
    plan.microbatches = s.microbatches;
    plan.stages.resize(static_cast<std::size_t>(count));
    std::function<void(int)> shape = [&](int i) {
      if (i < count) {
        Stage& st = plan.stages[static_cast<std::size_t>(i)];
        st.layers = layers[static_cast<std::size_t>(i)];
        for (int t = 1; t <= 2; ++t)
          for (int d = 1; d <= s.max_devices; ++d) {
            if (s.microbatches % d) continue;
            st.tensor_parallel = t, st.data_parallel = d;
            shape(i + 1);
          }
        return;
      }
      // Every option per layer.
      std::vector<std::pair<int, int>> slots;  // (stage, position)
      for (int i2 = 0; i2 < count; ++i2) {
        Stage& st = plan.stages[static_cast<std::size_t>(i2)];
        st.option_index.assign(st.layers.size(), 0);
        for (std::size_t p = 0; p < st.layers.size(); ++p) {
          const auto* options =
              m.layers[static_cast<std::size_t>(st.layers[p])].options_for(st.tensor_parallel);
          if (options == nullptr) return;
          slots.emplace_back(i2, static_cast<int>(p));
        }
      }
      std::function<void(std::size_t)> option = [&](std::size_t k) {
        if (k < slots.size()) {
          Stage& st = plan.stages[static_cast<std::size_t>(slots[k].first)];
          const auto* options = m.layers[static_cast<std::size_t>(
                                             st.layers[static_cast<std::size_t>(slots[k].second)])]
                                    .options_for(st.tensor_parallel);
          for (std::size_t o = 0; o < options->size(); ++o) {
            st.option_index[static_cast<std::size_t>(slots[k].second)] = static_cast<int>(o);
            option(k + 1);
          }
          return;
        }
        Plan priced;
        try {
          priced = cost.evaluate(plan);
        } catch (const Error&) {
          return;  // more devices or Σd than allowed
        }
        if (!priced.feasible) return;
        const double t = replay(m, priced, s.microbatches);
        if (t < priced.objective * s.microbatches * (1 - 1e-9)) out.bound_held = false;
        if (t < out.best) out.best = t, out.plan = priced;
        const int p = static_cast<int>(priced.stages.size());
        if (!out.best_of_stages.count(p) || t < out.best_of_stages[p]) out.best_of_stages[p] = t;
        std::vector<int> widths;
        for (const Stage& st : priced.stages) widths.push_back(st.data_parallel);
        if (!out.best_of_widths.count(widths) || t < out.best_of_widths[widths])
          out.best_of_widths[widths] = t;
      };
      option(0);
    };
    shape(0);
  };
  assign(0);
  return out;
}

TEST(PipelineIterationTwin, EqualsTheBestReplayOfEveryPlan) {
  std::mt19937 rng(20261126);
  int cases = 0, multi_stage = 0, unequal_widths = 0, better_than_steady = 0;
  int stage_counts_checked = 0, width_lists_checked = 0;
  for (int i = 0; i < 150; ++i) {
    const IterationCase c = random_case(rng);
    const PiperCostModel cost(c.model, c.settings);
    const Plan steady = search_pipeline(c.model, cost).plan;
    const Brute brute = brute_force_iteration(c.model, cost, c.settings);
    if (!steady.feasible) {
      EXPECT_FALSE(std::isfinite(brute.best)) << "case " << i;
      continue;
    }
    ++cases;
    const int n = c.settings.microbatches;
    const IterationSearchResult r = search_pipeline_iteration(
        c.model, cost, n, [&](const Plan& p) { return replay(c.model, p, n); }, steady);
    ASSERT_TRUE(r.exact);
    EXPECT_TRUE(brute.bound_held) << "case " << i;
    EXPECT_NEAR(r.iteration_s, brute.best, 1e-9 * brute.best) << "case " << i;
    EXPECT_NEAR(replay(c.model, r.plan, n), r.iteration_s, 1e-12);
    const auto& st = brute.plan.stages;
    multi_stage += st.size() > 1;
    bool unequal = false;
    for (const Stage& s : st) unequal = unequal || s.data_parallel != st[0].data_parallel;
    unequal_widths += unequal;
    better_than_steady += r.iteration_s < replay(c.model, steady, n) * (1 - 1e-9);
    // The user's stage count (--pp): the best plan of exactly that many stages, or none.
    for (int p = 1; p <= c.model.size(); ++p) {
      IterationSearchOptions fixed;
      fixed.stages = p;
      const IterationSearchResult rp = search_pipeline_iteration(
          c.model, cost, n, [&](const Plan& q) { return replay(c.model, q, n); }, steady, fixed);
      const auto it = brute.best_of_stages.find(p);
      if (it == brute.best_of_stages.end()) {
        EXPECT_FALSE(rp.plan.feasible) << "case " << i << " stages " << p;
        continue;
      }
      ASSERT_TRUE(rp.plan.feasible) << "case " << i << " stages " << p;
      EXPECT_EQ(static_cast<int>(rp.plan.stages.size()), p);
      EXPECT_NEAR(rp.iteration_s, it->second, 1e-9 * it->second) << "case " << i << " stages " << p;
      ++stage_counts_checked;
    }
    // The user's widths per stage (--stage-dp): the best plan of exactly those, for the first
    // few width lists any plan has, and none for widths no plan has.
    int lists = 0;
    for (const auto& [widths, best] : brute.best_of_widths) {
      if (++lists > 3) break;
      IterationSearchOptions fixed;
      fixed.stages = static_cast<int>(widths.size());
      fixed.stage_widths = widths;
      const IterationSearchResult rw = search_pipeline_iteration(
          c.model, cost, n, [&](const Plan& q) { return replay(c.model, q, n); }, steady, fixed);
      ASSERT_TRUE(rw.plan.feasible) << "case " << i;
      for (std::size_t k = 0; k < widths.size(); ++k)
        EXPECT_EQ(rw.plan.stages[k].data_parallel, widths[k]) << "case " << i;
      EXPECT_NEAR(rw.iteration_s, best, 1e-9 * best) << "case " << i;
      ++width_lists_checked;
    }
    IterationSearchOptions impossible;
    impossible.stage_widths = {c.settings.max_devices, c.settings.max_devices};
    impossible.stages = 2;
    if (!brute.best_of_widths.count(impossible.stage_widths)) {
      const IterationSearchResult none = search_pipeline_iteration(
          c.model, cost, n, [&](const Plan& q) { return replay(c.model, q, n); }, steady,
          impossible);
      EXPECT_FALSE(none.plan.feasible) << "case " << i;
    }
  }
  // The cases are not trivial: many optima are pipelines, some of unequal widths, and the
  // steady-state optimum is often not the fastest iteration.
  EXPECT_GE(cases, 100);
  EXPECT_GE(multi_stage, cases / 5);
  EXPECT_GE(unequal_widths, 3);
  EXPECT_GE(better_than_steady, cases / 10);
  EXPECT_GE(stage_counts_checked, 2 * cases);
  EXPECT_GE(width_lists_checked, 2 * cases);
  std::cout << cases << " cases: " << multi_stage << " multi-stage optima, " << unequal_widths
            << " of unequal widths, " << better_than_steady
            << " faster than the steady-state optimum\n";
}

}  // namespace
}  // namespace paraplan
