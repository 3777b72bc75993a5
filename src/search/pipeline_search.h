// The pipeline planner's search (docs/architecture.md, "The pipeline planner"), shared by its
// two files: pipeline.cc sets it up, schedules the passes and reads the plan back;
// pipeline_pass.cc runs one pass of the programme.
#pragma once

#include <tbb/enumerable_thread_specific.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cost/pipeline_cost.h"
#include "ir/error.h"
#include "search/ideals.h"
#include "search/pipeline.h"

namespace paraplan::pipeline_detail {

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

/// A depth-first walk's way from I down to the current J (the layers moved from the stage into
/// J), which a cursor follows lazily: only when a stage must be priced does it catch up, and on
/// the way back it undoes only what it applied.
struct LazyPath {
  std::vector<int> layers;
  std::size_t applied = 0;  // of `layers`, removed from the cursor's stage

  void clear() {
    layers.clear();
    applied = 0;
  }
  void catch_up(StageCursor& cursor) {
    while (applied < layers.size()) cursor.remove(layers[applied++]);
  }
  void pop(StageCursor& cursor) {
    layers.pop_back();
    if (applied > layers.size()) {
      cursor.undo();
      --applied;
    }
  }
};

class Search {
 public:
  Search(const Model& model, const PipelineCostModel& cost, const PipelineSearchOptions& options);
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
    // The cursor is reset to the ideal's members when a stage is first priced, then follows
    // `path` (see LazyPath).
    int ideal = -1;
    bool cursor_ready = false;
    LazyPath path;
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
  // Puts the cursor at the current stage (Scratch::path).
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
    StageCursor& cursor;  // reset to I, following `path`
    int ideal, k, s;
    // Knapsack optima reached through different tie-breaks may differ in the last bits, so
    // the walk accepts values within a relative 1e-12 of the target.
    double limit, above;
    LazyPath path = {};
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
  std::vector<std::vector<int>> ceil_by_d_;  // per d of a shape: ⌈s/d⌉ for s = 0..s_max_
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
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::string task_, pass_name_;
};

// Devices a layer set needs under a bound: its work over the bound, and its memory's
// device-bytes over the limit. The relative slack keeps rounding from overstating a need.
inline int Search::need(double work, double memory, double bound) const {
  double n = 0;
  if (std::isfinite(bound) && bound > 0) n = std::ceil(work / bound * (1 - 1e-9));
  if (memory_limit_ > 0) n = std::max(n, std::ceil(memory / memory_limit_ * (1 - 1e-9)));
  return static_cast<int>(std::min<double>(n, total_devices_ + 1.0));
}

// The stage I \ J's own need (its sums as differences, less a margin far above their
// rounding), at least 1.
inline int Search::stage_need(int ideal, int sub, double bound) const {
  return std::max(1, need(work_in_[ideal] - work_in_[sub] - 1e-9 * work_in_[ideal],
                          memory_in_[ideal] - memory_in_[sub] - 1e-9 * memory_in_[ideal], bound));
}

}  // namespace paraplan::pipeline_detail
