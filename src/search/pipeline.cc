// Dynamic programme over ideals (Piper's recurrence, §4.3 of docs/specs/piper.md):
//   best[I][k][s] = min over J ⊊ I, shapes (t, d) with t·d <= k, d <= s of
//                   max(best[J][k - t·d][s - d], cost(I \ J, t, d, y = ⌈s/d⌉))
// with "at most k devices, at most s = Σd" semantics (a prefix minimum over k and s). Stage costs
// come incrementally from the cost model's cursor while a depth-first walk moves layers from
// the stage into J.
//
// What keeps it fast:
// - Tables are sparse: per device budget k a row, the s where the (non-increasing) value drops;
//   rows equal to a budget with one device fewer are stored once, and a stage is combined only
//   with the rows where J's table changes (the others give what the prefix minimum over k gives).
// - Passes under an upper bound τ on the objective: values above τ are dropped, stages whose
//   cost cannot be under τ are skipped, and per-layer lower bounds (work / τ devices, device-bytes
//   of memory / limit devices) give each layer set the devices it needs at least. A layer set I is
//   kept only for budgets that leave the rest of the model (V \ I) what it needs; J's whose needs
//   already leave no device for the stage end the walk below them.
// - Each (J, shape, row) finds where the rest's bottleneck falls below the stage's by a binary
//   search on the drops. Cells a dominating shape (no more devices, no larger d) already gave at
//   the same value are not searched again.
// - The cursor moves only when a stage must be priced. On small lattices what a stage costs
//   whatever the band (shapes that can hold it, lower bounds, y ranges, costs asked for) is kept
//   across passes, so later passes rarely move it.
#include "search/pipeline.h"

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include "ir/error.h"
#include "search/ideals.h"

namespace paraplan {
namespace {

/// best[I] for one ideal, stored sparsely. Rows are stored for budgets 0..k_hi; budgets above
/// k_hi are never needed (the rest of the model needs those devices). Each row is a
/// non-increasing step function of s: the s where it drops and its value from there on; cells
/// above the pass's bound are infinite and store nothing.
struct Table {
  int k_hi = -1;
  std::vector<int> row_of;     // per k <= k_hi: row index, -1 when every cell is infinite
  std::vector<int> starts;     // budgets whose row differs from each budget one device fewer
  std::vector<int> row_begin;  // per row: offset into drops/values; one more entry at the end
  std::vector<int> drops;
  std::vector<double> values;
  // Per drop: 0 when the row of one device fewer already has this value at this s (one group
  // only). A stage combined with that cell gives what it gave with the row before.
  std::vector<char> fresh;

  int row_size(int r) const { return row_begin[r + 1] - row_begin[r]; }
  void clear() {
    k_hi = -1;
    for (auto* v : {&row_of, &starts, &row_begin, &drops}) v->clear();
    values.clear();
    fresh.clear();
  }
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

/// A step function of s under construction: cells written by the stages, then merged with the
/// rows of one device fewer.
struct Cell {
  int s;
  double value;
};

/// What a stage I \ J costs whatever the pass: per shape that can hold it (dominating shapes
/// first), its cost's lower bound and the cursor's y range.
struct StageFigures {
  int shape;
  double lower;
  int y_cheap, y_max;
};

struct KnownCost {
  double value;
  bool exact;
};

/// Stage costs by key: open addressing with linear probing (the searches ask for millions).
class KnownCosts {
 public:
  /// The entry of `key`, added as {-inf, not exact} when new (`added` tells).
  KnownCost& find(std::uint64_t key, bool& added) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = mix(key) & mask;
    while (slots_[i].key != 0 && slots_[i].key != key + 1) i = (i + 1) & mask;
    added = slots_[i].key == 0;
    if (added) {
      slots_[i] = {key + 1, {-kInfinity, false}};
      ++size_;
    }
    return slots_[i].cost;
  }

