// Test support: every split of a layer stack into contiguous non-empty stages (the brute-force
// twins of the stage-split searches enumerate them).
#pragma once

#include <functional>
#include <vector>

namespace paraplan::testing_support {

/// Calls visit(prefix + split) for every split of `total` layers into `parts` non-empty stages,
/// in lexicographic order.
inline void compositions(int total, int parts, std::vector<int>& prefix,
                         const std::function<void(const std::vector<int>&)>& visit) {
  if (parts == 1) {
    prefix.push_back(total);
    visit(prefix);
    prefix.pop_back();
    return;
  }
  for (int first = 1; first <= total - (parts - 1); ++first) {
    prefix.push_back(first);
    compositions(total - first, parts - 1, prefix, visit);
    prefix.pop_back();
  }
}

}  // namespace paraplan::testing_support
