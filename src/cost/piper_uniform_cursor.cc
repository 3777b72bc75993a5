// The Piper cost model's stage cursor for the common case: at most two options per layer and
// degree (Piper's vanilla / activation recomputation), sharing their parameter bytes and optimizer
// time. A layer's options then differ only in alpha (compute and cut-edge bytes) and memory, so
// its fastest option does not depend on d, a stage's time on its fastest options is
//   Σα / d + γ(d)·Σw + factor·Σopt / N,
// kept as a handful of sums per (device group, degree) instead of per shape, and the per-stage
// knapsack — which layers move to their leaner option so that the stage fits — is one covering
// problem in α units for every d: its optimum L gives the stage time Σα/d + L/d + ....
#include "cost/piper_uniform_cursor.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "cost/knapsack.h"
#include "cost/layer_set.h"

namespace paraplan {

bool piper_uniform_applies(const PiperCostModel& m) {
  if (m.settings().objective != PiperSettings::Objective::kTimePerSample) return false;
  for (const auto& layer : m.model().layers)
    for (const auto& deg : layer.by_degree) {
      if (deg.options.size() > 2) return false;
      for (const auto& o : deg.options)
        if (o.parameter_bytes != deg.options[0].parameter_bytes ||
            o.optimizer_time_s != deg.options[0].optimizer_time_s)
          return false;
    }
  return true;
}

namespace {

// reset() results kept, in doubles (members counted as half a double each): 2 MB, the size of
// a few hundred layer sets of a hundred layers; larger lattices are mostly solved in one pass.
constexpr std::size_t kSnapshotDoubles = std::size_t{1} << 18;

class PiperUniformCursor : public StageCursor {
 public:
  explicit PiperUniformCursor(const PiperCostModel& m);
  PiperUniformCursor(const PiperUniformCursor&) = delete;  // the sum pointers point into sums_
  PiperUniformCursor& operator=(const PiperUniformCursor&) = delete;
  void reset(const std::vector<int>& layers) override;
  void remove(int layer) override;
  void undo() override;
  double cost(int shape, int y, double cutoff) override;
  double lower_bound(int shape) override;
  std::pair<int, int> y_range(int shape) override;
  void bounds(std::vector<double>& lower, std::vector<std::pair<int, int>>& range) override;
  bool fits(int shape, int y) override;
  std::vector<std::pair<int, int>> choice(int shape, int y) override;

 private:
  const std::vector<LayerOption>* options(int v, int ti) const {
    return options_[static_cast<std::size_t>(v) * degrees_ + ti];
  }
  std::size_t at(int v, int ti) const { return static_cast<std::size_t>(v) * degrees_ + ti; }
  double& alpha(int g, int v, int ti, int l) {
    return alpha_[((static_cast<std::size_t>(g) * layers_ + v) * degrees_ + ti) * 2 + l];
  }
  // The fastest option of v at degree ti in group g: smallest alpha, then smaller memory, then
  // the earlier option (Piper's array order).
  int fastest(int g, int v, int ti) {
    const std::size_t i = at(v, ti);
    if (count_[i] < 2) return 0;
    const double a0 = alpha(g, v, ti, 0), a1 = alpha(g, v, ti, 1);
    if (a1 != a0) return a1 < a0 ? 1 : 0;
    if (mem_a_[2 * i + 1] != mem_a_[2 * i]) return mem_a_[2 * i + 1] < mem_a_[2 * i] ? 1 : 0;
    return mem_b_[2 * i + 1] < mem_b_[2 * i] ? 1 : 0;
  }
  // Adds (sign = +1) or subtracts (-1) v's fastest options to the per-(group, degree) sums.
  void account_fastest(int v, double sign);
  // Adds or subtracts what does not depend on S's cuts: parameters, optimizer, lean memory.
  void account_fixed(int v, double sign);
  void cut_out_edge(int u, int edge);
  double base(int shape) const {
    const StageShape& sh = m_.shapes()[shape];
    const int ti = shape_degree_[shape], c = sh.device_type * degrees_ + ti;
    return sum_alpha_[c] / sh.data_parallel + gamma_[sh.data_parallel] * sum_w_[ti] +
           factor_[sh.device_type] * sum_opt_[ti] * inverse_n_;
  }
  // Bytes the fastest options exceed the limit by at y, rounded up: in double precision a
  // memory one rounding error above the limit could come out as fitting exactly.
  double need(int c, int g, int y) const {
    const long double exact = static_cast<long double>(sum_a_[c]) * y + sum_b_[c] - limit_[g];
    const double rounded = static_cast<double>(exact);
    return rounded < exact ? std::nextafter(rounded, kInfinity) : rounded;
  }
  bool too_big(int ti, int g, int y) const {
    const double limit = limit_[g] * (1 + 1e-12);
    return lean_a_[ti] * y + lean_b_[ti] > limit || (y == 1 && lean_1_[ti] > limit);
  }
  void save();

