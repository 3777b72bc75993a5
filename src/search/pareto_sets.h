// (time, memory) Pareto sets whose points carry provenance tuples (where each came from), for the
// intra-op frontier's variable elimination: prune, the pruned sum of two sets, the pruned union
// of many sets read only where they can contribute, and the cache of combined sets.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
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

// A pruned set held elsewhere: its points (time rising, memory falling strictly) and the store
// their `prov` indexes.
struct View {
  const Point* begin = nullptr;
  const Point* end = nullptr;
  const int* store = nullptr;
};

// A set offered to UnionPruned before it is read: lower bounds on its points' times (with the
// offset) and memories, and the offset its points' times take.
struct Offer {
  double corner_time = 0, corner_memory = 0, offset = 0;
};

// prune(the union of several pruned sets, each point's time plus its set's offset), without
// forming the union: the points prune keeps are taken one after the other, each the first (by
// time, memory, tuple) of the points leaner than the last kept one allows, that is the first of
// the sets' first such points; last, prune's leanest point if the steps passed it. A set is read
// only when its corner is lean enough and no slower than the best point found (a table entry's
// classes mostly are not: Transformer on 16 devices reads 30 of 65). Equal to prune on the union,
// ties included.
class UnionPruned {
 public:
  /// fetch(i): set i, called at most once per set and run; its view must stay valid until run
  /// returns. out: the points kept, fastest first, each `prov` indexing `tuples` (pointers into
  /// the fetched sets' stores).
  void run(const std::vector<Offer>& offers, const std::function<View(int)>& fetch, int width,
           double step, std::vector<Point>& out, std::vector<const int*>& tuples);

 private:
  struct Cursor {
    double time = 0;  ///< of `at`, with the set's offset
    int set = 0;
    const Point* at = nullptr;
  };
  const View& read(int set);
  const std::vector<Offer>* offers_ = nullptr;
  const std::function<View(int)>* fetch_ = nullptr;
  std::vector<View> views_;
  std::vector<char> read_;
  std::vector<Cursor> cursors_;  ///< the sets read with a point lean enough
  std::vector<int> waiting_;     ///< the sets not read yet
};

// std::partition_point for a partition point expected near `first`: probes 1, 2, 4, ... ahead,
// then searches the last gap (O(log distance) rather than O(log size)).
template <class It, class Pred>
It gallop(It first, It last, Pred pred) {
  std::ptrdiff_t step = 1;
  while (first != last && pred(*first)) {
    if (last - first <= step) return std::partition_point(first + 1, last, pred);
    It probe = first + step;
    if (!pred(*probe)) return std::partition_point(first + 1, probe, pred);
    first = probe + 1;
    step *= 2;
  }
  return first;
}

// Sets kept by (class, each input's entry), for the intra-op frontier: a class's set combined
// with every input depends on the class and the inputs' entries alone,
// and the same few recur across a table's entries (Transformer on 16 devices: 18.7 M
// combinations, 0.55 M distinct): kept by that key in one pool, up to a bound on the points held
// (then forgotten; the answer never depends on what is kept).
class CombinedCache {
 public:
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
  /// Keeps a copy of `points` (tuples of `width` ints in `tuples`) under (group, ats) when the
  /// pool has room, and returns a view of the copy; else a view of the caller's own vectors. The
  /// pool never moves between two calls of make_room, so every view stays valid until then.
  View keep(int group, const std::int64_t* ats, const std::vector<Point>& points,
            const std::vector<int>& tuples, int width) {
    const std::size_t n = points.size(), ints = n * static_cast<std::size_t>(width);
    if (!enabled_ || points_.size() + n > points_.capacity() ||
        store_.size() + ints > store_.capacity())
      return {points.data(), points.data() + points.size(), tuples.data()};
    const std::int64_t k = key(group, ats);
    Span span{static_cast<std::int64_t>(points_.size()), static_cast<std::int64_t>(n)};
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
  /// Before a table entry: room for `points` more points of tuples `width` wide (the pool grows
  /// up to its bound, then forgets what it kept); views given before are invalid after.
  void make_room(std::size_t points, int width) {
    if (!enabled_ || points_.capacity() - points_.size() >= points) return;
    if (points_.capacity() >= kMaxPoints) forget();
    const std::size_t capacity =
        std::max(points, std::min(kMaxPoints, 2 * points_.capacity() + points));
    points_.reserve(capacity);
    store_.reserve(capacity * static_cast<std::size_t>(width));
  }

 private:
  struct Span {
    std::int64_t first = 0, count = 0;
  };
  static constexpr std::size_t kMaxPoints = std::size_t{1} << 18;
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
