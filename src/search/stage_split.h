// The exact min-max split of a layer stack into pipeline stages, for any stage pricer whose stage
// time does not fall as the stage grows (the transformer planner's balance_stages; the mixed
// device planner, whose stages are priced by the model of their device type).
#pragma once

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

namespace paraplan {

/// The split of `layers` layers into exactly `stages` non-empty stages whose slowest stage is
/// fastest. `stage_time(stage, first, last)` prices stage `stage` (0-based) holding layers
/// [first, last]; it must not fall as `last` grows (+inf: does not fit). nullopt when no split
/// fits. A dynamic programme over (stages left, first layer) with a binary search for the end of
/// the first stage (its time rises with the end, the rest's optimum falls): O(stages · layers ·
/// log layers) calls. Ties: the end found by the binary search (deterministic).
template <class StageTime>
std::optional<std::vector<int>> min_max_split(int layers, int stages, const StageTime& stage_time) {
  const int n = layers, p = stages;
  if (p < 1 || n < p) return std::nullopt;
  const double inf = std::numeric_limits<double>::infinity();
  const auto at = [](auto& v, int i) -> auto& { return v[static_cast<std::size_t>(i)]; };
  // best[r][i]: the fastest slowest stage for layers i.. in the last r stages; end[r][i]: where
  // the first of them ends (exclusive).
  std::vector<std::vector<double>> best(static_cast<std::size_t>(p + 1),
                                        std::vector<double>(static_cast<std::size_t>(n + 1), inf));
  std::vector<std::vector<int>> end(best.size(),
                                    std::vector<int>(static_cast<std::size_t>(n + 1), -1));
  at(best[0], n) = 0;
  for (int r = 1; r <= p; ++r) {
    const int stage = p - r;
    const auto& rest = best[static_cast<std::size_t>(r - 1)];
    for (int i = (r == p ? 0 : stage); i + r <= n && (r < p || i == 0); ++i) {
      if (r == 1) {
        at(best[static_cast<std::size_t>(r)], i) = stage_time(stage, i, n - 1);
        at(end[static_cast<std::size_t>(r)], i) = n;
        continue;
      }
      const int lo_j = i + 1, hi_j = n - (r - 1);
      int lo = lo_j, hi = hi_j;
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (stage_time(stage, i, mid - 1) >= at(rest, mid))
          hi = mid;
        else
          lo = mid + 1;
      }
      double value = inf;
      int chosen = -1;
      for (int j : {lo - 1, lo}) {
        if (j < lo_j || j > hi_j) continue;
        const double v = std::max(stage_time(stage, i, j - 1), at(rest, j));
        if (v < value) {
          value = v;
          chosen = j;
        }
      }
      at(best[static_cast<std::size_t>(r)], i) = value;
      at(end[static_cast<std::size_t>(r)], i) = chosen;
    }
  }
  if (!(at(best[static_cast<std::size_t>(p)], 0) < inf)) return std::nullopt;
  std::vector<int> split;
  for (int r = p, i = 0; r >= 1; --r) {
    const int j = at(end[static_cast<std::size_t>(r)], i);
    split.push_back(j - i);
    i = j;
  }
  return split;
}

}  // namespace paraplan
