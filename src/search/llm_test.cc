// The transformer planner against an independent enumeration, and its fixed knobs.
#include "search/llm.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan {
namespace {

AnalyticCostModel model_on(const std::string& name, const std::string& cluster, int devices) {
  return AnalyticCostModel(*zoo::llm_model(name), *zoo::cluster_preset(cluster, devices),
                           default_calibration(cluster == "dgx-a100" ? "A100" : "H100"));
}

// Brute-force twin: every (tp, pp, dp, micro-batch, recompute, sp, ZeRO 0/1) by plain loops.
TEST(LlmSearch, BestEqualsExhaustiveEnumeration) {
  for (auto [name, devices, batch] : {std::tuple{"gpt-1.7b", 16, 64}, std::tuple{"llama3-8b", 32, 128},
                                     std::tuple{"gpt-18.4b", 64, 256}}) {
    auto cost = model_on(name, "dgx-a100", devices);
    LlmSearchSettings s;
    s.devices = devices;
    s.global_batch = batch;
    s.top_k = 1;
    auto found = search_llm(cost, s);
    double best = 1e300;
    for (int tp = 1; tp <= devices; ++tp)
      for (int pp = 1; tp * pp <= devices; ++pp) {
        if (devices % (tp * pp)) continue;
        int dp = devices / (tp * pp);
        for (int b = 1; b <= batch; ++b)
          for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
            for (bool sp : {false, true})
              for (int zero : {0, 1}) {
                TrainingConfig t;
                t.global_batch = batch;
                t.micro_batch = b;
                t.tp = tp;
                t.pp = pp;
                t.dp = dp;
                t.recompute = rc;
                t.sequence_parallel = sp && tp > 1;
                t.zero_stage = zero;
                try {
                  auto r = cost.evaluate(t);
                  if (r.fits) best = std::min(best, r.iteration_time_s);
                } catch (const Error&) {
                }
              }
      }
    ASSERT_FALSE(found.top.empty()) << name;
    EXPECT_EQ(found.top[0].result.iteration_time_s, best) << name;
  }
}

TEST(LlmSearch, FixedKnobsAreKeptAndTopIsSorted) {
  auto cost = model_on("llama3-70b", "dgx-h100", 256);
  LlmSearchSettings s;
  s.devices = 256;
  s.global_batch = 512;
  s.seq_len = 4096;
  s.tp = 8;
  s.recompute = Recompute::kSelective;
  s.top_k = 10;
  auto r = search_llm(cost, s);
  ASSERT_FALSE(r.top.empty());
  for (std::size_t i = 0; i < r.top.size(); ++i) {
    EXPECT_EQ(r.top[i].config.tp, 8);
    EXPECT_EQ(r.top[i].config.recompute, Recompute::kSelective);
    EXPECT_TRUE(r.top[i].result.fits);
    if (i) {
      EXPECT_LE(r.top[i - 1].result.iteration_time_s, r.top[i].result.iteration_time_s);
    }
  }
  s.tp = 3;  // 64 heads are not divisible by 3
  EXPECT_THROW(search_llm(cost, s), Error);
}

}  // namespace
}  // namespace paraplan
