#include "search/pareto_sets.h"

#include <limits>
#include <utility>

namespace paraplan::pareto {

// Sorts by (time, memory, provenance tuple) and keeps the points of strictly falling memory (with
// a step ε, falling by more than the fraction ε, and the leanest): the Pareto set, the same
// whatever order the points came in. The fastest and the leanest point are always kept, so the
// frontier's two ends are exact under any step.
void prune(std::vector<Point>& points, const std::vector<int>& store, int width, double step) {
  std::sort(points.begin(), points.end(), [&](const Point& a, const Point& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.memory != b.memory) return a.memory < b.memory;
    return std::lexicographical_compare(store.begin() + a.prov, store.begin() + a.prov + width,
                                        store.begin() + b.prov, store.begin() + b.prov + width);
  });
  std::size_t kept = 0, leanest = 0;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].memory < points[leanest].memory) leanest = i;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (kept == 0 || points[i].memory < points[kept - 1].memory * (1 - step) ||
        (i == leanest && points[i].memory < points[kept - 1].memory))
      points[kept++] = points[i];
  points.resize(kept);
}

// prune(every a + b) for a in `from` and b in `set` (both pruned sets: time rising, memory
// falling strictly), the tuples' position 1 + k holding b, without forming the |from| × |set|
// sums: the points prune keeps are found one after the other, each the first (by time, memory,
// tuple) of those leaner than the last kept one allows. Each row a keeps a pointer to its first
// point lean enough; pointers only move forward. Equal to prune on the sums, ties included.
void sum_pruned(const std::vector<Point>& from, const std::vector<int>& from_store,
                const std::vector<Point>& set, int k, int width, double step,
                std::vector<Point>& out, std::vector<int>& out_store) {
  out.clear();
  out_store.clear();
  const int rows = static_cast<int>(from.size()), cols = static_cast<int>(set.size());
  if (rows == 0 || cols == 0) return;
  // Tuples of different rows differ before position 1 + k, so rows order as their tuples do
  // (compared only on the rare exact ties of time and memory).
  thread_local std::vector<int> next;
  auto row_before = [&](int a, int b) {
    const auto pa = from_store.begin() + from[a].prov, pb = from_store.begin() + from[b].prov;
    return std::lexicographical_compare(pa, pa + width, pb, pb + width);
  };
  auto time = [&](int i, int j) { return from[i].time + set[j].time; };
  auto memory = [&](int i, int j) { return from[i].memory + set[j].memory; };
  auto before = [&](int i, int j, int i2, int j2) {  // prune's sort order
    const double t = time(i, j), t2 = time(i2, j2);
    if (t != t2) return t < t2;
    const double m = memory(i, j), m2 = memory(i2, j2);
    if (m != m2) return m < m2;
    return i != i2 ? row_before(i, i2) : j < j2;
  };
  auto emit = [&](int i, int j) {
    const auto at = static_cast<std::int64_t>(out_store.size());
    out_store.insert(out_store.end(), from_store.begin() + from[i].prov,
                     from_store.begin() + from[i].prov + width);
    out_store[at + 1 + k] = j;
    out.push_back({time(i, j), memory(i, j), at});
  };
  // Each live row's candidate (its first by prune's order among the points lean enough) with
  // its figures; recomputed only when the limit passes it, the row dropped when none is left.
  struct Row {
    int i, j, pick;
    double time, memory;
  };
  thread_local std::vector<Row> live;
  live.clear();
  double limit = std::numeric_limits<double>::infinity();
  auto advance = [&](Row& r) {  // false: the row has no point lean enough
    while (r.j < cols && !(memory(r.i, r.j) < limit)) ++r.j;
    if (r.j == cols) return false;
    r.pick = r.j;  // its equal-time run's leanest
    for (int j2 = r.j + 1; j2 < cols && time(r.i, j2) == time(r.i, r.j); ++j2)
      if (memory(r.i, j2) < memory(r.i, r.pick)) r.pick = j2;
    r.time = time(r.i, r.pick);
    r.memory = memory(r.i, r.pick);
    return true;
  };
  for (int i = 0; i < rows; ++i) {
    Row r{i, 0, 0, 0, 0};
    if (advance(r)) live.push_back(r);
  }
  int last_i = -1, last_j = -1;
  while (!live.empty()) {
    std::size_t best = 0;
    for (std::size_t r = 1; r < live.size(); ++r) {
      const Row &a = live[r], &b = live[best];
      if (a.time != b.time       ? a.time < b.time
          : a.memory != b.memory ? a.memory < b.memory
                                 : row_before(a.i, b.i))
        best = r;
    }
    last_i = live[best].i;
    last_j = live[best].pick;
    emit(last_i, last_j);
    limit = live[best].memory * (1 - step);
    std::size_t kept = 0;
    for (Row& r : live)
      if (r.memory < limit || advance(r)) live[kept++] = r;
    live.resize(kept);
  }
  // The leanest point (the first of the least memory) is kept when leaner than the last kept.
  double least = memory(0, cols - 1);
  for (int i = 1; i < rows; ++i) least = std::min(least, memory(i, cols - 1));
  if (last_i < 0 || !(least < memory(last_i, last_j))) return;
  int lean_i = -1, lean_j = -1;
  for (int i = 0; i < rows; ++i)
    for (int j = cols - 1; j >= 0 && memory(i, j) == least; --j)
      if (lean_i < 0 || before(i, j, lean_i, lean_j)) lean_i = i, lean_j = j;
  emit(lean_i, lean_j);
}

