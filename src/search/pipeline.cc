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

#include <algorithm>
#include <climits>
#include <cmath>

#include "ir/error.h"
#include "search/pipeline_search.h"

namespace paraplan {
namespace {

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

}  // namespace

namespace pipeline_detail {

Search::Search(const Model& model, const PipelineCostModel& cost,
               const PipelineSearchOptions& options)
    : cost_(cost),
      lattice_(IdealLattice::build(model, options.max_ideals)),
      budget_(device_budgets(cost)),
      k_max_(flat_max(budget_, stride_)),
      s_max_(cost.max_data_parallel_sum()),
      narrow_from_(options.narrow_bands_from),
      progress_(options.progress),
      deadline_(options.deadline),
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
  for (const auto& shape : cost.shapes()) {
    const int d = shape.data_parallel;
    if (static_cast<int>(ceil_by_d_.size()) <= d) ceil_by_d_.resize(d + 1);
    if (!ceil_by_d_[d].empty() || d > s_max_) continue;
    ceil_by_d_[d].resize(s_max_ + 1);
    for (int s = 0; s <= s_max_; ++s) ceil_by_d_[d][s] = (s + d - 1) / d;
  }
  // Small lattices make many short passes whose time goes to pricing the same stages again.
  if (lattice_.count() <= options.keep_stage_figures_up_to) memo_.resize(lattice_.count());
}

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

void Search::set_needs() {
  if (!bounded_) return;
  for (int id = 0; id < lattice_.count(); ++id) {
    need_in_[id] = need(work_in_[id], memory_in_[id], need_bound_);
    need_out_[id] = need(work_out_[id], memory_out_[id], need_bound_);
  }
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
    w.path.catch_up(w.cursor);
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
    w.path.layers.push_back(v);
    if (reconstruct_walk(child, w)) return true;  // the cursor stays at the stage found
    w.path.pop(w.cursor);
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
    // finds no plan costs much less than one that finds it, and that one's cost grows with how
    // far its top is above the optimum and its bottom below it: a few bands, the first ones
    // narrow, and a wide band (top over 1.5× its bottom) searched upper half first. Its upper
    // pass gives back its bottom, the clamp, when a plan is at or below it; the lower half then
    // holds the optimum.
    auto band = [&](double from, double to) {
      return std::isfinite(to)
                 ? "plans between " + times(from) + " and " + times(to) + " the lower bound"
                 : "plans above " + times(from) + " the lower bound";
    };
    for (double factor : {1.4, 2.2, 6.0, kInfinity}) {
      hi = floor * factor;
      const double mid = std::isfinite(hi) && hi > 1.5 * lo ? std::sqrt(lo * hi) : lo;
      const double got = exact_pass(mid, hi, band(mid, hi));
      if (got <= hi) {
        if (mid == lo || got > mid) return extract();
        // It finds the plan the upper pass met at or below mid; should rounding ever say
        // otherwise, every plan.
        if (!(exact_pass(lo, mid, band(lo, mid)) <= mid)) exact_pass(0, kInfinity, "every plan");
        return extract();
      }
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

PipelineSearchResult Search::extract() {
  PipelineSearchResult result;
  result.stats.ideals = lattice_.count();
  result.stats.stage_pairs = pairs_;
  const int full = lattice_.full();
  double best = at(full, k_max_, s_max_);
  Plan plan = Plan::of(PlanKind::kPipeline);
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

}  // namespace pipeline_detail

PipelineSearchResult search_pipeline(const Model& model, const PipelineCostModel& cost,
                                     const PipelineSearchOptions& options) {
  pipeline_detail::Search search(model, cost, options);
  return search.run();
}

}  // namespace paraplan
