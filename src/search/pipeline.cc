// Dynamic programme over ideals (Piper's recurrence, §4.3 of docs/specs/piper.md):
//   best[I][k][s] = min over J ⊊ I, shapes (t, d) with t·d <= k, d <= s of
//                   max(best[J][k - t·d][s - d], cost(I \ J, t, d, y = ⌈s/d⌉))
// with "at most k devices, at most s = Σd" semantics (a prefix minimum over k and s). Stage costs
// come incrementally from the cost model's cursor while a depth-first walk moves layers from
// the stage into J; each (J, shape, k) update only touches the drop points of best[J][k - t·d].
#include "search/pipeline.h"

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "search/ideals.h"

namespace paraplan {
namespace {

/// best[I] for one ideal, stored sparsely: per k, the s where the (non-increasing) value drops
/// and the value from there on. Cells above the search bound are infinite and store nothing.
struct Table {
  std::vector<int> drop_offset;  // per k, into drops; size K+2
  std::vector<int> drops;
  std::vector<double> values;
};

// Device budgets per group: no plan uses more than Σd·max(t) devices of a group, so a larger
// budget only costs time. The tables index budgets by one number k, a digit per group.
std::vector<int> device_budgets(const PipelineCostModel& cost) {
  long long widest = 1;
  for (const auto& shape : cost.shapes())
    widest = std::max<long long>(widest, shape.tensor_parallel);
  std::vector<int> budgets;
  for (int count : cost.device_budgets())
    budgets.push_back(
        static_cast<int>(std::min<long long>(count, widest * cost.max_data_parallel_sum())));
  return budgets;
}

class Search {
 public:
  Search(const Model& model, const PipelineCostModel& cost, const PipelineSearchOptions& options)
      : cost_(cost),
        lattice_(IdealLattice::build(model, options.max_ideals)),
        budget_(device_budgets(cost)),
        k_max_(flat_max(budget_, stride_)),
        s_max_(cost.max_data_parallel_sum()),
        width_(s_max_ + 1),
        progress_(options.progress),
        task_(model.name + ": pipeline stages") {
    // One dense working table per thread.
    double bytes = 2.0 * (k_max_ + 1) * width_ * sizeof(double);
    if (bytes > options.max_table_bytes)
      throw Error(ErrorKind::kLimit, "",
                  fmt::format("the exact search would need {:.1f} GB of working tables ({} device "
                              "counts x {} data-parallel sums); use fewer devices",
                              bytes / 1e9, k_max_ + 1, width_));
    tables_.resize(lattice_.count());
    const auto ideals = static_cast<std::uint64_t>(lattice_.count());
    pairs_ = ideals * ideals / 2 <= options.max_stage_pairs
                 ? lattice_.pair_count()
                 : lattice_.pair_count(options.max_stage_pairs);
    if (pairs_ > options.max_stage_pairs)
      throw Error(ErrorKind::kLimit, "",
                  fmt::format("the model has more than {} candidate stages ({} stage boundaries); "
                              "the exact search would take too long: merge layers into blocks",
                              options.max_stage_pairs, lattice_.count()));
  }

  PipelineSearchResult run();
  void solve_all();
  PipelineSearchResult extract();

 private:
  double at(int ideal, int k, int s) const {
    const Table& t = tables_[ideal];
    auto first = t.drops.begin() + t.drop_offset[k], last = t.drops.begin() + t.drop_offset[k + 1];
    auto it = std::upper_bound(first, last, s);
    return it == first ? kInfinity : t.values[(it - t.drops.begin()) - 1];
  }
  void solve_ideal(int ideal, StageCursor& cursor, std::vector<double>& out);
  void relax(int sub, StageCursor& cursor, std::vector<double>& out);
  void visit(int ideal, int sub, StageCursor& cursor, std::vector<double>& out);
  void finish(int ideal, std::vector<double>& out);
  bool reconstruct_walk(int ideal, int sub, int k, int s, double target, StageCursor& cursor,
                        Stage& stage, int& next_ideal, int& next_k, int& next_s);

