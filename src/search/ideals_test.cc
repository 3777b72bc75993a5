// The ideal lattice against its brute-force twin: every subset of a small random DAG's layers
// that is successor-closed, numbered by size then by bit pattern, each grown once in the
// spanning tree from the set without its smallest layer free of predecessors; pair counts.
#include "search/ideals.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/error.h"

namespace paraplan {
namespace {

Model random_ideal_dag(int n) {
  Model m;
  for (int v = 0; v < n; ++v) m.layers.push_back(Layer{v, "", {}, 0, {}});
  for (int v = 0; v < n; ++v)
    for (int w = v + 1; w < n; ++w)
      if (*rc::gen::inRange(0, 4) == 0) m.edges.push_back({v, w, 1.0});
  m.index();
  return m;
}

RC_GTEST_PROP(IdealLattice, EqualsEverySuccessorClosedSubset, ()) {
  const int n = *rc::gen::inRange(1, 11);
  const Model m = random_ideal_dag(n);
  std::vector<std::uint32_t> closed;  // brute force, ordered by size then by bits
  for (std::uint32_t s = 0; s < (1U << n); ++s) {
    bool ok = true;
    for (const Edge& e : m.edges)
      if ((s >> e.from & 1U) && !(s >> e.to & 1U)) ok = false;
    if (ok) closed.push_back(s);
  }
  std::stable_sort(closed.begin(), closed.end(), [](std::uint32_t a, std::uint32_t b) {
    return __builtin_popcount(a) < __builtin_popcount(b);
  });
  const IdealLattice lat = IdealLattice::build(m, 1'000'000);
  RC_ASSERT(lat.count() == static_cast<int>(closed.size()));
  const auto bits = [&](int id) {
    std::uint32_t s = 0;
    for (int v = 0; v < n; ++v) s |= static_cast<std::uint32_t>(lat.contains(id, v)) << v;
    return s;
  };
  std::vector<int> grown(closed.size(), 0);
  std::uint64_t pairs = 0;
  for (int id = 0; id < lat.count(); ++id) {
    RC_ASSERT(bits(id) == closed[static_cast<std::size_t>(id)]);
    RC_ASSERT(lat.size_of(id) == __builtin_popcount(bits(id)));
    for (std::uint32_t j : closed) pairs += j != bits(id) && (j & ~bits(id)) == 0;
    int last = -1;
    for (const auto& [layer, child] : lat.children(id)) {
      RC_ASSERT(layer > last);  // ascending
      last = layer;
      RC_ASSERT(bits(child) == (bits(id) | 1U << layer));
      int smallest_free = -1;  // the child's smallest layer with no predecessor in it
      for (int v = 0; v < n && smallest_free < 0; ++v) {
        bool free = bits(child) >> v & 1U;
        for (const Edge& e : m.edges)
          if (e.to == v && (bits(child) >> e.from & 1U)) free = false;
        if (free) smallest_free = v;
      }
      RC_ASSERT(smallest_free == layer);
      ++grown[static_cast<std::size_t>(child)];
    }
  }
  for (std::size_t id = 1; id < grown.size(); ++id) RC_ASSERT(grown[id] == 1);
  RC_ASSERT(lat.pair_count() == pairs);
}

TEST(IdealLattice, RefusesPastTheLimitWithoutBuildingTheRest) {
  Model m;  // 40 independent layers: 2^40 ideals
  for (int v = 0; v < 40; ++v) m.layers.push_back(Layer{v, "", {}, 0, {}});
  m.index();
  try {
    IdealLattice::build(m, 1000);
    FAIL() << "no limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kLimit);
    EXPECT_NE(std::string(e.what()).find("more than 1000 successor-closed layer sets"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace paraplan
