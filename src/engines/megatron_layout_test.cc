// Megatron-Core's splits without a layout, against get_num_layers_to_build replayed layer by
// layer (transformer_block.py at d98e8a6), and its optimizer dtypes.
#include "engines/megatron_layout.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace paraplan::engines {
namespace {

// Megatron-Core's get_num_layers_to_build for (pp rank, vp stage), transcribed; -1 where it
// asserts.
int layers_to_build(std::int64_t layers, int pp, int vpp, int first, int last, bool embedding,
                    bool loss, int rank, int vp) {
  std::int64_t per_rank = 0;
  if (first >= 0 || last >= 0) {
    if (embedding || loss) return -1;
    // TransformerConfig: each given count above 0, no more given than there are stages.
    if (first == 0 || last == 0 || (first >= 0) + (last >= 0) > pp) return -1;
    std::int64_t rest = layers;
    int left = pp;
    if (first >= 0) rest -= first, --left;
    if (last >= 0) rest -= last, --left;
    if (left > 0) {
      if (rest < 0 || rest % left) return -1;
      per_rank = rest / left;
    } else if (rest != 0) {
      return -1;  // every layer on the first and last stages, or the layers are not all built
    }
    if (rank == 0 && first >= 0) per_rank = first;
    if (rank == pp - 1 && last >= 0) per_rank = last;
  } else {
    const std::int64_t counted = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
    if (counted % pp) return -1;
    per_rank = counted / pp;
  }
  std::int64_t build = per_rank;
  if (vpp > 1) {
    if (per_rank % vpp) return -1;
    build = per_rank / vpp;
  }
  if (embedding && rank == 0 && vp == 0) --build;
  if (loss && rank == pp - 1 && vp == vpp - 1) --build;
  return build < 0 ? -1 : static_cast<int>(build);
}

TEST(MegatronLayout, UnevenSplitIsMegatronCoresLayerByLayer) {
  // Llama 3.1 405B in Bridge's recipe: 126 layers, the embedding and the loss counted, pp 8 ×
  // vpp 2: each virtual stage 8, the first and the last 7.
  TrainingConfig t;
  t.pp = 8, t.vpp = 2;
  std::string error;
  ASSERT_TRUE(uneven_split(126, -1, -1, true, true, t, error)) << error;
  EXPECT_EQ(t.stage_layers, (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  EXPECT_EQ(t.virtual_stage_layers.front(), 7);
  EXPECT_EQ(t.virtual_stage_layers.back(), 7);
  // Brute-force twin: random small splits, the same layers per virtual stage as the replay, or
  // both refuse.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    const int pp = 1 + static_cast<int>(rng() % 5), vpp = 1 + static_cast<int>(rng() % 3);
    const std::int64_t layers = 1 + rng() % 24;
    const int mode = static_cast<int>(rng() % 3);
    const int first = mode == 0 && rng() % 2 ? static_cast<int>(rng() % 8) : -1;
    const int last = mode == 0 && rng() % 2 ? static_cast<int>(rng() % 8) : -1;
    const bool embedding = mode == 1 || (mode == 2 && rng() % 2);
    const bool loss = mode == 2 || (mode == 1 && rng() % 2);
    TrainingConfig c;
    c.pp = pp, c.vpp = vpp;
    std::vector<int> want(static_cast<std::size_t>(pp * vpp));
    bool valid = !(first < 0 && last < 0 && !embedding && !loss);
    for (int v = 0; v < vpp && valid; ++v)
      for (int r = 0; r < pp && valid; ++r) {
        const int n = layers_to_build(layers, pp, vpp, first, last, embedding, loss, r, v);
        if (n < 0) valid = false;
        want[static_cast<std::size_t>(v * pp + r)] = n;
      }
    if (!valid) continue;
    std::string why;
    const bool ok = uneven_split(layers, first, last, embedding, loss, c, why);
    const std::string what = ::testing::PrintToString(
        std::vector<long long>{layers, pp, vpp, first, last, embedding ? 1 : 0, loss ? 1 : 0});
    ASSERT_TRUE(ok) << what << " " << why;
    const std::vector<int> got = c.virtual_stage_layers.empty()
                                     ? virtual_split(c, static_cast<int>(layers))
                                     : c.virtual_stage_layers;
    EXPECT_EQ(got, want) << what;
    EXPECT_EQ(std::accumulate(c.stage_layers.begin(), c.stage_layers.end(), 0LL), layers) << what;
  }
  // Refused as Megatron-Core asserts.
  t.pp = 4, t.vpp = 1;
  EXPECT_FALSE(uneven_split(32, 6, -1, false, false, t, error));  // 26 over 3 stages
  EXPECT_FALSE(uneven_split(32, -1, -1, true, false, t, error));  // 33 over 4 stages
  EXPECT_FALSE(uneven_split(32, 8, -1, true, false, t, error));   // both ways at once
}

TEST(MegatronLayout, OptimizerDtypesAreMegatronCores) {
  TrainingConfig t;
  OptimizerDtypes d;
  EXPECT_TRUE(read_optimizer_dtypes(d, t).empty());
  EXPECT_EQ(t.optimizer_moments, OptimizerMoments::kFp32);
  EXPECT_FALSE(t.precision_aware_optimizer);
  d.precision_aware = true;  // with fp32 moments: the knob of its own
  EXPECT_TRUE(read_optimizer_dtypes(d, t).empty());
  EXPECT_TRUE(t.precision_aware_optimizer);
  d.precision_aware = false;
  t = TrainingConfig{};
  d.exp_avg = d.exp_avg_sq = "bf16";
  ASSERT_EQ(read_optimizer_dtypes(d, t).size(), 2u);  // without the precision-aware optimizer
  d.precision_aware = true;
  EXPECT_TRUE(read_optimizer_dtypes(d, t).empty());
  EXPECT_EQ(t.optimizer_moments, OptimizerMoments::kBf16);
  EXPECT_FALSE(t.precision_aware_optimizer);  // implied by the moments
  EXPECT_EQ(optimizer_dtype_name("torch.bfloat16"), "bf16");
  EXPECT_EQ(optimizer_dtype_name("torch.uint8"), "fp8");
  EXPECT_EQ(optimizer_dtype_name("torch.int4"), "");
}

}  // namespace
}  // namespace paraplan::engines
