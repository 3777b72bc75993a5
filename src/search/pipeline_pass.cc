// One pass of the pipeline planner's programme (the recurrence and what keeps it fast: the
// head of pipeline.cc): every ideal's table, size level by size level, under the pass's band.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include "search/pipeline_search.h"

namespace paraplan::pipeline_detail {

void Search::relax(int ideal, int sub, StageCursor& cursor, Scratch& scratch) {
  const Table& a = tables_[sub];
  if (a.starts.empty()) return;
  const Table& out = tables_[ideal];
  const auto& shapes = cost_.shapes();
  const bool single = budget_.size() == 1;
  // A cell the stage gives at the value of J's row (copies, j < lo below, and a crossing the
  // rest dominates) is implied by the same cell under a dominating shape (fewer devices of the
  // group, d' <= d) that gave it too: it lands at no more devices and no larger Σd, where the
  // tables' prefix minima carry it. Shapes are visited dominators first, and each searches a
  // row only from where its dominators' cells end.
  const std::size_t starts = a.starts.size();
  const std::uint64_t stamp = ++scratch.relax_stamp;
  if (scratch.done.size() < shapes.size()) scratch.done.resize(shapes.size());
  if (scratch.covered.size() < shapes.size() * starts)
    scratch.covered.resize(shapes.size() * starts);
  const auto [figs, nfigs] = figures(sub, cursor, scratch);
  const bool zero_or_none = feasibility_ || std::isfinite(decision_);
  for (std::size_t fi = 0; fi < nfigs; ++fi) {
    const StageFigures& fig = figs[fi];
    const int si = fig.shape;
    const int d = shapes[si].data_parallel, g = shapes[si].device_type;
    const int td = d * shapes[si].tensor_parallel;
    double lower = fig.lower;
    if (feasibility_) {  // every stage that fits costs 0
      lower = 0;
    } else if (std::isfinite(decision_)) {  // every stage within decision_ costs 0
      if (!(lower <= decision_)) continue;
      lower = 0;
    }
    if (!(lower <= bound_)) continue;  // the stage is too slow
    const int y_cheap = fig.y_cheap, y_max = fig.y_max;
    // The stage's cost at Σd = s: its lower bound while the fastest options fit, +inf past
    // y_max, else the cost model's knapsack.
    // Costs asked for once per y: exact ones, or bounds that answer smaller cutoffs.
    ++scratch.stamp;
    const int* ceil_of = ceil_by_d_[d].data();  // ⌈s/d⌉ by s: no division in the search
    auto b = [&](int s, double cutoff) {
      const int y = ceil_of[s];
      if (y <= y_cheap) return lower;
      if (y > y_max) return kInfinity;
      Scratch::Memo& m = scratch.memo[y];
      if (m.stamp == scratch.stamp && (m.exact || m.value >= cutoff)) return m.value;
      if (zero_or_none) {
        const bool within =
            feasibility_ ? stage_fits(sub, si, y, cursor, scratch)
                         : stage_cost(sub, si, y, decision_above_, cursor, scratch) <= decision_;
        m = {scratch.stamp, true, within ? 0.0 : kInfinity};
        return m.value;
      }
      const double c = stage_cost(sub, si, y, cutoff, cursor, scratch);
      m = {scratch.stamp, c < cutoff, c};
      return c;
    };
    int* covered = scratch.covered.data() + static_cast<std::size_t>(si) * starts;
    // The dominating shapes met in this relax. Each wrote its entry of every row this shape
    // reaches: with more devices, this shape runs out of budget no earlier.
    auto& doms = scratch.dominating;
    doms.clear();
    for (int o : dominators_[si])
      if (scratch.done[o] == stamp)
        doms.push_back(scratch.covered.data() + static_cast<std::size_t>(o) * starts);
    scratch.done[si] = stamp;
    for (std::size_t idx = 0; idx < starts; ++idx) {
      const int kk = a.starts[idx];
      covered[idx] = 0;
      int k;
      if (single) {
        k = kk + td;
        if (k > out.k_hi) break;
      } else {
        if (digit(kk, g) + td > budget_[g]) continue;
        k = kk + td * stride_[g];
      }
      const int r = a.row_of[kk];
      const int* f = a.drops.data() + a.row_begin[r];
      int m = a.row_size(r);
      while (m > 0 && f[m - 1] + d > s_max_) --m;
      if (m == 0) continue;
      // The row's first cells a dominating shape already gave at their own value.
      int from = 0;
      for (const int* dom : doms) from = std::max(from, dom[idx]);
      covered[idx] = from;
      if (from >= m) continue;
      const double* av = a.values.data() + a.row_begin[r];
      // A (the rest's bottleneck) falls along the drops while B (this stage) rises with s:
      // find the last drop where A still dominates. B only matters below A, so A is B's cutoff.
      int lo = from, hi = m;  // predicate true on [from, lo), false on [hi, m)
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        const double am = av[mid];
        if (am > lower && am > b(f[mid] + d, am))
          lo = mid + 1;
        else
          hi = mid;
      }
      auto& cells = scratch.cells[k];
      // Cells the row before has too were combined with this stage from there.
      const char* fresh = a.fresh.data() + a.row_begin[r];
      for (int j = from; j < lo; ++j)
        if (fresh[j]) cells.push_back({f[j] + d, av[j]});
      covered[idx] = lo;
      if (lo < m) {
        const double c = b(f[lo] + d, above_bound_);
        if (c <= bound_) cells.push_back({f[lo] + d, std::max(c, av[lo])});
        if (c <= av[lo]) covered[idx] = lo + 1;
      }
    }
  }
}