  const PiperCostModel& m_;
  int layers_, degrees_, groups_;
  std::vector<const std::vector<LayerOption>*> options_;  // per (layer, degree)
  std::vector<int> shape_degree_;                         // per shape: degree index
  std::vector<double> limit_, factor_, gamma_;
  double inverse_bandwidth_, inverse_n_;
  std::vector<double> alpha_;  // per (group, layer, degree, option)
  // The options' figures flat, per (layer, degree): how many (0: none at that degree); per
  // option a, b and compute time; what does not depend on the cuts (parameter bytes, optimizer
  // time, smallest a, smallest b, smallest a + b). Per in-edge (in_begin_ per layer) its source
  // and, per (degree, option), the bytes it adds when cut; per edge and (degree, option), the
  // α its source gains when it is cut.
  std::vector<int> count_;
  std::vector<double> mem_a_, mem_b_, compute_, fixed_;
  std::vector<int> in_begin_, in_from_;
  std::vector<double> in_bytes_, out_alpha_;
  LayerSet stage_;
  // Per (group, degree): Σ alpha, Σ a, Σ b of the fastest options. Per degree: Σ parameter
  // bytes, Σ optimizer time, Σ smallest a, smallest b, smallest a + b (all in sums_, saved and
  // restored at once), and the members without options at that degree.
  std::vector<double> sums_;
  double *sum_alpha_, *sum_a_, *sum_b_, *sum_w_, *sum_opt_, *lean_a_, *lean_b_, *lean_1_;
  std::vector<int> missing_;
  // Undo: the sums before each remove, the alphas each remove changed, and where the layer sat.
  struct Frame {
    int layer, position;
    std::size_t sums, alphas;
  };
  std::vector<Frame> frames_;
  std::vector<double> sum_stack_;
  std::vector<int> missing_stack_;
  std::vector<std::pair<std::size_t, double>> alpha_stack_;
  // Covering-knapsack optima per (group, degree, y) for the current S (stamp): in α units, the
  // exact optimum or a lower bound.
  struct Cached {
    std::uint64_t stamp = 0;
    bool exact = false;
    double value = 0;
  };
  std::vector<std::vector<Cached>> cache_;
  // What reset() computes, per layer set it was given (the planner resets to each layer set
  // once per pass): the sums, the missing counts and the members' alphas in member order.
  struct Snapshot {
    std::vector<double> sums, alphas;
    std::vector<int> missing;
  };
  struct MembersHash {
    std::size_t operator()(const std::vector<int>& layers) const {
      std::size_t h = layers.size();
      for (int v : layers) h = h * 1000003u ^ static_cast<std::size_t>(v);
      return h;
    }
  };
  std::unordered_map<std::vector<int>, Snapshot, MembersHash> snapshots_;
  std::size_t snapshot_doubles_ = 0;  // kept below kSnapshotDoubles
  std::vector<std::pair<std::uint64_t, std::pair<int, int>>> y_range_cache_;  // per class, by stamp
  std::uint64_t stamp_ = 1;                                                   // never wraps
  CoverScratch scratch_;
};

PiperUniformCursor::PiperUniformCursor(const PiperCostModel& m)
    : m_(m),
      layers_(m.model().size()),
      degrees_(static_cast<int>(m.degrees().size())),
      groups_(static_cast<int>(m.settings().groups().size())) {
  const Model& model = m.model();
  options_.assign(static_cast<std::size_t>(layers_) * degrees_, nullptr);
  for (int v = 0; v < layers_; ++v)
    for (int ti = 0; ti < degrees_; ++ti)
      options_[static_cast<std::size_t>(v) * degrees_ + ti] =
          model.layers[v].options_for(m.degrees()[ti]);
  int max_d = 1;
  for (const auto& sh : m.shapes()) {
    max_d = std::max(max_d, sh.data_parallel);
    shape_degree_.push_back(static_cast<int>(
        std::lower_bound(m.degrees().begin(), m.degrees().end(), sh.tensor_parallel) -
        m.degrees().begin()));
  }
  for (const auto& g : m.settings().groups()) {
    limit_.push_back(g.memory_bytes);
    factor_.push_back(g.time_factor);
  }
  const double n = m.settings().microbatches, ar = m.settings().allreduce_bandwidth();
  gamma_.assign(max_d + 1, 0.0);
  for (int d = 1; d <= max_d; ++d) gamma_[d] = 4.0 * (d - 1) / d / n / ar;
  inverse_bandwidth_ = 1.0 / m.settings().bandwidth_bytes_per_s;
  inverse_n_ = 1.0 / n;
  alpha_.assign(static_cast<std::size_t>(groups_) * layers_ * degrees_ * 2, 0.0);
  const std::size_t pairs = static_cast<std::size_t>(layers_) * degrees_;
  count_.assign(pairs, 0);
  mem_a_.assign(2 * pairs, 0.0);
  mem_b_.assign(2 * pairs, 0.0);
  compute_.assign(2 * pairs, 0.0);
  fixed_.assign(5 * pairs, 0.0);
  for (int v = 0; v < layers_; ++v)
    for (int ti = 0; ti < degrees_; ++ti) {
      const auto* opts = options(v, ti);
      if (!opts) continue;
      const std::size_t i = at(v, ti);
      count_[i] = static_cast<int>(opts->size());
      double a = kInfinity, b = kInfinity, one = kInfinity;
      for (std::size_t l = 0; l < opts->size(); ++l) {
        const LayerOption& o = (*opts)[l];
        mem_a_[2 * i + l] = o.memory_per_inflight_bytes;
        mem_b_[2 * i + l] = o.memory_fixed_bytes;
        compute_[2 * i + l] = o.compute_time_s;
        a = std::min(a, o.memory_per_inflight_bytes);
        b = std::min(b, o.memory_fixed_bytes);
        one = std::min(one, o.memory_per_inflight_bytes + o.memory_fixed_bytes);
      }
      fixed_[5 * i] = (*opts)[0].parameter_bytes;
      fixed_[5 * i + 1] = (*opts)[0].optimizer_time_s;
      fixed_[5 * i + 2] = a;
      fixed_[5 * i + 3] = b;
      fixed_[5 * i + 4] = one;
    }
  in_begin_.assign(1, 0);
  for (int v = 0; v < layers_; ++v) {
    const auto& in = model.in_edge_ids[v];
    for (std::size_t q = 0; q < in.size(); ++q) {
      const Edge& e = model.edges[in[q]];
      in_from_.push_back(e.from);
      for (int ti = 0; ti < degrees_; ++ti)
        for (int l = 0; l < 2; ++l) {
          const auto* opts = options(v, ti);
          const bool has = opts && l < static_cast<int>(opts->size());
          in_bytes_.push_back(has ? 2 * (e.bytes + (*opts)[l].sync_in_bytes[q]) : 0.0);
        }
    }
    in_begin_.push_back(static_cast<int>(in_from_.size()));
  }
  out_alpha_.assign(model.edges.size() * degrees_ * 2, 0.0);
  for (std::size_t e = 0; e < model.edges.size(); ++e) {
    const int u = model.edges[e].from, pos = m.edge_out_position(static_cast<int>(e));
    for (int ti = 0; ti < degrees_; ++ti) {
      const auto* opts = options(u, ti);
      for (int l = 0; opts && l < static_cast<int>(opts->size()); ++l)
        out_alpha_[(e * degrees_ + ti) * 2 + l] =
            2 * (model.edges[e].bytes + (*opts)[l].sync_out_bytes[pos]) * inverse_bandwidth_;
    }
  }
  stage_ = LayerSet(layers_);
  const std::size_t classes = static_cast<std::size_t>(groups_) * degrees_;
  sums_.assign(3 * classes + 5 * static_cast<std::size_t>(degrees_), 0.0);
  sum_alpha_ = sums_.data();
  sum_a_ = sum_alpha_ + classes;
  sum_b_ = sum_a_ + classes;
  sum_w_ = sum_b_ + classes;
  sum_opt_ = sum_w_ + degrees_;
  lean_a_ = sum_opt_ + degrees_;
  lean_b_ = lean_a_ + degrees_;
  lean_1_ = lean_b_ + degrees_;
  missing_.assign(degrees_, 0);
  cache_.assign(classes, std::vector<Cached>(m.max_data_parallel_sum() + 2));
  y_range_cache_.assign(classes, {0, {0, 0}});
}

void PiperUniformCursor::account_fastest(int v, double sign) {
  for (int ti = 0; ti < degrees_; ++ti) {
    const std::size_t i = at(v, ti);
    if (count_[i] == 0) continue;
    for (int g = 0; g < groups_; ++g) {
      const int l = fastest(g, v, ti), c = g * degrees_ + ti;
      sum_alpha_[c] += sign * alpha(g, v, ti, l);
      sum_a_[c] += sign * mem_a_[2 * i + l];
      sum_b_[c] += sign * mem_b_[2 * i + l];
    }
  }
}

void PiperUniformCursor::account_fixed(int v, double sign) {
  for (int ti = 0; ti < degrees_; ++ti) {
    const std::size_t i = at(v, ti);
    if (count_[i] == 0) {
      missing_[ti] += sign > 0 ? 1 : -1;
      continue;
    }
    const double* f = &fixed_[5 * i];
    sum_w_[ti] += sign * f[0];
    sum_opt_[ti] += sign * f[1];
    lean_a_[ti] += sign * f[2];
    lean_b_[ti] += sign * f[3];
    lean_1_[ti] += sign * f[4];
  }
}

void PiperUniformCursor::reset(const std::vector<int>& layers) {
  stage_.assign(layers);
  std::fill(sums_.begin(), sums_.end(), 0.0);
  std::fill(missing_.begin(), missing_.end(), 0);
  frames_.clear();
  sum_stack_.clear();
  missing_stack_.clear();
  alpha_stack_.clear();
  ++stamp_;
  const std::size_t per_member = static_cast<std::size_t>(degrees_) * 2;
  if (auto known = snapshots_.find(layers); known != snapshots_.end()) {
    const Snapshot& snap = known->second;
    std::copy(snap.sums.begin(), snap.sums.end(), sums_.begin());
    std::copy(snap.missing.begin(), snap.missing.end(), missing_.begin());
    const double* from = snap.alphas.data();
    for (int g = 0; g < groups_; ++g)
      for (int v : stage_.members()) {
        std::copy_n(from, per_member, &alpha(g, v, 0, 0));
        from += per_member;
      }
    return;
  }
  for (int v : stage_.members()) {
    for (int ti = 0; ti < degrees_; ++ti) {
      const std::size_t i = at(v, ti);
      for (int l = 0; l < count_[i]; ++l) {
        // S is successor-closed, so only incoming edges from outside can be cut.
        double bytes = 0;
        for (int q = in_begin_[v]; q < in_begin_[v + 1]; ++q)
          if (!stage_.contains(in_from_[q]))
            bytes += in_bytes_[(static_cast<std::size_t>(q) * degrees_ + ti) * 2 + l];
        for (int g = 0; g < groups_; ++g)  // factor 1: p + bytes/B, as Piper
          alpha(g, v, ti, l) = factor_[g] * compute_[2 * i + l] + bytes * inverse_bandwidth_;
      }
    }
    account_fastest(v, +1);
    account_fixed(v, +1);
  }
  const std::size_t size =
      sums_.size() + missing_.size() + (per_member * groups_ + 1) * layers.size();
  if (snapshot_doubles_ + size > kSnapshotDoubles) return;
  snapshot_doubles_ += size;
  Snapshot& snap = snapshots_[layers];
  snap.sums = sums_;
  snap.missing = missing_;
  for (int g = 0; g < groups_; ++g)
    for (int v : stage_.members())
      snap.alphas.insert(snap.alphas.end(), &alpha(g, v, 0, 0), &alpha(g, v, 0, 0) + per_member);
}

void PiperUniformCursor::save() {
  sum_stack_.insert(sum_stack_.end(), sums_.begin(), sums_.end());
  missing_stack_.insert(missing_stack_.end(), missing_.begin(), missing_.end());
}

void PiperUniformCursor::cut_out_edge(int u, int edge) {
  for (int ti = 0; ti < degrees_; ++ti) {
    const std::size_t i = at(u, ti);
    for (int l = 0; l < count_[i]; ++l) {
      const double extra = out_alpha_[(static_cast<std::size_t>(edge) * degrees_ + ti) * 2 + l];
      for (int g = 0; g < groups_; ++g) {
        double& a = alpha(g, u, ti, l);
        alpha_stack_.push_back({static_cast<std::size_t>(&a - alpha_.data()), a});
        a += extra;
      }
    }
  }
}

void PiperUniformCursor::remove(int layer) {
  const Model& model = m_.model();
  frames_.push_back({layer, stage_.position(layer), sum_stack_.size(), alpha_stack_.size()});
  save();
  account_fastest(layer, -1);
  account_fixed(layer, -1);
  stage_.remove(layer);
  // Its predecessors still in S now send to a layer outside S.
  for (int e : model.in_edge_ids[layer]) {
    const int u = model.edges[e].from;
    if (!stage_.contains(u)) continue;
    account_fastest(u, -1);
    cut_out_edge(u, e);
    account_fastest(u, +1);
  }
  ++stamp_;
}

void PiperUniformCursor::undo() {
  const Frame f = frames_.back();
  frames_.pop_back();
  while (alpha_stack_.size() > f.alphas) {
    alpha_[alpha_stack_.back().first] = alpha_stack_.back().second;
    alpha_stack_.pop_back();
  }
  std::copy_n(sum_stack_.begin() + static_cast<std::ptrdiff_t>(f.sums), sums_.size(),
              sums_.begin());
  sum_stack_.resize(f.sums);
  const std::size_t m = missing_.size();
  std::copy_n(missing_stack_.end() - static_cast<std::ptrdiff_t>(m), m, missing_.begin());
  missing_stack_.resize(missing_stack_.size() - m);
  stage_.restore(f.layer, f.position);
  ++stamp_;
}

double PiperUniformCursor::lower_bound(int shape) {
  const int ti = shape_degree_[shape], g = m_.shapes()[shape].device_type;
  if (missing_[ti] > 0 || stage_.empty() || too_big(ti, g, 1)) return kInfinity;
  return base(shape);
}

// Per class (group, degree) once: whether the stage can run at y = 1, and its y range.
void PiperUniformCursor::bounds(std::vector<double>& lower,
                                std::vector<std::pair<int, int>>& range) {
  const auto& shapes = m_.shapes();
  int last_class = -1;
  bool runs = false;
  std::pair<int, int> known{0, 0};
  for (std::size_t si = 0; si < shapes.size(); ++si) {
    const int shape = static_cast<int>(si), ti = shape_degree_[si], g = shapes[si].device_type;
    const int c = g * degrees_ + ti;
    if (c != last_class) {
      last_class = c;
      runs = missing_[ti] == 0 && !stage_.empty() && !too_big(ti, g, 1);
      known = y_range(shape);
    }
    lower[si] = runs ? base(shape) : kInfinity;
    range[si] = known;
  }
}

// The largest y at which the fastest options fit (cost() answers with the base time there), and
// the largest y at which the leanest might (cost() is +inf above it). Exactly cost()'s tests.
std::pair<int, int> PiperUniformCursor::y_range(int shape) {
  const int ti = shape_degree_[shape], g = m_.shapes()[shape].device_type;
  const int c = g * degrees_ + ti;
  if (missing_[ti] > 0 || stage_.empty()) return {0, 0};
  // The same for every shape of the class (d does not enter): once per S.
  auto& known = y_range_cache_[c];
  if (known.first == stamp_) return known.second;
  // Largest y >= 0 with pred(y) true, for a predicate true up to some point; capped.
  const int cap = static_cast<int>(cache_[c].size()) + 1;
  auto largest = [&](double a, double b, double limit, auto pred) {
    // Clamped as a double: the estimate can be far beyond any integer (a huge limit).
    const double estimate = a > 0 ? std::floor((limit - b) / a) : cap;
    int y = estimate <= 0 ? 0 : !(estimate < cap) ? cap : static_cast<int>(estimate);
    while (y > 0 && !pred(y)) --y;
    while (y < cap && pred(y + 1)) ++y;
    return y;
  };
  const int fast =
      largest(sum_a_[c], sum_b_[c], limit_[g], [&](int y) { return need(c, g, y) <= 0; });
  const int lean = largest(lean_a_[ti], lean_b_[ti], limit_[g] * (1 + 1e-12),
                           [&](int y) { return !too_big(ti, g, y); });
  known = {stamp_, {fast, lean >= cap ? INT_MAX : lean}};
  return known.second;
}

// Every layer on its leanest option at y: what cost()'s knapsack finds infeasible exactly when
// even that does not fit (all moves together save less than needed).
bool PiperUniformCursor::fits(int shape, int y) {
  const int ti = shape_degree_[shape], g = m_.shapes()[shape].device_type;
  const int c = g * degrees_ + ti;
  if (missing_[ti] > 0 || stage_.empty()) return false;
  const double need = this->need(c, g, y);
  if (need <= 0) return true;
  if (too_big(ti, g, y)) return false;
  double saved = 0;
  for (int v : stage_.members()) {
    const std::size_t i = at(v, ti);
    if (count_[i] < 2) continue;
    const int f = fastest(g, v, ti), o = 1 - f;
    const double s =
        (mem_a_[2 * i + f] - mem_a_[2 * i + o]) * y + (mem_b_[2 * i + f] - mem_b_[2 * i + o]);
    if (s > 0) saved += s;
  }
  return saved >= need;
}

double PiperUniformCursor::cost(int shape, int y, double cutoff) {
  const int ti = shape_degree_[shape], g = m_.shapes()[shape].device_type;
  const int d = m_.shapes()[shape].data_parallel, c = g * degrees_ + ti;
  if (missing_[ti] > 0 || stage_.empty()) return kInfinity;
  const double time = base(shape);
  const double need = this->need(c, g, y);
  if (need <= 0 || time >= cutoff) return time;
  if (too_big(ti, g, y)) return kInfinity;
  // Moves to leaner options cost L (α units), i.e. L/d of stage time; above this they lose.
  const double cut = (cutoff - time) * d;
  auto& slots = cache_[c];
  Cached* slot = y < static_cast<int>(slots.size()) ? &slots[y] : nullptr;
  if (slot && slot->stamp == stamp_ && (slot->exact || slot->value >= cut))
    return slot->exact ? time + slot->value / d : std::max(cutoff, time + slot->value / d);
  auto& items = scratch_.items;
  items.clear();
  for (int v : stage_.members()) {
    const std::size_t i = at(v, ti);
    if (count_[i] < 2) continue;
    const int f = fastest(g, v, ti), o = 1 - f;
    const double saved =
        (mem_a_[2 * i + f] - mem_a_[2 * i + o]) * y + (mem_b_[2 * i + f] - mem_b_[2 * i + o]);
    if (saved > 0) items.push_back({saved, alpha(g, v, ti, o) - alpha(g, v, ti, f)});
  }
  const CoverResult r = min_cost_cover(scratch_, need, cut);
  if (slot) *slot = {stamp_, r.exact, r.cost};
  if (!std::isfinite(r.cost)) return kInfinity;
  return r.exact ? time + r.cost / d : std::max(cutoff, time + r.cost / d);
}

std::vector<std::pair<int, int>> PiperUniformCursor::choice(int shape, int y) {
  const int ti = shape_degree_[shape], g = m_.shapes()[shape].device_type;
  const int d = m_.shapes()[shape].data_parallel, c = g * degrees_ + ti;
  std::vector<int> order = stage_.members();
  std::sort(order.begin(), order.end());
  std::vector<std::pair<int, int>> picks;
  if (need(c, g, y) <= 0) {
    for (int v : order) picks.push_back({v, fastest(g, v, ti)});
    return picks;
  }
  // The option picks of an optimum, from the general solver over the stage's contributions.
  std::vector<std::vector<KnapsackOption>> items;
  for (int v : order) {
    const auto& opts = *options(v, ti);
    items.emplace_back();
    for (int l = 0; l < static_cast<int>(opts.size()); ++l)
      items.back().push_back(
          {opts[l].memory_per_inflight_bytes * y + opts[l].memory_fixed_bytes,
           alpha(g, v, ti, l) / d});  // (parameters and optimizer: the same for each)
  }
  // The covering form of cost() sums memory in another order: where that order alone makes
  // the stage fit, allow what evaluate() allows.
  KnapsackResult r = solve_knapsack(items, limit_[g]);
  if (r.choice.empty()) r = solve_knapsack(items, limit_[g] * (1 + 1e-12));
  for (std::size_t i = 0; i < order.size() && !r.choice.empty(); ++i)
    picks.push_back({order[i], r.choice[i]});
  return picks;
}

}  // namespace

std::unique_ptr<StageCursor> make_piper_uniform_cursor(const PiperCostModel& m) {
  return std::make_unique<PiperUniformCursor>(m);
}

}  // namespace paraplan
