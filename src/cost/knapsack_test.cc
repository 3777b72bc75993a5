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
                      static_cast<double>(*rc::gen::inRange(0, 20)) / 7.0 *
                          (*rc::gen::inRange(0, 3) == 0 ? 1e-5 : 1.0)});
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

// The covering form against every subset, with and without cutoffs; integer-valued costs make
// many ties and equal ratios.
RC_GTEST_PROP(CoverKnapsack, EqualsExhaustiveSearch, ()) {
  const int n = *rc::gen::inRange(0, 11);
  std::vector<CoverItem> items(n);
  // Some costs five orders of magnitude below the others (Piper's BERT: an embedding's 1e-7 s
  // beside layers' 1e-3 s): prefix sums lose their low bits.
  for (auto& x : items)
    x = {static_cast<double>(*rc::gen::inRange(1, 30)),
         static_cast<double>(*rc::gen::inRange(0, 12)) / 3.0 *
             (*rc::gen::inRange(0, 3) == 0 ? 1e-5 : 1.0)};
  const double need = *rc::gen::inRange(-5, 120);
  RC_TAG(n);
  double expected = std::numeric_limits<double>::infinity();
  for (int mask = 0; mask < (1 << n); ++mask) {
    double w = 0, c = 0;
    for (int i = 0; i < n; ++i)
      if (mask >> i & 1) w += items[i].weight, c += items[i].cost;
    if (w >= need) expected = std::min(expected, c);
  }
  CoverScratch scratch;
  scratch.items = items;
  const CoverResult r = min_cost_cover(scratch, need);
  RC_ASSERT(r.exact);
  if (!std::isfinite(expected)) {
    RC_ASSERT(!std::isfinite(r.cost));
    return;
  }
  RC_ASSERT(std::fabs(r.cost - expected) <= 1e-9 * std::max(1.0, expected));
  const double cutoff = static_cast<double>(*rc::gen::inRange(0, 60)) / 3.0;
  scratch.items = items;
  const CoverResult cut = min_cost_cover(scratch, need, cutoff);
  if (expected < cutoff - 1e-9) {  // (sums in another order may round across the cutoff)
    RC_ASSERT(cut.exact);
    RC_ASSERT(std::fabs(cut.cost - expected) <= 1e-9 * std::max(1.0, expected));
  } else {
    RC_ASSERT(cut.cost >= cutoff - 1e-12);
    RC_ASSERT(cut.cost <= expected + 1e-9 * std::max(1.0, expected));
  }
}

// A cheap upgrade five orders of magnitude below the others: its value taken from prefix sums
// once overstated the incumbent and pruned every state (a feasible stage was called infeasible).
TEST(Knapsack, SmallValuesBesideLargeOnesKeepTheOptimum) {
  const double y = 4;
  std::vector<std::vector<KnapsackOption>> items = {
      {{15728640 * y + 1029263360, 1.00825e-07}, {10485760 * y + 1044992000, 1.34433e-07}}};
  for (int i = 0; i < 4; ++i)
    items.push_back(
        {{267386880 * y + 629145600, 0.00330382}, {10485760 * y + 896532480, 0.00440509}});
  const KnapsackResult r = solve_knapsack(items, 4933895168.0);
  ASSERT_TRUE(r.exact);
  EXPECT_NEAR(r.cost, 1.00825e-07 + 4 * 0.00440509, 1e-15);
  EXPECT_EQ(r.choice, (std::vector<int>{0, 1, 1, 1, 1}));
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