  // k's digit for group g, and k with n fewer devices of g (−1: not that many).
  int digit(int k, int g) const { return k / stride_[g] % (budget_[g] + 1); }
  int minus(int k, int g, int n) const { return digit(k, g) < n ? -1 : k - n * stride_[g]; }
  int devices_of(int k) const {
    int total = 0;
    for (std::size_t g = 0; g < budget_.size(); ++g) total += digit(k, static_cast<int>(g));
    return total;
  }
  static int flat_max(const std::vector<int>& budget, std::vector<int>& stride) {
    long long size = 1;
    stride.clear();
    for (int b : budget) {
      stride.push_back(static_cast<int>(size));
      size *= b + 1;
      if (size > (1 << 26))
        throw Error(ErrorKind::kLimit, "", "too many device groups and devices for the search");
    }
    return static_cast<int>(size - 1);
  }

  const PipelineCostModel& cost_;
  IdealLattice lattice_;
  std::vector<int> stride_;  // before budget_: flat_max fills it
  std::vector<int> budget_;
  int k_max_, s_max_, width_;
  std::vector<Table> tables_;
  std::uint64_t pairs_ = 0;
  // Values above this bound are treated as infinite: the search proves optimality among plans
  // at or under it, and tries growing bounds until one holds a plan.
  double bound_ = kInfinity;
  ProgressSink* progress_;
  std::string task_, pass_name_;
};

void Search::relax(int sub, StageCursor& cursor, std::vector<double>& out) {
  const auto& shapes = cost_.shapes();
  const Table& a = tables_[sub];
  for (int si = 0; si < static_cast<int>(shapes.size()); ++si) {
    const int d = shapes[si].data_parallel, g = shapes[si].device_type;
    const int td = d * shapes[si].tensor_parallel;
    if (td > budget_[g] || d > s_max_) continue;
    const double lower = cursor.lower_bound(si);
    if (!(lower <= bound_)) continue;  // a layer lacks degree t, or the stage is too slow
    for (int k = 0; k <= k_max_; ++k) {
      const int kk = minus(k, g, td);
      if (kk < 0) continue;
      const int* f = a.drops.data() + a.drop_offset[kk];
      int m = a.drop_offset[kk + 1] - a.drop_offset[kk];
      while (m > 0 && f[m - 1] + d > s_max_) --m;
      if (m == 0) continue;
      // The rest's values above the bound were dropped in finish(), so every drop is relevant.
      const double* av = a.values.data() + a.drop_offset[kk];
      auto b = [&](int s, double cutoff) { return cursor.cost(si, (s + d - 1) / d, cutoff); };
      // A (the rest's bottleneck) falls along the drops while B (this stage) rises with s:
      // find the last drop where A still dominates. B only matters below A, so A is B's cutoff.
      int lo = 0, hi = m;  // predicate true on [0, lo), false on [hi, m)
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        const double am = av[mid];
        if (am > lower && am > b(f[mid] + d, am))
          lo = mid + 1;
        else
          hi = mid;
      }
      double* row = out.data() + static_cast<std::size_t>(k) * width_;
      for (int j = 0; j < lo; ++j) row[f[j] + d] = std::min(row[f[j] + d], av[j]);
      if (lo < m) {
        double& cell = row[f[lo] + d];
        if (lower < cell) cell = std::min(cell, b(f[lo] + d, cell));
      }
    }
  }
}

void Search::visit(int ideal, int sub, StageCursor& cursor, std::vector<double>& out) {
  relax(sub, cursor, out);
  for (auto [v, child] : lattice_.children(sub)) {
    if (!lattice_.contains(ideal, v) || child == ideal) continue;
    cursor.remove(v);
    visit(ideal, child, cursor, out);
    cursor.undo();
  }
}

void Search::finish(int ideal, std::vector<double>& out) {
  // Prefix minima make the table mean "at most k devices, at most s".
  for (int k = 0; k <= k_max_; ++k) {
    double* row = out.data() + static_cast<std::size_t>(k) * width_;
    for (int s = 0; s <= s_max_; ++s) {
      if (row[s] > bound_) row[s] = kInfinity;
      if (s > 0) row[s] = std::min(row[s], row[s - 1]);
    }
    for (int g = 0; g < static_cast<int>(budget_.size()); ++g) {  // one device fewer of g
      const int fewer = minus(k, g, 1);
      if (fewer < 0) continue;
      const double* prev = out.data() + static_cast<std::size_t>(fewer) * width_;
      for (int s = 0; s <= s_max_; ++s) row[s] = std::min(row[s], prev[s]);
    }
  }
  Table& t = tables_[ideal];
  t.drop_offset.assign(k_max_ + 2, 0);
  for (int k = 0; k <= k_max_; ++k) {
    const double* row = out.data() + static_cast<std::size_t>(k) * width_;
    double last = kInfinity;
    for (int s = 0; s <= s_max_; ++s) {
      if (row[s] < last) {
        t.drops.push_back(s);
        t.values.push_back(row[s]);
      }
      last = row[s];
    }
    t.drop_offset[k + 1] = static_cast<int>(t.drops.size());
  }
  t.drops.shrink_to_fit();
  t.values.shrink_to_fit();
}

void Search::solve_ideal(int ideal, StageCursor& cursor, std::vector<double>& out) {
  out.assign(static_cast<std::size_t>(k_max_ + 1) * width_, kInfinity);
  cursor.reset(lattice_.members(ideal));
  visit(ideal, 0, cursor, out);
  finish(ideal, out);
}

// Finds, among the sub-ideals of `ideal` (depth-first from `sub`), a stage whose
// max(rest, stage cost) <= target within budget (k, s). Deterministic: first in walk order,
// shapes ascending, smallest s.
bool Search::reconstruct_walk(int ideal, int sub, int k, int s, double target, StageCursor& cursor,
                              Stage& stage, int& next_ideal, int& next_k, int& next_s) {
  const auto& shapes = cost_.shapes();
  // Knapsack optima reached through different tie-breaks may differ in the last bits, so the
  // walk accepts values within a relative 1e-12 of the target.
  const double limit = target + 1e-12 * std::abs(target);
  const double above = std::nextafter(limit, kInfinity);
  for (int si = 0; si < static_cast<int>(shapes.size()); ++si) {
    const int d = shapes[si].data_parallel, t = shapes[si].tensor_parallel;
    const int g = shapes[si].device_type, rest_k = minus(k, g, d * t);
    if (rest_k < 0 || d > s) continue;
    for (int s2 = d; s2 <= s; ++s2) {
      double rest = at(sub, rest_k, s2 - d);
      if (!(rest <= limit)) continue;
      int y = (s2 + d - 1) / d;
      if (!(cursor.cost(si, y, above) <= limit)) break;  // larger s2 only raises y
      stage.data_parallel = d;
      stage.tensor_parallel = t;
      stage.device_type = g;
      stage.inflight_microbatches = y;
      stage.layers.clear();
      stage.option_index.clear();
      for (auto [layer, option] : cursor.choice(si, y)) {
        stage.layers.push_back(layer);
        stage.option_index.push_back(option);
      }
      next_ideal = sub;
      next_k = rest_k;
      next_s = s2 - d;
      return true;
    }
  }
  for (auto [v, child] : lattice_.children(sub)) {
    if (!lattice_.contains(ideal, v) || child == ideal) continue;
    cursor.remove(v);
    bool found =
        reconstruct_walk(ideal, child, k, s, target, cursor, stage, next_ideal, next_k, next_s);
    cursor.undo();
    if (found) return true;
  }
  return false;
}

PipelineSearchResult Search::run() {
  // Bounds to try: a little above the cost model's lower bound first (the pruning makes those
  // passes cheap), then wider, then none. The first pass whose optimum is within its bound is
  // the global optimum: only plans above the bound were discarded.
  const double floor = cost_.objective_lower_bound();
  std::vector<double> bounds;
  if (floor > 0 && std::isfinite(floor))
    for (double factor : {1.15, 1.5, 2.5, 6.0}) bounds.push_back(floor * factor);
  bounds.push_back(kInfinity);
  for (std::size_t pass = 0; pass < bounds.size(); ++pass) {
    bound_ = bounds[pass];
    pass_name_ = std::isfinite(bound_)
                     ? fmt::format("pass {}/{} (plans within {:.3g}× the lower bound)", pass + 1,
                                   bounds.size(), bound_ / floor)
                     : fmt::format("pass {}/{} (every plan)", pass + 1, bounds.size());
    solve_all();
    if (at(lattice_.full(), k_max_, s_max_) <= bound_) break;
  }
  return extract();
}

void Search::solve_all() {
  // Ideals of one size only depend on smaller ones: solve each size level in parallel.
  for (auto& t : tables_) t = Table{};
  Table& empty = tables_[0];
  empty.drop_offset.resize(k_max_ + 2);
  for (int k = 0; k <= k_max_; ++k) {
    empty.drops.push_back(0);
    empty.values.push_back(0.0);
    empty.drop_offset[k + 1] = k + 1;
  }
  tbb::enumerable_thread_specific<std::vector<double>> buffers;
  tbb::enumerable_thread_specific<std::unique_ptr<StageCursor>> cursors(
      [&] { return cost_.cursor(); });
  int begin = 1;
  while (begin < lattice_.count()) {
    int end = begin;
    while (end < lattice_.count() && lattice_.size_of(end) == lattice_.size_of(begin)) ++end;
    tbb::parallel_for(begin, end,
                      [&](int ideal) { solve_ideal(ideal, *cursors.local(), buffers.local()); });
    begin = end;
    if (progress_)
      progress_->report(
          {task_, double(end), double(lattice_.count()), "layer sets, " + pass_name_, NAN, ""});
  }
}

PipelineSearchResult Search::extract() {
  PipelineSearchResult result;
  result.stats.ideals = lattice_.count();
  result.stats.stage_pairs = pairs_;
  const int full = lattice_.full();
  double best = at(full, k_max_, s_max_);
  Plan plan;
  plan.planner = "pipeline";
  plan.cost_model = cost_.name();
  if (!(best < kInfinity)) {
    plan.feasible = false;
    plan.objective = kInfinity;
    result.plan = plan;
    return result;
  }
  // The smallest budget reaching the optimum: fewest devices (then the smallest budget
  // index), then smallest Σd.
  int k = k_max_, s = s_max_;
  for (int kk = 0; kk <= k_max_; ++kk)
    if (at(full, kk, s_max_) <= best && devices_of(kk) < devices_of(k)) k = kk;
  for (int ss = 0; ss <= s_max_; ++ss)
    if (at(full, k, ss) <= best) {
      s = ss;
      break;
    }
  auto cursor = cost_.cursor();
  int ideal = full;
  while (ideal != 0) {
    Stage stage;
    int next_ideal = 0, next_k = 0, next_s = 0;
    cursor->reset(lattice_.members(ideal));
    if (!reconstruct_walk(ideal, 0, k, s, best, *cursor, stage, next_ideal, next_k, next_s))
      throw Error(ErrorKind::kLimit, "", "internal error: plan reconstruction failed");
    plan.stages.push_back(std::move(stage));
    ideal = next_ideal;
    k = next_k;
    s = next_s;
  }
  result.plan = cost_.evaluate(plan);
  return result;
}

}  // namespace

PipelineSearchResult search_pipeline(const Model& model, const PipelineCostModel& cost,
                                     const PipelineSearchOptions& options) {
  Search search(model, cost, options);
  return search.run();
}

}  // namespace paraplan
