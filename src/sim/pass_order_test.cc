// The shared 1F1B order and dependency sweep, exhaustively on small sizes.
#include "sim/pass_order.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ir/error.h"

namespace paraplan::sim {
namespace {

TEST(OneFOneB, EveryUnitOnceEachWayWithTheInFlightCountOfItsWarmup) {
  for (int count = 0; count <= 12; ++count)
    for (int warmup = -1; warmup <= 14; ++warmup) {
      const std::vector<PassSlot> order = one_f_one_b(count, warmup);
      ASSERT_EQ(order.size(), 2u * static_cast<std::size_t>(count));
      int forwards = 0, backwards = 0, inflight = 0, most = 0;
      for (const PassSlot& s : order) {
        if (s.forward) {
          EXPECT_EQ(s.index, forwards++);  // in order
          most = std::max(most, ++inflight);
        } else {
          EXPECT_EQ(s.index, backwards++);
          EXPECT_LT(s.index, forwards);  // after its forward
          --inflight;
        }
      }
      EXPECT_EQ(forwards, count);
      EXPECT_EQ(backwards, count);
      // Warm-up forwards, then one more before the first backward: at most warmup + 1 in flight.
      EXPECT_EQ(most, std::min(std::clamp(warmup, 0, count) + 1, count))
          << "count " << count << " warmup " << warmup;
    }
}

TEST(PlaceInDependencyOrder, PlacesAcrossDevicesAndCallsADeadlockAnInternalError) {
  // Device 0's second pass needs device 1's first; device 1's first needs device 0's first.
  std::vector<std::pair<int, std::size_t>> placed;
  auto is_placed = [&](int d, std::size_t k) {
    return std::find(placed.begin(), placed.end(), std::make_pair(d, k)) != placed.end();
  };
  place_in_dependency_order({2, 1}, [&](int d, std::size_t k) {
    if (d == 0 && k == 1 && !is_placed(1, 0)) return false;
    if (d == 1 && !is_placed(0, 0)) return false;
    placed.emplace_back(d, k);
    return true;
  });
  const std::vector<std::pair<int, std::size_t>> expected = {{0, 0}, {1, 0}, {0, 1}};
  EXPECT_EQ(placed, expected);
  try {
    place_in_dependency_order({1, 1}, [](int, std::size_t) { return false; });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
}

}  // namespace
}  // namespace paraplan::sim