void Search::visit(int ideal, int sub, StageCursor& cursor, Scratch& scratch) {
  // J = sub and every larger J below it need at least need_in_[sub] devices, the stage one and
  // the rest of the model need_out_[ideal].
  if (need_in_[sub] + 1 + need_out_[ideal] > total_devices_) return;
  // The stage itself needs devices for its work and memory too.
  if (!bounded_ ||
      need_in_[sub] + stage_need(ideal, sub, need_bound_) + need_out_[ideal] <= total_devices_)
    relax(ideal, sub, cursor, scratch);
  for (auto [v, child] : lattice_.children(sub)) {
    if (!lattice_.contains(ideal, v) || child == ideal) continue;
    scratch.path.layers.push_back(v);
    visit(ideal, child, cursor, scratch);
    scratch.path.pop(cursor);
  }
}

void Search::position(StageCursor& cursor, Scratch& scratch) const {
  if (!scratch.cursor_ready) {
    cursor.reset(lattice_.members(scratch.ideal));
    scratch.cursor_ready = true;
    scratch.path.applied = 0;
  }
  scratch.path.catch_up(cursor);
}

std::pair<const StageFigures*, std::size_t> Search::figures(int sub, StageCursor& cursor,
                                                            Scratch& scratch) {
  // Shapes that fit the budget, in dominance order, whose stage can hold at some y >= 1.
  auto compute = [&](std::vector<StageFigures>& out) {
    position(cursor, scratch);
    const auto& shapes = cost_.shapes();
    scratch.lower.resize(shapes.size());
    scratch.range.resize(shapes.size());
    cursor.bounds(scratch.lower, scratch.range);
    for (int si : shape_order_) {
      const int d = shapes[si].data_parallel, g = shapes[si].device_type;
      if (d * shapes[si].tensor_parallel > budget_[g] || d > s_max_) continue;
      const double lower = scratch.lower[si];
      if (!std::isfinite(lower)) continue;  // a layer lacks degree t, or it never fits
      const auto [y_cheap, y_max] = scratch.range[si];
      if (y_cheap < 1 && y_max < 1) continue;
      out.push_back({si, lower, y_cheap, y_max});
    }
  };
  if (memo_.empty()) {
    scratch.figures.clear();
    compute(scratch.figures);
    return {scratch.figures.data(), scratch.figures.size()};
  }
  IdealMemo& memo = memo_[scratch.ideal];
  if (memo.figures_of.empty()) memo.figures_of.assign(lattice_.count(), {-1, 0});
  auto& at = memo.figures_of[sub];
  if (at.first < 0) {
    at.first = static_cast<int>(memo.figures.size());
    compute(memo.figures);
    at.second = static_cast<int>(memo.figures.size()) - at.first;
  }
  return {memo.figures.data() + at.first, static_cast<std::size_t>(at.second)};
}

