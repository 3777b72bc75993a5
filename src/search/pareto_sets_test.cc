// The intra-op frontier's Pareto-set pieces against their plain definitions: the pruned sum of two
// sets equals prune over every sum, the pruned union of many equals prune over their union (ties
// and provenance included, under any step, each set read at most once), and gallop finds what
// std::partition_point finds.
#include "search/pareto_sets.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <functional>
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

RC_GTEST_PROP(ParetoSets, TheUnionPrunedEqualsPruneOverTheUnion, ()) {
  std::mt19937 rng(*rc::gen::arbitrary<unsigned>());
  const double step = *rc::gen::element(0.0, 0.05, 0.3);
  std::uniform_int_distribution<int> count(0, 8), size(0, 10), value(0, 12), small(0, 2);
  // Sets of integer figures (ties across sets), tuples (small, set, point) so that ties of time
  // and memory are decided past the first position; corners exact or looser.
  const int n = count(rng);
  std::vector<std::vector<Point>> sets(n);
  std::vector<std::vector<int>> stores(n);
  std::vector<Offer> offers(n);
  std::vector<Point> expected;
  std::vector<int> expected_store;
  for (int s = 0; s < n; ++s) {
    for (int i = size(rng); i > 0; --i) {
      sets[s].push_back({static_cast<double>(value(rng)), static_cast<double>(value(rng)),
                         static_cast<std::int64_t>(stores[s].size())});
      stores[s].insert(stores[s].end(), {small(rng), s, i});
    }
    prune(sets[s], stores[s], kWidth, step);
    offers[s].offset = small(rng);
    offers[s].corner_time = offers[s].offset + (sets[s].empty() ? 0 : sets[s].front().time);
    offers[s].corner_memory = sets[s].empty() ? 0 : sets[s].back().memory;
    offers[s].corner_time -= small(rng);
    offers[s].corner_memory -= small(rng);
    for (const Point& p : sets[s]) {
      expected.push_back(
          {p.time + offers[s].offset, p.memory, static_cast<std::int64_t>(expected_store.size())});
      expected_store.insert(expected_store.end(), stores[s].begin() + p.prov,
                            stores[s].begin() + p.prov + kWidth);
    }
  }
  prune(expected, expected_store, kWidth, step);

  std::vector<int> reads(n, 0);
  const std::function<View(int)> fetch = [&](int s) {
    ++reads[s];
    return View{sets[s].data(), sets[s].data() + sets[s].size(), stores[s].data()};
  };
  UnionPruned merge;
  std::vector<Point> got;
  std::vector<const int*> tuples;
  merge.run(offers, fetch, kWidth, step, got, tuples);
  for (int r : reads) RC_ASSERT(r <= 1);
  RC_ASSERT(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    RC_ASSERT(got[i].time == expected[i].time);
    RC_ASSERT(got[i].memory == expected[i].memory);
    for (int w = 0; w < kWidth; ++w)
      RC_ASSERT(tuples[got[i].prov][w] == expected_store[expected[i].prov + w]);
  }
}

RC_GTEST_PROP(ParetoSets, GallopFindsThePartitionPoint, ()) {
  const auto values = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 50));
  std::vector<int> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const int cut = *rc::gen::inRange(-1, 51);
  auto below = [cut](int v) { return v < cut; };
  for (std::size_t from = 0; from <= sorted.size(); ++from)
    RC_ASSERT(gallop(sorted.begin() + static_cast<std::ptrdiff_t>(from), sorted.end(), below) ==
              std::partition_point(sorted.begin() + static_cast<std::ptrdiff_t>(from), sorted.end(),
                                   below));
}

TEST(ParetoSets, TheCacheGivesBackWhatItKept) {
  CombinedCache cache(3, {4, 5}, 1e6);
  const std::vector<Point> points{{1, 9, 0}, {2, 5, 2}};
  const std::vector<int> tuples{7, 1, 8, 2};
  const std::int64_t at[] = {3, 4};
  View view;
  EXPECT_FALSE(cache.find(2, at, view));
  cache.make_room(2, 2);  // the pool keeps only what it has room for
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
