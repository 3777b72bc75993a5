// (time, memory) Pareto sets whose points carry provenance tuples (where each came from), for the
// intra-op frontier's variable elimination: prune, the pruned sum of two sets, and the exact
// staircase an entry's candidates are checked against.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <unordered_map>
#include <utility>
#include <vector>

namespace paraplan::pareto {

// One point of a table entry; `prov` is where its provenance tuple starts in the table's store:
// the eliminated variable's configuration, then the point it took from each input message.
struct Point {
  double time = 0;
  double memory = 0;
  std::int64_t prov = 0;
};

// Sorts by (time, memory, provenance tuple) and keeps the points of strictly falling memory (with
// a step ε, falling by more than the fraction ε, and the leanest): the Pareto set, the same
// whatever order the points came in. The fastest and the leanest point are always kept, so the
// frontier's two ends are exact under any step.
void prune(std::vector<Point>& points, const std::vector<int>& store, int width, double step);

// prune(every a + b) for a in `from` and b in `set` (both pruned sets: time rising, memory
// falling strictly), the tuples' position 1 + k holding b, without forming the |from| × |set|
// sums: the points prune keeps are found one after the other, each the first (by time, memory,
// tuple) of those leaner than the last kept one allows. Each row a keeps a pointer to its first
// point lean enough; pointers only move forward. Equal to prune on the sums, ties included.
void sum_pruned(const std::vector<Point>& from, const std::vector<int>& from_store,
                const std::vector<Point>& set, int k, int width, double step,
                std::vector<Point>& out, std::vector<int>& out_store);

// The exact (time, memory) staircase of the points a table entry has so far: time ascending, memory
// strictly falling. A point it dominates strictly (as fast and as lean, better in one) is never
// kept by prune under any step, so leaving it out changes nothing.
class Staircase {
  struct Step {
    double time, memory;
  };

 public:
  void clear() { steps_.clear(); }
  bool dominates(double time, double memory) const {
    auto it = std::upper_bound(steps_.begin(), steps_.end(), time,
                               [](double t, const Step& s) { return t < s.time; });
    if (it == steps_.begin()) return false;
    --it;
    return it->memory <= memory && !(it->time == time && it->memory == memory);
  }
  // Walks points of rising time: dominated(t, m) for each in turn, without a search.
  class Walk {
   public:
    /// For points no faster than `from_time`.
    Walk(const Staircase& s, double from_time)
        : steps_(s.steps_),
          next_(static_cast<std::size_t>(
              std::upper_bound(steps_.begin(), steps_.end(), from_time,
                               [](double t, const Step& step) { return t < step.time; }) -
              steps_.begin())) {}
    bool dominated(double time, double memory) {
      // Leaner than every step: nothing dominates it (nor, on a set, the leaner points after it).
      if (steps_.empty() || memory < steps_.back().memory) return false;
      while (next_ < steps_.size() && steps_[next_].time <= time) ++next_;
      if (next_ == 0) return false;
      const Step& s = steps_[next_ - 1];
      by_memory_ = s.memory;
      return s.memory <= memory && !(s.time == time && s.memory == memory);
    }
    /// After dominated(t, m) said true: the memory of the step that dominates (t, m). On a set
    /// of rising time and falling memory, every later point above it is dominated by it too.
    double by_memory() const { return by_memory_; }

   private:
    const std::vector<Step>& steps_;
    std::size_t next_ = 0;
    double by_memory_ = 0;
  };
  void insert(double time, double memory) {
    auto after = std::upper_bound(steps_.begin(), steps_.end(), time,
                                  [](double t, const Step& s) { return t < s.time; });
    if (after != steps_.begin() && std::prev(after)->memory <= memory) return;
    auto from = std::lower_bound(steps_.begin(), steps_.end(), time,
                                 [](const Step& s, double t) { return s.time < t; });
    auto to = from;
    while (to != steps_.end() && to->memory >= memory) ++to;
    steps_.insert(steps_.erase(from, to), Step{time, memory});
  }

