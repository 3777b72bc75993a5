// The planner of a cluster of several device types against independent computations: one
// segment prices as the homogeneous model does, the layer split against every composition of the
// layers, the search against plain loops over every knob.
#include "search/llm_mixed.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <functional>
#include <limits>

#include "ir/error.h"
#include "search/compositions_test_support.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan {
namespace {

Calibration no_reserve(const std::string& device) {
  Calibration c = default_calibration(device);
  c.runtime_reserved_bytes = 0;  // budgets here are fractions of a GiB, for a tiny model
  return c;
}

/// Machines of two devices each: `a100` A100 machines, then `h100` H100 machines.
Cluster small_mixed(int a100, int h100, double a100_memory, double h100_memory) {
  Cluster c;
  c.name = "small-mixed";
  c.device_types = {{"A100", a100_memory, 312e12}, {"H100", h100_memory, 989e12}};
  for (int m = 0; m < a100 + h100; ++m) {
    c.machine_sizes.push_back(2);
    c.machine_device_type.push_back(m < a100 ? 0 : 1);
  }
  c.tiers = {{"NVLink", 300e9, 1e-6}, {"InfiniBand", 25e9, 4e-6}};
  return c;
}

MixedAnalyticModel tiny_mixed(int layers, int a100, int h100, double a100_memory,
                              double h100_memory) {
  return MixedAnalyticModel(zoo::megatron_gpt("tiny", 8, 1024, layers, 50257),
                            small_mixed(a100, h100, a100_memory, h100_memory),
                            {no_reserve("A100"), no_reserve("H100")}, 2 * (a100 + h100));
}

using testing_support::compositions;

double mixed_bottleneck(const MixedResult& r) {
  double worst = 0;
  for (const auto& st : r.stages) worst = std::max(worst, st.time_per_microbatch_s);
  return worst;
}

// One segment of H100s in the mixed cluster prices exactly as the same job on a DGX H100 cluster
// (the mixed preset's H100 nodes have the DGX H100's NVLink and NICs).
TEST(MixedModel, OneSegmentIsTheHomogeneousModel) {
  const TransformerConfig gpt = *zoo::llm_model("gpt-1.7b");
  const MixedAnalyticModel mixed(gpt, *zoo::cluster_preset("mixed-a100-h100", 16),
                                 {default_calibration("A100"), default_calibration("H100")}, 16);
  const AnalyticCostModel h100(gpt, *zoo::cluster_preset("dgx-h100", 8),
                               default_calibration("H100"));
  for (int tp : {1, 2, 8})
    for (int pp : {1, 2, 4}) {
      if (tp * pp > 8) continue;
      for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
        MixedConfig c;
        c.segments = {{1, tp, 8 / tp / pp, pp}};
        c.global_batch = 64;
        c.samples_per_microbatch = 2 * (8 / tp / pp);
        c.recompute = rc;
        c.sequence_parallel = tp > 1;
        c.zero_stage = 1;
        c.overlap_grad_reduce = true;
        TrainingConfig t = mixed.segment_config(c, 0);
        const AnalyticResult want = h100.evaluate(t);
        const MixedResult got = mixed.evaluate(c);
        EXPECT_NEAR(got.iteration_time_s, want.iteration_time_s, 1e-12 * want.iteration_time_s)
            << "tp " << tp << " pp " << pp;
        ASSERT_EQ(got.stages.size(), want.stages.size());
        for (std::size_t i = 0; i < got.stages.size(); ++i) {
          EXPECT_DOUBLE_EQ(got.stages[i].time_per_microbatch_s,
                           want.stages[i].time_per_microbatch_s);
          EXPECT_DOUBLE_EQ(got.stages[i].memory.peak_bytes, want.stages[i].memory.peak_bytes);
        }
        EXPECT_EQ(got.fits, want.fits);
        // Its devices are the H100s, stage by stage.
        EXPECT_EQ(got.stages[0].device_ids.front(), 8);
        EXPECT_EQ(got.stages.back().device_ids.back(), 15);
      }
    }
}

TEST(MixedModel, RefusesWhatTheDevicesCannotHold) {
  const MixedAnalyticModel m = tiny_mixed(8, 1, 1, 1e9, 1e9);
  MixedConfig c;
  c.global_batch = 8;
  c.samples_per_microbatch = 2;
  c.segments = {{0, 1, 2, 2}};  // four A100s of two
  EXPECT_THROW(m.check(c), Error);
  c.segments = {{0, 2, 1, 1}, {1, 1, 2, 1}};
  EXPECT_NO_THROW(m.check(c));
  c.samples_per_microbatch = 3;  // does not divide the batch, nor split over two replicas
  EXPECT_THROW(m.check(c), Error);
  c.samples_per_microbatch = 2;
  c.zero_stage = 3;
  EXPECT_THROW(m.check(c), Error);
}