double Search::stage_cost(int sub, int shape, int y, double cutoff, StageCursor& cursor,
                          Scratch& scratch) {
  if (memo_.empty()) {
    position(cursor, scratch);
    return cursor.cost(shape, y, cutoff);
  }
  bool added;
  KnownCost& known = memo_[scratch.ideal].costs.find(cost_key(sub, shape, y, false), added);
  if (known.exact || known.value >= cutoff) return known.value;
  position(cursor, scratch);
  const double c = cursor.cost(shape, y, cutoff);
  known = {c, c < cutoff};
  return c;
}

bool Search::stage_fits(int sub, int shape, int y, StageCursor& cursor, Scratch& scratch) {
  if (memo_.empty()) {
    position(cursor, scratch);
    return cursor.fits(shape, y);
  }
  bool added;
  KnownCost& known = memo_[scratch.ideal].costs.find(cost_key(sub, shape, y, true), added);
  if (added) {
    position(cursor, scratch);
    known = {cursor.fits(shape, y) ? 1.0 : 0.0, true};
  }
  return known.value > 0;
}

void Search::finish(int ideal, Scratch& scratch) {
  Table& t = tables_[ideal];
  const bool single = budget_.size() == 1;
  t.row_of.assign(t.k_hi + 1, -1);
  t.row_begin.assign(1, 0);
  auto row_equals = [&](int r, const std::vector<Cell>& cells) {
    if (r < 0) return cells.empty();
    if (t.row_size(r) != static_cast<int>(cells.size())) return false;
    for (std::size_t i = 0; i < cells.size(); ++i)
      if (t.drops[t.row_begin[r] + i] != cells[i].s ||
          t.values[t.row_begin[r] + i] != cells[i].value)
        return false;
    return true;
  };
  for (int k = 0; k <= t.k_hi; ++k) {
    auto& cells = scratch.cells[k];
    // Rows of one device fewer (of each group) bound this one from above.
    std::vector<Cell>& merged = scratch.merged;
    merged.clear();
    int neighbours = 0, only = -1;
    for (int g = 0; g < static_cast<int>(budget_.size()); ++g) {
      const int fewer = minus(k, g, 1);
      if (fewer < 0) continue;
      const int r = t.row_of[fewer];
      ++neighbours;
      only = r;
      if (r < 0) continue;
      for (int i = t.row_begin[r]; i < t.row_begin[r + 1]; ++i)
        merged.push_back({t.drops[i], t.values[i]});
    }
    if (cells.empty() && single && neighbours == 1) {
      t.row_of[k] = only;  // the same row as k − 1
      continue;
    }
    // The prefix minimum over s, kept where it drops: by sorting the cells when they are few,
    // else on a dense row.
    const double bound = bound_;
    if (cells.size() * 8 < static_cast<std::size_t>(s_max_)) {
      merged.insert(merged.end(), cells.begin(), cells.end());
      std::sort(merged.begin(), merged.end(), [](const Cell& x, const Cell& y) {
        return x.s < y.s || (x.s == y.s && x.value < y.value);
      });
      std::size_t n = 0;
      double last = kInfinity;
      for (const Cell& c : merged)
        if (c.value < last && c.value <= bound) {
          last = c.value;
          if (n > 0 && merged[n - 1].s == c.s)
            merged[n - 1].value = c.value;
          else
            merged[n++] = c;
        }
      merged.resize(n);
    } else {
      auto& dense = scratch.dense;
      dense.assign(s_max_ + 1, kInfinity);
      int first = s_max_, last_s = 0;
      for (const auto* row : {&merged, &cells})
        for (const Cell& c : *row) {
          dense[c.s] = std::min(dense[c.s], c.value);
          first = std::min(first, c.s);
          last_s = std::max(last_s, c.s);
        }
      merged.clear();
      double last = kInfinity;
      for (int s = first; s <= last_s; ++s)
        if (dense[s] < last && dense[s] <= bound) {
          last = dense[s];
          merged.push_back({s, last});
        }
    }
    cells.clear();
    // Equal to a row of one device fewer: share it, and nothing new starts here.
    bool shared = false;
    for (int g = 0; g < static_cast<int>(budget_.size()) && !shared; ++g) {
      const int fewer = minus(k, g, 1);
      if (fewer >= 0 && row_equals(t.row_of[fewer], merged)) {
        t.row_of[k] = t.row_of[fewer];
        shared = true;
      }
    }
    if (shared || merged.empty()) continue;
    t.row_of[k] = static_cast<int>(t.row_begin.size()) - 1;
    // The row of one device fewer (one group only), walked along to find its value at each s.
    const int before = single && k > 0 ? t.row_of[k - 1] : -1;
    const int first = before < 0 ? 0 : t.row_begin[before];
    const int end = before < 0 ? 0 : t.row_begin[before + 1];
    int p = first;
    for (const Cell& c : merged) {
      while (p < end && t.drops[p] <= c.s) ++p;  // past its last drop at or before c.s
      const bool same = p > first && t.values[p - 1] == c.value;
      t.drops.push_back(c.s);
      t.values.push_back(c.value);
      t.fresh.push_back(same ? 0 : 1);
    }
    t.row_begin.push_back(static_cast<int>(t.drops.size()));
    t.starts.push_back(k);
  }
}