 private:
  struct Slot {
    std::uint64_t key = 0;  // key + 1; 0: empty
    KnownCost cost{};
  };
  static std::size_t mix(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return static_cast<std::size_t>(k);
  }
  void grow() {
    std::vector<Slot> old(std::max<std::size_t>(64, slots_.size() * 2));
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& o : old)
      if (o.key != 0) {
        std::size_t i = mix(o.key - 1) & mask;
        while (slots_[i].key != 0) i = (i + 1) & mask;
        slots_[i] = o;
      }
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

class Search {
 public:
  Search(const Model& model, const PipelineCostModel& cost, const PipelineSearchOptions& options)
      : cost_(cost),
        lattice_(IdealLattice::build(model, options.max_ideals)),
        budget_(device_budgets(cost)),
        k_max_(flat_max(budget_, stride_)),
        s_max_(cost.max_data_parallel_sum()),
        narrow_from_(options.narrow_bands_from),
        progress_(options.progress),
        task_(model.name + ": pipeline stages") {
    for (int b : budget_) total_devices_ += b;
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
    layer_sums(model);
    order_shapes();
    // Small lattices make many short passes whose time goes to pricing the same stages again.
    if (lattice_.count() <= options.keep_stage_figures_up_to) memo_.resize(lattice_.count());
  }

  PipelineSearchResult run();

 private:
  struct Scratch {
    std::vector<std::vector<Cell>> cells;  // per budget k: cells written by the stages
    std::vector<Cell> merged;
    std::vector<double> dense;
    struct Memo {
      std::uint64_t stamp = 0;
      bool exact = false;
      double value = 0;
    };
    std::vector<Memo> memo;  // per y: the stage's cost (one stage and shape at a time)
    std::uint64_t stamp = 0;
    // Per (shape, start of J's table), for the J being relaxed: how many of the row's first
    // cells the stage gave at their own value (the rest of the model the bottleneck). Valid
    // for a shape when its done entry carries this relax's stamp.
    std::vector<int> covered;
    std::vector<std::uint64_t> done;  // per shape
    std::vector<const int*> dominating;
    std::uint64_t relax_stamp = 0;
    // The cursor is moved only when a stage has to be priced: it stands at the ideal's members
    // minus the first `applied` layers of `path`, the walk's way from I down to the current J.
    int ideal = -1;
    bool cursor_ready = false;
    std::vector<int> path;
    std::size_t applied = 0;
    std::vector<StageFigures> figures;  // the current stage's, when figures are not kept
    std::vector<double> lower;          // per shape, from StageCursor::bounds()
    std::vector<std::pair<int, int>> range;
  };