// Twin of balance_mixed_stages: the fastest slowest stage over every split that fits.
RC_GTEST_PROP(MixedSearch, BalancedSplitIsTheBestBottleneck, ()) {
  const int layers = *rc::gen::inRange(2, 11);
  const int pp_a = *rc::gen::inRange(1, 3), pp_b = *rc::gen::inRange(1, 3);
  RC_PRE(pp_a + pp_b <= layers);
  const double gib = 1073741824.0;
  const MixedAnalyticModel m = tiny_mixed(layers, 2, 2, *rc::gen::element(0.3, 0.6, 1.0, 4.0) * gib,
                                          *rc::gen::element(0.3, 0.6, 1.0, 4.0) * gib);
  MixedConfig c;
  const int tp_a = *rc::gen::element(1, 2), tp_b = *rc::gen::element(1, 2);
  const int dp_a = 2 / tp_a * 2 / pp_a, dp_b = 2 / tp_b * 2 / pp_b;  // all four of each
  const bool a_first = *rc::gen::arbitrary<bool>();
  const MixedSegment a{0, tp_a, dp_a, pp_a}, b{1, tp_b, dp_b, pp_b};
  c.segments = a_first ? std::vector<MixedSegment>{a, b} : std::vector<MixedSegment>{b, a};
  c.seq_len = 1024;
  c.samples_per_microbatch = 4 * *rc::gen::element(1, 2);
  c.global_batch = c.samples_per_microbatch * *rc::gen::inRange(1, 9);
  c.recompute = *rc::gen::element(Recompute::kNone, Recompute::kSelective, Recompute::kFull);
  c.zero_stage = *rc::gen::inRange(0, 2);  // ZeRO 2 does not combine with a pipeline
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> prefix;
  compositions(layers, c.stages(), prefix, [&](const std::vector<int>& split) {
    MixedConfig cs = c;
    cs.stage_layers = split;
    const MixedResult r = m.evaluate(cs);
    if (r.fits) best = std::min(best, mixed_bottleneck(r));
  });
  const auto split = balance_mixed_stages(m, c);
  RC_ASSERT(split.has_value() == (best < std::numeric_limits<double>::infinity()));
  if (split) {
    c.stage_layers = *split;
    const MixedResult r = m.evaluate(c);
    RC_ASSERT(r.fits);
    RC_ASSERT(std::abs(mixed_bottleneck(r) - best) <= 1e-12 * best);
  }
}

// Twin of the search: plain loops over every segment order, shape, micro-batch and knob, each
// with its balanced split (whose twin is above); the search's best is the best of them (its
// bound never prunes the optimum away).
RC_GTEST_PROP(MixedSearch, FindsTheBestOfEveryConfiguration, ()) {
  const int layers = *rc::gen::inRange(2, 9);
  const double gib = 1073741824.0;
  const int a100 = *rc::gen::inRange(1, 3), h100 = *rc::gen::inRange(1, 3);  // machines of 2
  const MixedAnalyticModel m =
      tiny_mixed(layers, a100, h100, *rc::gen::element(0.5, 1.0, 4.0) * gib,
                 *rc::gen::element(0.5, 1.0, 4.0) * gib);
  MixedSearchSettings s;
  s.seq_len = 1024;
  s.global_batch = *rc::gen::element(8, 16, 24);
  s.max_zero_stage = *rc::gen::inRange(0, 3);
  s.max_replica_microbatch = 4;
  s.top_k = *rc::gen::inRange(1, 4);
  const MixedSearchResult got = search_llm_mixed(m, s);

  double best = std::numeric_limits<double>::infinity();
  const int n[2] = {2 * a100, 2 * h100};
  for (int first : {0, 1})
    for (int tp0 = 1; tp0 <= 2; ++tp0)
      for (int pp0 = 1; pp0 <= n[first] / tp0; ++pp0)
        for (int tp1 = 1; tp1 <= 2; ++tp1)
          for (int pp1 = 1; pp1 <= n[1 - first] / tp1; ++pp1) {
            if (n[first] % (tp0 * pp0) || n[1 - first] % (tp1 * pp1)) continue;
            MixedConfig c;
            c.seq_len = s.seq_len;
            c.global_batch = s.global_batch;
            c.segments = {{first, tp0, n[first] / tp0 / pp0, pp0},
                          {1 - first, tp1, n[1 - first] / tp1 / pp1, pp1}};
            for (std::int64_t b = 1; b <= s.global_batch; ++b)
              for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
                for (bool sp : {false, true})
                  for (int zero = 0; zero <= s.max_zero_stage; ++zero)
                    for (bool overlap : {false, true}) {
                      if (sp && tp0 == 1 && tp1 == 1) continue;
                      if (b / c.segments[0].dp > s.max_replica_microbatch ||
                          b / c.segments[1].dp > s.max_replica_microbatch)
                        continue;
                      c.samples_per_microbatch = b;
                      c.recompute = rc;
                      c.sequence_parallel = sp;
                      c.zero_stage = zero;
                      c.overlap_grad_reduce = overlap;
                      c.stage_layers.clear();
                      try {
                        m.check(c);
                      } catch (const Error&) {
                        continue;
                      }
                      const auto split = balance_mixed_stages(m, c);
                      if (!split) continue;
                      c.stage_layers = *split;
                      const MixedResult r = m.evaluate(c);
                      if (r.fits) best = std::min(best, r.iteration_time_s);
                    }
          }
  if (best == std::numeric_limits<double>::infinity()) {
    RC_ASSERT(got.top.empty());
  } else {
    RC_ASSERT(!got.top.empty());
    RC_ASSERT(std::abs(got.top[0].result.iteration_time_s - best) <= 1e-12 * best);
    for (std::size_t i = 1; i < got.top.size(); ++i)
      RC_ASSERT(got.top[i - 1].result.iteration_time_s <= got.top[i].result.iteration_time_s);
  }
}

}  // namespace
}  // namespace paraplan