const View& UnionPruned::read(int set) {
  if (!read_[set]) {
    read_[set] = 1;
    views_[set] = (*fetch_)(set);
  }
  return views_[set];
}

void UnionPruned::run(const std::vector<Offer>& offers, const std::function<View(int)>& fetch,
                      int width, double step, std::vector<Point>& out,
                      std::vector<const int*>& tuples) {
  out.clear();
  tuples.clear();
  offers_ = &offers;
  fetch_ = &fetch;
  const int sets = static_cast<int>(offers.size());
  views_.resize(sets);
  read_.assign(sets, 0);
  cursors_.clear();
  waiting_.resize(sets);
  for (int i = 0; i < sets; ++i) waiting_[i] = i;
  auto tuple = [&](const Cursor& c) { return views_[c.set].store + c.at->prov; };
  auto before = [&](const Cursor& a, const Cursor& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.at->memory != b.at->memory) return a.at->memory < b.at->memory;
    return std::lexicographical_compare(tuple(a), tuple(a) + width, tuple(b), tuple(b) + width);
  };
  auto keep = [&](const Cursor& c) {
    out.push_back({c.time, c.at->memory, static_cast<std::int64_t>(tuples.size())});
    tuples.push_back(tuple(c));
  };
  double limit = std::numeric_limits<double>::infinity();
  // Moves c to its set's first point lean enough; false when there is none.
  auto lean = [&](Cursor& c) {
    if (c.at->memory < limit) return true;
    const Point* end = views_[c.set].end;
    c.at = gallop(c.at + 1, end, [limit](const Point& p) { return !(p.memory < limit); });
    if (c.at == end) return false;
    c.time = c.at->time + offers[c.set].offset;
    return true;
  };
  for (;;) {
    int best = -1;
    for (std::size_t i = 0; i < cursors_.size();) {
      if (!lean(cursors_[i])) {
        cursors_[i] = cursors_.back();
        cursors_.pop_back();
        continue;
      }
      if (best < 0 || before(cursors_[i], cursors_[best])) best = static_cast<int>(i);
      ++i;
    }
    for (std::size_t i = 0; i < waiting_.size();) {
      const int s = waiting_[i];
      const Offer& o = offers[s];
      if (o.corner_memory < limit && best >= 0 && o.corner_time > cursors_[best].time) {
        ++i;  // not yet: all its points are slower than the best
        continue;
      }
      waiting_[i] = waiting_.back();
      waiting_.pop_back();
      if (!(o.corner_memory < limit)) continue;  // none of its points is lean enough
      const View& v = read(s);
      if (v.begin == v.end) continue;
      Cursor c{v.begin->time + o.offset, s, v.begin};
      if (!lean(c)) continue;
      cursors_.push_back(c);
      if (best < 0 || before(c, cursors_[best])) best = static_cast<int>(cursors_.size()) - 1;
    }
    if (best < 0) break;
    keep(cursors_[best]);
    limit = cursors_[best].at->memory * (1 - step);
  }
  if (out.empty() || step == 0) return;
  // With a step: the leanest point of all (least memory, then time, then tuple), when the steps
  // stopped above it.
  Cursor best;
  double best_memory = out.back().memory;
  for (int s = 0; s < sets; ++s) {
    const Offer& o = offers[s];
    if (!(o.corner_memory < best_memory || (o.corner_memory == best_memory && best.at))) continue;
    const View& v = read(s);
    if (v.begin == v.end) continue;
    const Cursor c{v.end[-1].time + o.offset, s, v.end - 1};
    if (c.at->memory < best_memory ||
        (best.at != nullptr && c.at->memory == best_memory && before(c, best))) {
      best = c;
      best_memory = c.at->memory;
    }
  }
  if (best.at != nullptr) keep(best);
}

}  // namespace paraplan::pareto
