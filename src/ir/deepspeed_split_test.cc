// deepspeed_split against its brute-force twin: DeepSpeed 38327e0's own partition_balanced
// (deepspeed/runtime/utils.py, "The Linear Partition Problem" by dynamic programming, ties to
// the later cut), replayed step by step over Megatron-DeepSpeed 4efb479's GPTModelPipe layer
// specs with partition_method "type:transformer" (the cast, the embedding, the transformer
// layers, the norm, the head, the cast back; only the transformer layers weigh 1).
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "ir/engine_rules.h"

namespace paraplan {
namespace {

// DeepSpeed's partition_balanced(weights, num_parts), statement for statement: the part bounds.
std::vector<int> partition_balanced(const std::vector<int>& weights, int parts) {
  const int n = static_cast<int>(weights.size()), m = parts;
  if (n <= m) {  // partition_uniform's trivial case
    std::vector<int> bounds(static_cast<std::size_t>(m) + 1);
    for (int p = 0; p <= m; ++p) bounds[static_cast<std::size_t>(p)] = std::min(p, n);
    return bounds;
  }
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> dp_max(n + 1, std::vector<double>(m + 1, inf)), dp_min = dp_max,
                                                                                   dp_cost = dp_max;
  std::vector<std::vector<int>> position(n + 1, std::vector<int>(m + 1, 0));
  std::vector<double> prefix(static_cast<std::size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weights[i];
  dp_max[0][0] = 0;
  dp_cost[0][0] = 0;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= std::min(i, m); ++j)
      for (int k = 0; k < i; ++k) {
        const double max_sum = std::max(dp_max[k][j - 1], prefix[i] - prefix[k]);
        const double min_sum = std::min(dp_min[k][j - 1], prefix[i] - prefix[k]);
        const double cost = max_sum - min_sum;
        if (dp_cost[i][j] >= cost) {
          dp_cost[i][j] = cost;
          dp_max[i][j] = max_sum;
          dp_min[i][j] = min_sum;
          position[i][j] = k;
        }
      }
  std::vector<int> bounds = {n};
  for (int i = m; i >= 1; --i) bounds.push_back(position[bounds.back()][i]);
  return {bounds.rbegin(), bounds.rend()};
}

// The transformer layers of each stage, as Megatron-DeepSpeed's pipeline builds them.
std::vector<int> megatron_deepspeed_split(int layers, int pp) {
  std::vector<int> weights = {0, 0};  // _to_float16, EmbeddingPipe
  weights.insert(weights.end(), static_cast<std::size_t>(layers), 1);
  weights.insert(weights.end(), {0, 0, 0});  // the final norm, the head, float16_to_fp32
  const std::vector<int> bounds = partition_balanced(weights, pp);
  std::vector<int> split;
  for (int p = 0; p < pp; ++p) {
    int count = 0;
    for (int i = bounds[p]; i < bounds[p + 1]; ++i) count += weights[i];
    split.push_back(count);
  }
  return split;
}

TEST(DeepSpeedSplit, IsDeepSpeedsOwnPartitionOfTheTransformerLayers) {
  for (int layers = 1; layers <= 96; ++layers)
    for (int pp = 1; pp <= std::min(layers, 32); ++pp)
      ASSERT_EQ(deepspeed_split(layers, pp), megatron_deepspeed_split(layers, pp))
          << layers << " layers over " << pp << " stages";
  // Llama 3 70B at pp 6: the first two stages hold 14 layers (the even split's middle-heavy
  // 13,14,14,13,13,13 is not what DeepSpeed runs).
  EXPECT_EQ(deepspeed_split(80, 6), (std::vector<int>{14, 14, 13, 13, 13, 13}));
}

TEST(DeepSpeedSplit, IsWhatMegatronDeepSpeedRunsAndOnlyThat) {
  const EngineRules& mds = engine_rules(Engine::kMegatronDeepSpeed);
  TrainingConfig t;
  t.stack = Stack::kDeepSpeed;
  t.pp = 6;
  t.dp = 8;
  apply_engine_split(mds, t, 80);
  EXPECT_EQ(t.stage_layers, (std::vector<int>{14, 14, 13, 13, 13, 13}));
  EXPECT_FALSE(rules::engine(mds, t, 80).has_value());
  t.stage_layers = even_stage_split(80, 6);
  const auto v = rules::engine(mds, t, 80);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->rule, "engine_even_stages");
  // Where the layers divide, the split stays implicit; other engines keep theirs.
  TrainingConfig even;
  even.pp = 5;
  apply_engine_split(mds, even, 80);
  EXPECT_TRUE(even.stage_layers.empty());
  TrainingConfig megatron;
  megatron.pp = 6;
  apply_engine_split(engine_rules(Engine::kMegatronLm), megatron, 80);
  EXPECT_TRUE(megatron.stage_layers.empty());
}

}  // namespace
}  // namespace paraplan
