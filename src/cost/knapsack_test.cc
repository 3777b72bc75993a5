// The exact knapsack against exhaustive search, with and without cutoffs.
#include "cost/knapsack.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <functional>

namespace paraplan {
namespace {

double exhaustive(const std::vector<std::vector<KnapsackOption>>& items, double capacity) {
  double best = std::numeric_limits<double>::infinity();
  std::function<void(std::size_t, double, double)> go = [&](std::size_t i, double w, double c) {
    if (i == items.size()) {
      if (w <= capacity) best = std::min(best, c);
      return;
    }
    for (const auto& o : items[i]) go(i + 1, w + o.weight, c + o.cost);
  };
  go(0, 0, 0);
  return best;
}

RC_GTEST_PROP(Knapsack, EqualsExhaustiveSearch, ()) {
  const int n = *rc::gen::inRange(0, 9);
  const int max_options = *rc::gen::inRange(1, 5);  // 1-2: the binary path; 3-4: general
  std::vector<std::vector<KnapsackOption>> items(n);
  for (auto& item : items) {
    int k = *rc::gen::inRange(1, max_options + 1);
    for (int o = 0; o < k; ++o)
      item.push_back({static_cast<double>(*rc::gen::inRange(0, 20)),
                      static_cast<double>(*rc::gen::inRange(0, 20)) / 7.0});
  }
  const double capacity = *rc::gen::inRange(0, 100);
  RC_TAG(max_options <= 2 ? "binary" : "general");
  const double expected = exhaustive(items, capacity);
  KnapsackResult r = solve_knapsack(items, capacity);
  RC_ASSERT(r.exact);
  if (!std::isfinite(expected)) {
    RC_ASSERT(!std::isfinite(r.cost));
    return;
  }
  RC_ASSERT(std::fabs(r.cost - expected) <= 1e-9 * std::max(1.0, expected));
  // The choice is feasible and attains the cost.
  double w = 0, c = 0;
  for (int i = 0; i < n; ++i) w += items[i][r.choice[i]].weight, c += items[i][r.choice[i]].cost;
  RC_ASSERT(w <= capacity);
  RC_ASSERT(std::fabs(c - r.cost) <= 1e-9 * std::max(1.0, c));
  // With a cutoff: exact below it, a lower bound >= cutoff otherwise.
  const double cutoff = static_cast<double>(*rc::gen::inRange(0, 60)) / 7.0;
  KnapsackResult cut = solve_knapsack(items, capacity, cutoff);
  if (expected < cutoff) {
    RC_ASSERT(std::fabs(cut.cost - expected) <= 1e-9 * std::max(1.0, expected));
  } else {
    RC_ASSERT(cut.cost >= cutoff - 1e-12);
    RC_ASSERT(cut.cost <= expected + 1e-9 * std::max(1.0, expected));
  }
}

TEST(Knapsack, BeatsPipersRatioGreedy) {
  // 10 bytes must be saved. Piper's greedy applies swaps by cost per byte saved and never
  // undoes one: it takes X (9 bytes for 4.5), then Y (10 bytes for 6) = 10.5. Y alone costs 6.
  std::vector<std::vector<KnapsackOption>> items = {
      {{10, 0}, {1, 4.5}},  // X
      {{10, 0}, {0, 6}},    // Y
      {{10, 0}, {9, 5}},    // Z
  };
  KnapsackResult r = solve_knapsack(items, 20);
  EXPECT_DOUBLE_EQ(r.cost, 6);
  EXPECT_EQ(r.choice, (std::vector<int>{0, 1, 0}));
}

}  // namespace
}  // namespace paraplan