void Search::solve_ideal(int ideal, StageCursor& cursor, Scratch& scratch) {
  Table& t = tables_[ideal];
  // Budgets above k_hi leave the rest of the model fewer devices than it needs.
  t.k_hi = budget_.size() == 1 ? std::min(k_max_, total_devices_ - need_out_[ideal]) : k_max_;
  if (need_in_[ideal] + need_out_[ideal] > total_devices_) t.k_hi = -1;
  if (t.k_hi < 0) return;
  if (scratch.cells.size() < static_cast<std::size_t>(t.k_hi) + 1) scratch.cells.resize(t.k_hi + 1);
  // y = ⌈s/d⌉ <= s <= s_max_: one cost memo entry per y.
  if (scratch.memo.size() < static_cast<std::size_t>(s_max_) + 1) scratch.memo.resize(s_max_ + 1);
  scratch.ideal = ideal;
  scratch.cursor_ready = false;
  scratch.path.clear();
  visit(ideal, 0, cursor, scratch);
  finish(ideal, scratch);
}

void Search::solve_all() {
  set_needs();
  // Ideals of one size only depend on smaller ones: solve each size level in parallel.
  for (auto& t : tables_) t.clear();  // keeping their storage for this pass
  Table& empty = tables_[0];
  empty.k_hi = budget_.size() == 1 ? std::min(k_max_, total_devices_ - need_out_[0]) : k_max_;
  if (empty.k_hi >= 0) {
    empty.row_of.assign(empty.k_hi + 1, 0);
    empty.row_begin = {0, 1};
    empty.drops = {0};
    empty.values = {clamp_};
    empty.fresh = {1};
    empty.starts = {0};
  }
  int begin = 1;
  while (begin < lattice_.count()) {
    int end = begin;
    while (end < lattice_.count() && lattice_.size_of(end) == lattice_.size_of(begin)) ++end;
    tbb::parallel_for(
        begin, end, [&](int ideal) { solve_ideal(ideal, *cursors_.local(), scratches_.local()); });
    begin = end;
    if (deadline_ && std::chrono::steady_clock::now() > *deadline_)
      throw Error(ErrorKind::kLimit, "", std::string(kPastTheTimeLimit));
    if (progress_)
      progress_->report(
          {task_, double(end), double(lattice_.count()), "layer sets, " + pass_name_, NAN, ""});
  }
}

}  // namespace paraplan::pipeline_detail
