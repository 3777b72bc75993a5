// Piper's plan evaluator against the fixed-plan checks of data/piper/reference.md.
#include "cost/piper_cost.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "io/piper_reader.h"

namespace paraplan {
namespace {

// Piper's buildEquiPartitionResult(ins, d, t, stages, false, true) for BERT-32.
Plan equi_plan(const Model& m, int d, int t, int stages) {
  std::vector<int> transformers;
  for (int v = 0; v < m.size(); ++v)
    if (m.layers[v].name == "ParallelTransformerLayer") transformers.push_back(v);
  const int n = static_cast<int>(transformers.size());
  Plan plan;
  std::size_t next = 0;
  for (int i = 0; i < stages; ++i) {
    int count = n / stages + (i >= stages - n % stages ? 1 : 0);
    Stage st;
    st.data_parallel = d;
    st.tensor_parallel = t;
    for (int j = 0; j < count; ++j) st.layers.push_back(transformers[next++]);
    plan.stages.push_back(st);
  }
  for (int v = 0; v < m.size(); ++v) {
    if (m.layers[v].name == "ParallelTransformerLayer") continue;
    if (v == m.size() - 1)
      plan.stages.back().layers.push_back(v);
    else
      plan.stages.front().layers.push_back(v);
  }
  for (auto& st : plan.stages) {
    std::sort(st.layers.begin(), st.layers.end());
    for (int v : st.layers) {
      const auto& opts = *m.layers[v].options_for(t);
      int recompute = 0;
      for (int o = 0; o < static_cast<int>(opts.size()); ++o)
        if (opts[o].id == "activation recomp") recompute = o;
      st.option_index.push_back(recompute);
    }
  }
  return plan;
}

struct Check {
  int microbatches, d, t, stages;
  double objective;
};

TEST(PiperEvaluator, ReproducesCorrelationExperimentPlans) {
  io::PiperInput in = io::read_piper(std::string(PARAPLAN_DATA) + "/piper/bert32a100.json");
  const Check checks[] = {
      {128, 32, 1, 2, 0.021116558533654767}, {128, 16, 1, 4, 0.021237981405780867},
      {128, 8, 1, 8, 0.021941355411951358},  {128, 4, 1, 16, 0.023515680055251488},
      {128, 2, 1, 32, 0.026767930157331317}, {128, 32, 2, 1, 0.02545258203658461},
      {128, 16, 4, 1, 0.03172586767356671},  {128, 8, 8, 1, 0.047830751887761626},
      {512, 32, 1, 2, 0.020721910066106002}, {512, 16, 1, 4, 0.02103437756298368},
      {512, 8, 1, 8, 0.021834538372218607},  {512, 4, 1, 16, 0.023459785398428256},
      {512, 2, 1, 32, 0.02674255465471744},  {512, 32, 2, 1, 0.025068520509146153},
      {512, 16, 4, 1, 0.031538560668391676}, {512, 8, 8, 1, 0.0477419692219404},
  };
  for (const Check& c : checks) {
    PiperSettings s{64, 8e10, 162.5 * 1073741824.0, c.microbatches};
    PiperCostModel cost(in.model, s);
    Plan plan = cost.evaluate(equi_plan(in.model, c.d, c.t, c.stages));
    ASSERT_TRUE(plan.feasible);
    EXPECT_NEAR(plan.objective, c.objective, 1e-12 * c.objective)
        << "N=" << c.microbatches << " d=" << c.d << " t=" << c.t << " stages=" << c.stages;
  }
  // "with d = 32, t = 1 and 2 stages, the first stage holds 20 nodes with y = 2 and uses
  // 15.442 GiB, the second holds 17 nodes with y = 1 (14.373 GiB)"
  PiperCostModel cost(in.model, {64, 8e10, 162.5 * 1073741824.0, 128});
  Plan plan = cost.evaluate(equi_plan(in.model, 32, 1, 2));
  EXPECT_EQ(plan.stages[0].layers.size(), 20u);
  EXPECT_EQ(plan.stages[0].inflight_microbatches, 2);
  EXPECT_NEAR(plan.stages[0].memory_bytes / 1073741824.0, 15.442, 5e-4);
  EXPECT_EQ(plan.stages[1].inflight_microbatches, 1);
  EXPECT_NEAR(plan.stages[1].memory_bytes / 1073741824.0, 14.373, 5e-4);
}

TEST(PiperEvaluator, RejectsInvalidPlans) {
  io::PiperInput in = io::read_piper(std::string(PARAPLAN_DATA) + "/piper/bert32a100.json");
  PiperCostModel cost(in.model, {64, 8e10, 2.5e10, 128});
  Plan plan = equi_plan(in.model, 32, 1, 2);
  Plan missing = plan;
  missing.stages[1].layers.pop_back();
  missing.stages[1].option_index.pop_back();
  EXPECT_THROW(cost.evaluate(missing), Error);
  Plan backwards = plan;
  std::swap(backwards.stages[0], backwards.stages[1]);
  EXPECT_THROW(cost.evaluate(backwards), Error);
  Plan too_many = plan;
  too_many.stages[0].data_parallel = 64;
  EXPECT_THROW(cost.evaluate(too_many), Error);
  Plan not_dividing = plan;
  not_dividing.stages[0].data_parallel = 3;
  EXPECT_THROW(cost.evaluate(not_dividing), Error);
}

// A stage whose memory is one rounding error above the limit does not fit: with the limit one
// ulp below 11 bytes, 29 − limit rounds to 18 in double precision and a move that saves exactly
// 18 bytes once looked like enough (the frontier then missed a point).
TEST(PiperCursors, MemoryOneRoundingErrorAboveTheLimitDoesNotFit) {
  Model m;
  m.name = "ulp";
  for (int v = 0; v < 4; ++v) m.layers.push_back(Layer{v, "", {}, 0, {}});
  m.edges = {{0, 2, 0}, {0, 3, 0}, {2, 3, 0}};
  m.index();
  auto option = [&](int v, double p, double a, double b) {
    LayerOption o;
    o.compute_time_s = p;
    o.memory_per_inflight_bytes = a;
    o.memory_fixed_bytes = b;
    o.sync_in_bytes.assign(m.in_edge_ids[v].size(), 0.0);
    o.sync_out_bytes.assign(m.out_edge_ids[v].size(), 0.0);
    return o;
  };
  m.layers[0].by_degree = {{1, {option(0, 0, 1, 1), option(0, 0, 1, 1)}}};
  m.layers[1].by_degree = {{1, {option(1, 5, 0, 8)}}};
  m.layers[2].by_degree = {{1, {option(2, 0, 0, 8), option(2, 1, 0, 0)}}};
  m.layers[3].by_degree = {{1, {option(3, 0, 5, 8), option(3, 5, 0, 0)}}};
  const PiperCostModel cost(m, {2, std::nextafter(11.0, 0.0), 1, 2});
  auto fast = cost.cursor(), general = cost.generic_cursor();
  fast->reset({0, 2, 3});
  general->reset({0, 2, 3});
  for (int si = 0; si < static_cast<int>(cost.shapes().size()); ++si)
    for (int y = 1; y <= 3; ++y)
      EXPECT_EQ(fast->cost(si, y), general->cost(si, y)) << si << " " << y;
  EXPECT_EQ(fast->cost(0, 2), 6.0);  // layer 3 alone (5) would need 11 bytes
}

// The fast cursor (two options per layer sharing parameters and optimizer time) prices every
// stage as the general one does, at every shape and in-flight count, as layers leave the stage
// and come back.
RC_GTEST_PROP(PiperCursors, FastEqualsGeneral, ()) {
  const int n = *rc::gen::inRange(1, 9);
  Model m;
  m.name = "random";
  for (int v = 0; v < n; ++v) m.layers.push_back(Layer{v, "", {}, 0, {}});
  for (int v = 0; v < n; ++v)
    for (int w = v + 1; w < n; ++w)
      if (*rc::gen::inRange(0, 3) == 0)
        m.edges.push_back({v, w, static_cast<double>(*rc::gen::inRange(0, 5))});
  m.index();
  for (int v = 0; v < n; ++v)
    for (int t = 1; t <= 2; ++t) {
      if (t > 1 && *rc::gen::inRange(0, 3) == 0) continue;
      TensorParallelOptions deg{t, {}};
      const double w = *rc::gen::inRange(0, 8), step = *rc::gen::inRange(0, 3);
      for (int o = *rc::gen::inRange(1, 3); o > 0; --o) {
        LayerOption opt;
        opt.compute_time_s = *rc::gen::inRange(0, 20);
        opt.parameter_bytes = w;
        opt.optimizer_time_s = step;
        opt.memory_per_inflight_bytes = *rc::gen::inRange(0, 9);
        opt.memory_fixed_bytes = *rc::gen::inRange(0, 11);
        for (std::size_t q = 0; q < m.in_edge_ids[v].size(); ++q)
          opt.sync_in_bytes.push_back(*rc::gen::inRange(0, 3));
        for (std::size_t q = 0; q < m.out_edge_ids[v].size(); ++q)
          opt.sync_out_bytes.push_back(*rc::gen::inRange(0, 3));
        deg.options.push_back(opt);
      }
      m.layers[v].by_degree.push_back(deg);
    }
  PiperSettings s{*rc::gen::inRange(1, 7), static_cast<double>(*rc::gen::inRange(5, 60)), 3.0,
                  *rc::gen::inRange(1, 7)};
  if (*rc::gen::inRange(0, 2)) s.device_groups = {{"a", 2, 40, 1.0}, {"b", s.max_devices, 25, 0.5}};
  if (!s.device_groups.empty()) s.max_devices += 2;
  const PiperCostModel cost(m, s);
  auto fast = cost.cursor(), general = cost.generic_cursor();
  auto compare = [&] {
    for (int si = 0; si < static_cast<int>(cost.shapes().size()); ++si) {
      const double lf = fast->lower_bound(si), lg = general->lower_bound(si);
      RC_ASSERT(std::isfinite(lf) == std::isfinite(lg));
      if (std::isfinite(lf)) RC_ASSERT(std::fabs(lf - lg) <= 1e-9 * std::max(1.0, lg));
      for (int y = 1; y <= cost.max_data_parallel_sum() + 1; ++y) {
        // A cutoff first (what the planner asks), then the exact cost (cached answers reused).
        const double cutoff = *rc::gen::inRange(0, 40);
        const double fc = fast->cost(si, y, cutoff);
        const double f = fast->cost(si, y), g = general->cost(si, y);
        RC_LOG() << "shape " << si << " t " << cost.shapes()[si].tensor_parallel << " d "
                 << cost.shapes()[si].data_parallel << " g " << cost.shapes()[si].device_type
                 << " y " << y << ": fast " << f << " general " << g << " cutoff " << cutoff << ": "
                 << fc << "\n";
        RC_ASSERT(std::isfinite(f) == std::isfinite(g));
        RC_ASSERT(fast->fits(si, y) == std::isfinite(g));
        if (std::isfinite(f)) RC_ASSERT(std::fabs(f - g) <= 1e-9 * std::max(1.0, g));
        // y_range: the fastest options' cost up to its first, nothing past its second.
        const auto [cheap, most] = fast->y_range(si);
        if (y <= cheap) RC_ASSERT(f == fast->lower_bound(si));
        if (y > most) RC_ASSERT(!std::isfinite(g));
        // Below a cutoff: exact. (Sums in another order may round across a cutoff equal to the
        // cost.)
        if (g < cutoff - 1e-9)
          RC_ASSERT(std::fabs(fc - g) <= 1e-9 * std::max(1.0, g));
        else if (g > cutoff + 1e-9)
          RC_ASSERT(fc >= cutoff);
      }
    }
  };
  std::vector<int> all(n);
  for (int v = 0; v < n; ++v) all[v] = v;
  fast->reset(all);
  general->reset(all);
  compare();
  // Remove layers from the sink side (each has no successor left), then put some back.
  std::vector<int> removed;
  for (int v = n - 1; v > 0; --v) {
    fast->remove(v);
    general->remove(v);
    removed.push_back(v);
    compare();
    if (*rc::gen::inRange(0, 3) == 0) {
      fast->undo();
      general->undo();
      compare();
      fast->remove(v);
      general->remove(v);
    }
  }
}

}  // namespace
}  // namespace paraplan