  double at(int ideal, int k, int s) const {
    const Table& t = tables_[ideal];
    if (k > t.k_hi || t.row_of[k] < 0) return kInfinity;
    const int r = t.row_of[k];
    auto first = t.drops.begin() + t.row_begin[r], last = t.drops.begin() + t.row_begin[r + 1];
    auto it = std::upper_bound(first, last, s);
    return it == first ? kInfinity : t.values[(it - t.drops.begin()) - 1];
  }
  // The smallest s with at(ideal, k, s) <= limit (INT_MAX: none); a row's values fall with s.
  int first_within(int ideal, int k, double limit) const {
    const Table& t = tables_[ideal];
    if (k > t.k_hi || t.row_of[k] < 0) return INT_MAX;
    const int r = t.row_of[k];
    for (int p = t.row_begin[r]; p < t.row_begin[r + 1]; ++p)
      if (t.values[p] <= limit) return t.drops[p];
    return INT_MAX;
  }
  void layer_sums(const Model& model);
  void order_shapes();
  // Puts the cursor at the current stage (see Scratch::path).
  void position(StageCursor& cursor, Scratch& scratch) const;
  // The stage's figures: kept per (I, J) on small lattices, else computed into scratch.
  std::pair<const StageFigures*, std::size_t> figures(int sub, StageCursor& cursor,
                                                      Scratch& scratch);
  double stage_cost(int sub, int shape, int y, double cutoff, StageCursor& cursor,
                    Scratch& scratch);
  bool stage_fits(int sub, int shape, int y, StageCursor& cursor, Scratch& scratch);
  void set_needs();
  int need(double work, double memory, double bound) const;
  int stage_need(int ideal, int sub, double bound) const;
  void solve_all();
  void solve_ideal(int ideal, StageCursor& cursor, Scratch& scratch);
  void relax(int ideal, int sub, StageCursor& cursor, Scratch& scratch);
  void visit(int ideal, int sub, StageCursor& cursor, Scratch& scratch);
  void finish(int ideal, Scratch& scratch);
  PipelineSearchResult extract();
  // Reading one stage of the plan back: the stage I \ J with the walk at J.
  struct Walk {
    StageCursor& cursor;  // at I minus the first `applied` layers of `path` (I to J)
    int ideal, k, s;
    // Knapsack optima reached through different tie-breaks may differ in the last bits, so
    // the walk accepts values within a relative 1e-12 of the target.
    double limit, above;
    std::vector<int> path = {};
    std::size_t applied = 0;
    Stage stage = {};
    int next_ideal = 0, next_k = 0, next_s = 0;
  };
  bool reconstruct_walk(int sub, Walk& walk);

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
  int k_max_, s_max_;
  int total_devices_ = 0;
  std::vector<Table> tables_;
  std::uint64_t pairs_ = 0;
  // Shapes by (group, t·d, d): every shape after those that dominate it. Per shape, the shapes
  // that dominate it most closely: same group, d' <= d, t'·d' <= t·d.
  std::vector<int> shape_order_;
  std::vector<std::vector<int>> dominators_;
  // Per ideal I on small lattices (else empty), kept across passes: the figures of each stage
  // I \ J met so far, and the stage costs asked for — exact, or lower bounds at least the
  // cutoff they were asked with — keyed by (J, shape, y) and whether it was fits().
  struct IdealMemo {
    std::vector<std::pair<int, int>> figures_of;  // per J: (offset, count); offset -1: not yet
    std::vector<StageFigures> figures;
    KnownCosts costs;
  };
  std::vector<IdealMemo> memo_;
  // Per thread, for every pass: a cursor and scratch space.
  tbb::enumerable_thread_specific<Scratch> scratches_;
  tbb::enumerable_thread_specific<std::unique_ptr<StageCursor>> cursors_{
      [this] { return cost_.cursor(); }};
  std::uint64_t cost_key(int sub, int shape, int y, bool fits) const {
    return ((static_cast<std::uint64_t>(sub) * cost_.shapes().size() + shape) *
                (static_cast<std::uint64_t>(s_max_) + 2) +
            y) *
               2 +
           (fits ? 1 : 0);
  }
  // Per ideal: its layers' work and memory lower bounds, and those of the layers outside it.
  std::vector<double> work_in_, work_out_, memory_in_, memory_out_;
  double memory_limit_ = 0;
  bool bounded_ = false;  // the cost model gave layer bounds
  // Per ideal, for the current bound: devices it needs at least, and devices the rest needs.
  std::vector<int> need_in_, need_out_;
  // Values above this bound are treated as infinite: the search proves optimality among plans
  // at or under it, and tries growing bounds until one holds a plan.
  double bound_ = kInfinity;
  double above_bound_ = kInfinity;  // the next double: costs below it are exact
  // A pass that only asks whether any plan fits: every stage that fits costs 0 (bound 0).
  bool feasibility_ = false;
  // A pass that only asks whether some plan's stages all cost at most decision_ (when finite):
  // every such stage costs 0, every other one is left out (bound 0).
  double decision_ = kInfinity, decision_above_ = kInfinity;
  // The bound the devices a layer set needs are counted under (bound_, or decision_).
  double need_bound_ = kInfinity;
  // A value no plan is below (the optimum is above it): every table value is raised to it, so
  // that partial plans better than any whole plan can be merge into one cell.
  double clamp_ = 0;
  int narrow_from_;  // PipelineSearchOptions::narrow_bands_from
  ProgressSink* progress_;
  std::string task_, pass_name_;
};

void Search::layer_sums(const Model& model) {
  const auto bounds = cost_.layer_bounds();
  bounded_ = static_cast<int>(bounds.work.size()) == model.size() &&
             static_cast<int>(bounds.memory.size()) == model.size();
  const int n = lattice_.count();
  need_in_.assign(n, 0);
  need_out_.assign(n, 0);
  if (!bounded_) return;
  memory_limit_ = bounds.memory_limit;
  work_in_.assign(n, 0.0);
  work_out_.assign(n, 0.0);
  memory_in_.assign(n, 0.0);
  memory_out_.assign(n, 0.0);
  for (int id = 0; id < n; ++id)
    for (int v = 0; v < model.size(); ++v) {
      const bool in = lattice_.contains(id, v);
      (in ? work_in_ : work_out_)[id] += bounds.work[v];
      (in ? memory_in_ : memory_out_)[id] += bounds.memory[v];
    }
}

void Search::order_shapes() {
  const auto& shapes = cost_.shapes();
  const int n = static_cast<int>(shapes.size());
  shape_order_.resize(n);
  for (int i = 0; i < n; ++i) shape_order_[i] = i;
  auto devices = [&](int i) {
    return static_cast<long long>(shapes[i].data_parallel) * shapes[i].tensor_parallel;
  };
  std::stable_sort(shape_order_.begin(), shape_order_.end(), [&](int a, int b) {
    if (shapes[a].device_type != shapes[b].device_type)
      return shapes[a].device_type < shapes[b].device_type;
    if (devices(a) != devices(b)) return devices(a) < devices(b);
    return shapes[a].data_parallel < shapes[b].data_parallel;
  });
  // Per tensor-parallel degree t', the dominating shape of largest d'.
  dominators_.assign(n, {});
  for (int i = 0; i < n; ++i) {
    std::vector<int>& dom = dominators_[i];
    for (int j = 0; j < n; ++j) {
      if (j == i || shapes[j].device_type != shapes[i].device_type ||
          shapes[j].data_parallel > shapes[i].data_parallel || devices(j) > devices(i))
        continue;
      auto same_t = std::find_if(dom.begin(), dom.end(), [&](int o) {
        return shapes[o].tensor_parallel == shapes[j].tensor_parallel;
      });
      if (same_t == dom.end())
        dom.push_back(j);
      else if (shapes[j].data_parallel > shapes[*same_t].data_parallel)
        *same_t = j;
    }
  }
}

// Devices a layer set needs under a bound: its work over the bound, and its memory's
// device-bytes over the limit. The relative slack keeps rounding from overstating a need.
int Search::need(double work, double memory, double bound) const {
  double n = 0;
  if (std::isfinite(bound) && bound > 0) n = std::ceil(work / bound * (1 - 1e-9));
  if (memory_limit_ > 0) n = std::max(n, std::ceil(memory / memory_limit_ * (1 - 1e-9)));
  return static_cast<int>(std::min<double>(n, total_devices_ + 1.0));
}

// The stage I \ J's own need (its sums as differences, less a margin far above their
// rounding), at least 1.
int Search::stage_need(int ideal, int sub, double bound) const {
  return std::max(1, need(work_in_[ideal] - work_in_[sub] - 1e-9 * work_in_[ideal],
                          memory_in_[ideal] - memory_in_[sub] - 1e-9 * memory_in_[ideal], bound));
}

void Search::set_needs() {
  if (!bounded_) return;
  for (int id = 0; id < lattice_.count(); ++id) {
    need_in_[id] = need(work_in_[id], memory_in_[id], need_bound_);
    need_out_[id] = need(work_out_[id], memory_out_[id], need_bound_);
  }
}

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
    auto b = [&](int s, double cutoff) {
      const int y = (s + d - 1) / d;
      if (y <= y_cheap) return lower;
      if (y > y_max) return kInfinity;
      if (static_cast<std::size_t>(y) >= scratch.memo.size()) scratch.memo.resize(y + 1);
      Scratch::Memo& m = scratch.memo[y];
      if (m.stamp == scratch.stamp && (m.exact || m.value >= cutoff)) return m.value;
      if (feasibility_ || std::isfinite(decision_)) {
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
    scratch.path.push_back(v);
    visit(ideal, child, cursor, scratch);
    scratch.path.pop_back();
    if (scratch.applied > scratch.path.size()) {
      cursor.undo();
      --scratch.applied;
    }
  }
}

void Search::position(StageCursor& cursor, Scratch& scratch) const {
  if (!scratch.cursor_ready) {
    cursor.reset(lattice_.members(scratch.ideal));
    scratch.cursor_ready = true;
    scratch.applied = 0;
  }
  while (scratch.applied < scratch.path.size()) cursor.remove(scratch.path[scratch.applied++]);
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
  scratch.ideal = ideal;
  scratch.cursor_ready = false;
  scratch.path.clear();
  scratch.applied = 0;
  visit(ideal, 0, cursor, scratch);
  finish(ideal, scratch);
}

// Finds, among the sub-ideals of the walk's ideal (depth-first from `sub`), a stage whose
// max(rest, stage cost) <= target within budget (k, s). Deterministic: first in walk order,
// shapes ascending, smallest s.
bool Search::reconstruct_walk(int sub, Walk& w) {
  const auto& shapes = cost_.shapes();
  // Shapes on fewer devices than the stage's work and memory need within the target are
  // not priced.
  const int least = bounded_ ? stage_need(w.ideal, sub, w.limit) : 1;
  for (int si = 0; si < static_cast<int>(shapes.size()); ++si) {
    const int d = shapes[si].data_parallel, t = shapes[si].tensor_parallel;
    if (d * t < least) continue;
    const int g = shapes[si].device_type, rest_k = minus(w.k, g, d * t);
    if (rest_k < 0 || d > w.s) continue;
    // The smallest s2 whose rest is within the target: a larger one only raises y.
    const int rest_s = first_within(sub, rest_k, w.limit);
    if (rest_s > w.s - d) continue;
    const int s2 = rest_s + d;
    const int y = (s2 + d - 1) / d;
    while (w.applied < w.path.size()) w.cursor.remove(w.path[w.applied++]);
    if (!(w.cursor.cost(si, y, w.above) <= w.limit)) continue;
    w.stage.data_parallel = d;
    w.stage.tensor_parallel = t;
    w.stage.device_type = g;
    w.stage.inflight_microbatches = y;
    for (auto [layer, option] : w.cursor.choice(si, y)) {
      w.stage.layers.push_back(layer);
      w.stage.option_index.push_back(option);
    }
    w.next_ideal = sub;
    w.next_k = rest_k;
    w.next_s = s2 - d;
    return true;
  }
  for (auto [v, child] : lattice_.children(sub)) {
    if (!lattice_.contains(w.ideal, v) || child == w.ideal) continue;
    w.path.push_back(v);
    const bool found = reconstruct_walk(child, w);
    w.path.pop_back();
    if (found) return true;
    if (w.applied > w.path.size()) {
      w.cursor.undo();
      --w.applied;
    }
  }
  return false;
}

PipelineSearchResult Search::run() {
  // The optimum is searched in a band [lo, hi] of objective values: plans above hi are
  // discarded, and every table value below lo is raised to lo, so that partial plans no whole
  // plan can use to beat lo share their cells. That is exact when no plan is at or below lo: the
  // band's optimum is then the optimum. Narrow bands make cheap passes.
  const double floor = cost_.objective_lower_bound();
  const int full = lattice_.full();
  auto exact_pass = [&](double lo, double hi, const std::string& name) {
    clamp_ = lo;
    bound_ = need_bound_ = hi;
    above_bound_ = std::nextafter(bound_, kInfinity);
    pass_name_ = name;
    solve_all();
    return at(full, k_max_, s_max_);
  };
  // Whether some plan's stages all cost at most `bound`: a pass whose tables hold 0 or nothing.
  auto within = [&](double bound) {
    clamp_ = 0;
    decision_ = need_bound_ = bound;
    decision_above_ = std::nextafter(bound, kInfinity);
    bound_ = above_bound_ = 0;
    pass_name_ = fmt::format("is there a plan within {:.3g}× the lower bound", bound / floor);
    solve_all();
    decision_ = decision_above_ = kInfinity;
    return at(full, k_max_, s_max_) <= 0;
  };
  // Whether any plan fits at all (every fitting stage costs 0).
  auto fits = [&] {
    feasibility_ = true;
    bound_ = above_bound_ = clamp_ = 0;
    need_bound_ = kInfinity;
    pass_name_ = "does any plan fit";
    solve_all();
    feasibility_ = false;
    return at(full, k_max_, s_max_) <= 0;
  };
  auto times = [&](double bound) { return fmt::format("{:.3g}×", bound / floor); };
  if (!(floor > 0 && std::isfinite(floor))) {
    exact_pass(0, kInfinity, "every plan");
    return extract();
  }
  // Where compute sets the optimum it is close to the lower bound: one pass.
  double lo = floor, hi = floor * 1.15;
  if (exact_pass(lo, hi, "plans within 1.15× the lower bound") <= hi) return extract();
  lo = hi;
  if (s_max_ < narrow_from_) {
    // Short rows: bands up to 1.4×, 2.2×, 6× and every plan, each above the last, making sure
    // before the last that a plan fits (the memory bounds prove most infeasible inputs so before
    // any pass; the check costs about what a band does, which feasible inputs with an optimum
    // between 2.2× and 6× would pay for nothing). Measured on the reference inputs, a pass that
    // finds no plan costs nearly what the one that finds it does, and that one's cost grows
    // with how far its top is above the optimum: a few bands, the first ones narrow.
    for (double factor : {1.4, 2.2, 6.0, kInfinity}) {
      hi = floor * factor;
      const double got =
          exact_pass(lo, hi,
                     std::isfinite(hi)
                         ? "plans between " + times(lo) + " and " + times(hi) + " the lower bound"
                         : "plans above " + times(lo) + " the lower bound");
      if (got <= hi) return extract();
      if (factor == 6.0 && bounded_ && !fits()) return extract();
      lo = hi;
    }
    return extract();
  }
  // Long rows: narrow bands are much cheaper. Bracket the optimum with passes that only ask
  // whether a plan is within a bound, making sure after the first that a plan fits at all, and
  // narrow the bracket to 5 %; then one pass over the bracket.
  hi = kInfinity;
  for (double factor : {1.5, 2.5, 6.0}) {
    if (within(floor * factor)) {
      hi = floor * factor;
      break;
    }
    lo = floor * factor;
    if (factor == 1.5 && bounded_ && !fits()) return extract();
  }
  for (int i = 0; i < 4 && std::isfinite(hi) && hi > lo * 1.05; ++i) {
    const double mid = std::sqrt(lo * hi);
    (within(mid) ? hi : lo) = mid;
  }
  const double best = exact_pass(
      lo, hi,
      std::isfinite(hi)
          ? "the optimum, between " + times(lo) + " and " + times(hi) + " the lower bound"
          : "the optimum, above " + times(lo) + " the lower bound");
  // The cheap passes and the band agree on which stages fit the bound; should rounding ever
  // make them disagree, every plan.
  if (!(best <= hi) && std::isfinite(hi)) exact_pass(0, kInfinity, "every plan");
  return extract();
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
  const double limit = best + 1e-12 * std::abs(best);
  while (ideal != 0) {
    cursor->reset(lattice_.members(ideal));
    Walk walk{*cursor, ideal, k, s, limit, std::nextafter(limit, kInfinity)};
    if (!reconstruct_walk(0, walk))
      throw Error(ErrorKind::kLimit, "", "internal error: plan reconstruction failed");
    plan.stages.push_back(std::move(walk.stage));
    ideal = walk.next_ideal;
    k = walk.next_k;
    s = walk.next_s;
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
