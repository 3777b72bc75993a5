// The intra-op frontier's Pareto-set pieces against their plain definitions: the pruned sum of two
// sets equals prune over every sum (ties and provenance included, under any step), and the
// staircase's dominance equals a scan over the points it was given.
#include "search/pareto_sets.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <random>
#include <vector>

namespace paraplan::pareto {
namespace {

constexpr int kWidth = 3;  // tuple: (own configuration, from input 0, from input 1)

// A pruned random set: integer times and memories (ties happen), tuples with distinct first
// positions, position `k` of each tuple already written when `k` > 1.
void random_set(std::mt19937& rng, int k, std::vector<Point>& points, std::vector<int>& store,
                double step) {
  std::uniform_int_distribution<int> size(1, 12), value(0, 20);
  const int n = size(rng);
  points.clear();
  store.clear();
  for (int i = 0; i < n; ++i) {
    points.push_back({static_cast<double>(value(rng)), static_cast<double>(value(rng)),
                      static_cast<std::int64_t>(store.size())});
    store.push_back(i);
    for (int w = 1; w < kWidth; ++w) store.push_back(w < 1 + k ? value(rng) : -1);
  }
  prune(points, store, kWidth, step);
}

RC_GTEST_PROP(ParetoSets, TheSumPrunedEqualsPruneOverEverySum, ()) {
  std::mt19937 rng(*rc::gen::arbitrary<unsigned>());
  const double step = *rc::gen::element(0.0, 0.05, 0.3);
  const int k = *rc::gen::inRange(0, 2);  // the input the set comes from
  std::vector<Point> from, set;
  std::vector<int> from_store, set_store;
  random_set(rng, k, from, from_store, step);
  random_set(rng, 0, set, set_store, step);

  std::vector<Point> expected;
  std::vector<int> expected_store;
  for (const Point& a : from)
    for (std::size_t b = 0; b < set.size(); ++b) {
      const auto at = static_cast<std::int64_t>(expected_store.size());
      expected_store.insert(expected_store.end(), from_store.begin() + a.prov,
                            from_store.begin() + a.prov + kWidth);
      expected_store[at + 1 + k] = static_cast<int>(b);
      expected.push_back({a.time + set[b].time, a.memory + set[b].memory, at});
    }
  prune(expected, expected_store, kWidth, step);

  std::vector<Point> got;
  std::vector<int> got_store;
  sum_pruned(from, from_store, set, k, kWidth, step, got, got_store);
  RC_ASSERT(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    RC_ASSERT(got[i].time == expected[i].time);
    RC_ASSERT(got[i].memory == expected[i].memory);
    for (int w = 0; w < kWidth; ++w)
      RC_ASSERT(got_store[got[i].prov + w] == expected_store[expected[i].prov + w]);
  }
}

RC_GTEST_PROP(ParetoSets, TheStaircaseDominatesWhatAScanDoes, ()) {
  std::mt19937 rng(*rc::gen::arbitrary<unsigned>());
  std::uniform_int_distribution<int> value(0, 12), count(0, 15);
  struct P {
    double time, memory;
  };
  std::vector<P> given;
  Staircase staircase;
  for (int i = count(rng); i > 0; --i) {
    given.push_back({static_cast<double>(value(rng)), static_cast<double>(value(rng))});
    staircase.insert(given.back().time, given.back().memory);
  }
  auto scan = [&](double t, double m) {
    for (const P& p : given)
      if (p.time <= t && p.memory <= m && !(p.time == t && p.memory == m)) return true;
    return false;
  };
  // Point by point, and walking a set of rising time from its first point's time.
  std::vector<P> walked;
  for (int t = 0; t <= 13; ++t) {
    for (int m = 0; m <= 13; ++m) RC_ASSERT(staircase.dominates(t, m) == scan(t, m));
    walked.push_back({static_cast<double>(t), static_cast<double>(value(rng))});
  }
  Staircase::Walk walk(staircase, walked.front().time);
  for (const P& p : walked) RC_ASSERT(walk.dominated(p.time, p.memory) == scan(p.time, p.memory));
}

TEST(ParetoSets, TheCacheGivesBackWhatItKept) {
  CombinedCache cache(3, {4, 5}, 1e6);
  const std::vector<Point> points{{1, 9, 0}, {2, 5, 2}};
  const std::vector<int> tuples{7, 1, 8, 2};
  const std::int64_t at[] = {3, 4};
  CombinedCache::View view;
  EXPECT_FALSE(cache.find(2, at, view));
  cache.keep(2, at, points, tuples, 2);
  ASSERT_TRUE(cache.find(2, at, view));
  ASSERT_EQ(view.end - view.begin, 2);
  EXPECT_EQ(view.begin[1].time, 2);
  EXPECT_EQ(view.store[view.begin[1].prov], 8);
  EXPECT_EQ(view.store[view.begin[1].prov + 1], 2);
  const std::int64_t other[] = {3, 3};
  EXPECT_FALSE(cache.find(2, other, view));
}

}  // namespace
}  // namespace paraplan::pareto
