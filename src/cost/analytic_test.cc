// The analytic transformer cost model: the knob rules and the memory model's directions (its
// accuracy against measured runs is checked in validate/).
#include "cost/analytic.h"

#include <cmath>

#include <gtest/gtest.h>

#include "ir/error.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan {
namespace {

AnalyticCostModel llama8b(int devices) {
  return AnalyticCostModel(*zoo::llm_model("llama3-8b"), *zoo::cluster_preset("dgx-h100", devices),
                           default_calibration("H100"));
}

TEST(Analytic, KnobRulesAreChecked) {
  auto cost = llama8b(16);
  auto expect_usage = [&](TrainingConfig t, const std::string& needle) {
    try {
      cost.evaluate(t);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  TrainingConfig t;
  t.global_batch = 64;
  t.tp = 3;
  expect_usage(t, "--tp 3");
  t.tp = 2;
  t.dp = 8;
  t.micro_batch = 3;
  expect_usage(t, "--batch 64");
  t.micro_batch = 1;
  t.dp = 16;
  expect_usage(t, "devices, but the cluster has 16");
  t.dp = 8;
  t.pp = 1;
  EXPECT_NO_THROW(cost.evaluate(t));
  t.sequence_parallel = true;
  t.seq_len = 2047;
  expect_usage(t, "--sequence-parallel");
}

TEST(Analytic, MemoryMovesTheRightWay) {
  auto cost = llama8b(64);
  TrainingConfig t;
  t.global_batch = 256;
  t.micro_batch = 2;
  t.tp = 2;
  t.pp = 2;
  t.dp = 16;
  t.seq_len = 4096;
  t.recompute = Recompute::kNone;
  auto none = cost.evaluate(t);
  t.recompute = Recompute::kSelective;
  auto selective = cost.evaluate(t);
  t.recompute = Recompute::kFull;
  auto full = cost.evaluate(t);
  EXPECT_GT(none.memory.activations_bytes, selective.memory.activations_bytes);
  EXPECT_GT(selective.memory.activations_bytes, full.memory.activations_bytes);
  EXPECT_LT(none.iteration_time_s, full.iteration_time_s);  // recomputation costs time
  t.zero_stage = 1;
  auto zero1 = cost.evaluate(t);
  EXPECT_NEAR(zero1.memory.optimizer_bytes * 16, full.memory.optimizer_bytes, 1e-6 * full.memory.optimizer_bytes);
  EXPECT_NEAR(full.tokens_per_s * full.iteration_time_s, 256.0 * 4096, 1e-6);
  EXPECT_GT(full.mfu, 0.05);
  EXPECT_LT(full.mfu, 1.0);
}

}  // namespace
}  // namespace paraplan
