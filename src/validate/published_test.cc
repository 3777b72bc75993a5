// Published MoE throughputs (data/moe), never fitted: the shipped H100 calibration prices each
// within 15 % and says it fits, as it ran.
#include "validate/published.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/error.h"

namespace paraplan::validate {
namespace {

TEST(Published, MoeRunsWithinFifteenPercentAndFit) {
  const auto rows = score_published(
      io::read_published_runs(std::string(PARAPLAN_DATA) + "/moe/published_moe.json"));
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_LT(std::abs(r.error()), 0.15) << r.run.name << ": " << r.predicted.iteration_time_s
                                         << " s against " << r.measured_s << " s";
    EXPECT_TRUE(r.predicted.fits) << r.run.name;
  }
  EXPECT_NEAR(rows[0].measured_s, 256.0 * 4096 / (5643.0 * 64), 1e-9);
}

// torchtitan's and IBM's FSDP and HSDP runs on A100 and NeMo's FP8 runs on H100
// (data/published-2024), never fitted: each within 15 %, together within 8 %, and each fits, as
// it ran (torchtitan's per-op selective checkpointing of Llama 2 70B at 4,096 tokens was "does
// not fit" when priced as Megatron's selective recomputation; its layer-wise checkpointing of
// every second block is Llama 3 8B's TTO-02, 16 of 32 blocks recomputed).
TEST(Published, TorchtitanFsdpAndNemoFp8RunsWithinTheirTargetsAndFit) {
  const auto rows = score_published(
      io::read_published_runs(std::string(PARAPLAN_DATA) + "/published-2024/published_2024.json"));
  ASSERT_EQ(rows.size(), 18u);
  double sum = 0;
  std::vector<const ScoredPublished*> b200;
  const ScoredPublished* layer_wise = nullptr;
  for (const auto& r : rows) {
    if (r.run.name.rfind("TTO-02", 0) == 0) layer_wise = &r;
    if (r.run.cluster == "dgx-b200") {
      b200.push_back(&r);
      continue;
    }
    EXPECT_LT(std::abs(r.error()), 0.15) << r.run.name;
    EXPECT_TRUE(r.predicted.fits) << r.run.name;
    sum += std::abs(r.error());
  }
  ASSERT_EQ(b200.size(), 2u);
  EXPECT_LT(sum / static_cast<double>(rows.size() - b200.size()), 0.08);
  // TTO-02: torchtitan's layer-wise checkpointing at its default period, not its per-op policy.
  ASSERT_NE(layer_wise, nullptr);
  EXPECT_EQ(layer_wise->run.config.recompute_layers, 16);
  EXPECT_LT(std::abs(layer_wise->error()), 0.08) << layer_wise->run.name;
  // DGX B200 with MXFP8 (Megatron-Bridge), on the preset's published figures and the Hopper
  // transfer: Qwen3-30B-A3B on 8 within 10 %; Qwen3-235B-A22B on 256 still 25 % fast (its layer
  // split is the recipe's, 11,12,…,12,11; the per-layer gap needs a measurement to place).
  EXPECT_LT(std::abs(b200[0]->error()), 0.10) << b200[0]->run.name;
  EXPECT_LT(std::abs(b200[1]->error()), 0.30) << b200[1]->run.name;
  EXPECT_TRUE(b200[0]->predicted.fits && b200[1]->predicted.fits);
}

TEST(Published, UnknownModelOrClusterNamesTheEntry) {
  auto runs = io::read_published_runs(std::string(PARAPLAN_DATA) + "/moe/published_moe.json");
  runs.resize(1);
  runs[0].model_name = "mixtral-9x9b";
  try {
    score_published(runs);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/runs/0/model"), std::string::npos) << e.what();
  }
  runs[0].model_name = "mixtral-8x7b";
  runs[0].cluster = "dgx-z100";
  EXPECT_THROW(score_published(runs), Error);
}

}  // namespace
}  // namespace paraplan::validate
