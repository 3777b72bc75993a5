// Pareto sets over (iteration time, peak memory per device, devices used), all minimised: what
// the planners return when asked for the frontier instead of one plan (TensorOpt's idea).
#pragma once

#include <algorithm>
#include <tuple>
#include <vector>

namespace paraplan {

struct Objectives {
  double time_s = 0;
  double peak_bytes = 0;
  int devices = 0;

  /// At most as large in every objective and smaller in one.
  bool dominates(const Objectives& o) const {
    const bool no_worse = time_s <= o.time_s && peak_bytes <= o.peak_bytes && devices <= o.devices;
    const bool better = time_s < o.time_s || peak_bytes < o.peak_bytes || devices < o.devices;
    return no_worse && better;
  }
  bool same(const Objectives& o) const {
    return time_s == o.time_s && peak_bytes == o.peak_bytes && devices == o.devices;
  }
};

/// The non-dominated items seen so far. `Before(a, b)` breaks ties between items with equal
/// objectives (the smaller is kept), so the set does not depend on insertion order.
template <typename T, typename Before>
class ParetoSet {
 public:
  explicit ParetoSet(Before before = Before{}) : before_(before) {}

  void offer(const Objectives& o, T item) {
    for (auto& [po, pi] : items_) {
      if (po.dominates(o)) return;
      if (po.same(o)) {
        if (before_(item, pi)) pi = std::move(item);
        return;
      }
    }
    items_.erase(std::remove_if(items_.begin(), items_.end(),
                                [&](const auto& p) { return o.dominates(p.first); }),
                 items_.end());
    items_.emplace_back(o, std::move(item));
  }

  /// Fastest first (ties: less memory, fewer devices).
  std::vector<std::pair<Objectives, T>> sorted() const {
    auto out = items_;
    std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
      return std::tie(a.first.time_s, a.first.peak_bytes, a.first.devices) <
             std::tie(b.first.time_s, b.first.peak_bytes, b.first.devices);
    });
    return out;
  }
  std::size_t size() const { return items_.size(); }

 private:
  Before before_;
  std::vector<std::pair<Objectives, T>> items_;
};

}  // namespace paraplan