 private:
  std::vector<Step> steps_;
};

// Sets kept by (class, each input's entry), for the intra-op frontier: a class's set combined
// with every input depends on the class and the inputs' entries alone,
// and the same few recur across a table's entries (Transformer on 16 devices: 18.7 M
// combinations, 0.55 M distinct): kept by that key in one pool, up to a bound on the points held
// (then forgotten; the answer never depends on what is kept).
class CombinedCache {
 public:
  struct View {
    const Point* begin = nullptr;
    const Point* end = nullptr;
    const int* store = nullptr;  ///< the points' tuples (prov indexes it)
  };
  /// `radix`: how many entries each input has; `lookups`: about how many finds the table will
  /// make (a flat index is laid out only when not much larger).
  CombinedCache(int classes, std::vector<std::int64_t> radix, double lookups)
      : radix_(std::move(radix)) {
    // The key is mixed-radix over (class, each input's entry): a flat index when small, a hash
    // map when wide, no cache when too wide for 64 bits.
    double span = classes;
    for (std::int64_t r : radix_) span *= static_cast<double>(r);
    enabled_ = span < 9e18;
    if (span <= kFlatKeys && span <= 4 * lookups) flat_.assign(static_cast<std::size_t>(span), -1);
  }
  bool find(int group, const std::int64_t* ats, View& out) const {
    if (!enabled_) return false;
    const std::int64_t k = key(group, ats);
    std::int32_t at = -1;
    if (!flat_.empty()) {
      at = flat_[k];
    } else if (auto it = hashed_.find(k); it != hashed_.end()) {
      at = it->second;
    }
    if (at < 0) return false;
    out = view(spans_[at]);
    return true;
  }
  View keep(int group, const std::int64_t* ats, const std::vector<Point>& points,
            const std::vector<int>& tuples, int width) {
    if (!enabled_) return {points.data(), points.data() + points.size(), tuples.data()};
    if (points_.size() > kMaxPoints) forget();
    const std::int64_t k = key(group, ats);
    Span span{static_cast<std::int64_t>(points_.size()), static_cast<std::int64_t>(points.size())};
    for (const Point& p : points) {
      points_.push_back({p.time, p.memory, static_cast<std::int64_t>(store_.size())});
      store_.insert(store_.end(), tuples.begin() + p.prov, tuples.begin() + p.prov + width);
    }
    const auto at = static_cast<std::int32_t>(spans_.size());
    spans_.push_back(span);
    keys_.push_back(k);
    if (!flat_.empty())
      flat_[k] = at;
    else
      hashed_[k] = at;
    return view(span);
  }

 private:
  struct Span {
    std::int64_t first = 0, count = 0;
  };
  static constexpr std::size_t kMaxPoints = std::size_t{1} << 20;
  static constexpr double kFlatKeys = 1 << 22;
  std::int64_t key(int group, const std::int64_t* ats) const {
    std::int64_t k = group;
    for (std::size_t i = 0; i < radix_.size(); ++i) k = k * radix_[i] + ats[i];
    return k;
  }
  View view(const Span& s) const {
    return {points_.data() + s.first, points_.data() + s.first + s.count, store_.data()};
  }
  void forget() {
    if (!flat_.empty())
      for (std::int64_t k : keys_) flat_[k] = -1;
    hashed_.clear();
    keys_.clear();
    spans_.clear();
    points_.clear();
    store_.clear();
  }
  std::vector<std::int64_t> radix_;
  bool enabled_ = true;
  std::vector<std::int32_t> flat_;
  std::unordered_map<std::int64_t, std::int32_t> hashed_;
  std::vector<std::int64_t> keys_;
  std::vector<Span> spans_;
  std::vector<Point> points_;
  std::vector<int> store_;
};

}  // namespace paraplan::pareto
