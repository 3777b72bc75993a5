// The Piper cost model's general stage cursor: any number of options per layer and degree, each
// with its own parameters and optimizer time (cost/piper_uniform_cursor.cc is the fast one for
// Piper's vanilla / recomputation pairs), and the memory objective.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cost/knapsack.h"
#include "cost/layer_set.h"
#include "cost/piper_cost.h"

namespace paraplan {

// ---------------------------------------------------------------------------------------------
// Incremental cursor.
//
// For layer x in S and option l of degree t, alpha = p + cutEdgeBytes/B, and the option's share
// of the stage's time per sample is alpha/d + 4(d-1)w/(d·N·B). Removing a layer v from S cuts
// the edges from v's predecessors in S; only those predecessors' alphas change.
class PiperCursor : public StageCursor {
 public:
  explicit PiperCursor(const PiperCostModel& m);
  void reset(const std::vector<int>& layers) override;
  void remove(int layer) override;
  void undo() override;
  double cost(int shape, int y, double cutoff) override;
  double lower_bound(int shape) override;
  std::vector<std::pair<int, int>> choice(int shape, int y) override;

 private:
  struct Frame {
    int layer;
    int position;              // where `layer` sat in the stage's member list
    std::size_t saved_sums;    // offset into sum_stack_
    std::size_t saved_alphas;  // offset into alpha_stack_
  };
  const std::vector<LayerOption>* options(int layer, int ti) const {
    return layer_options_[layer * degree_count_ + ti];
  }
  // alpha (per group g: time factor × compute + cut-edge bytes / B) over d, the all-reduce
  // share and the optimizer's.
  double contribution(int layer, int ti, int l, int d, int g) const {
    const auto& o = (*options(layer, ti))[l];
    return alpha_[static_cast<std::size_t>(g) * alpha_size_ +
                  alpha_offset_[layer * degree_count_ + ti] + l] /
               d +
           gamma_[d] * o.parameter_bytes + factor_[g] * o.optimizer_time_s * inverse_n_;
  }
  int fastest(int layer, int ti, int d, int g) const;
  // Adds (sign = +1) or subtracts (-1) layer x's share to every shape's sums.
  void account(int layer, double sign);
  void add_cut_out_edge(int layer, int edge);
  // Memory objective: adds (+1) or subtracts (-1) the layer's smallest memory at every y.
  void account_memory(int layer, int ti, double sign);
  KnapsackResult solve(int shape, int y, double cutoff);

  const PiperCostModel& m_;
  int degree_count_;
  std::vector<double> limit_;   // per group: memory per device
  std::vector<double> factor_;  // per group: time factor
  std::size_t alpha_size_ = 0;  // alphas per group
  bool memory_objective_;
  std::vector<const std::vector<LayerOption>*> layer_options_;
  std::vector<int> alpha_offset_;
  std::vector<double> alpha_;
  std::vector<double> gamma_;  // per d
  LayerSet stage_;
  // Scratch of solve(): reused so that a knapsack call allocates no item lists.
  std::vector<int> order_;
  std::vector<std::vector<KnapsackOption>> items_;
  std::vector<int> missing_;  // per degree: members without options for it
  // Per shape: Σ fastest contribution, and Σ a, Σ b of those fastest options.
  std::vector<double> sum_time_, sum_a_, sum_b_;
  // Per degree: Σ of each layer's smallest a, smallest b, and smallest a + b (its memory at
  // y = 1). Σ min a · y + Σ min b is at most the stage's smallest memory at y.
  std::vector<double> lean_a_, lean_b_, lean_1_;
  void account_lean(int layer, double sign);
  bool too_big(int ti, int g, int y) const {
    const double limit = limit_[static_cast<std::size_t>(g)] * (1 + 1e-12);
    return lean_a_[ti] * y + lean_b_[ti] > limit || (y == 1 && lean_1_[ti] > limit);
  }
  // Memory objective: per degree, per y (1..max_y): Σ min_l (a_l·y + b_l).
  int max_y_;
  std::vector<double> min_memory_;
  std::vector<double> sum_stack_;
  std::vector<std::pair<std::size_t, double>> alpha_stack_;
  std::vector<Frame> frames_;
  // Knapsack results per (shape, y), valid while the stamp matches: an exact value, or a lower
  // bound (negative-encoded as -(bound) - 1 would be obscure, so a parallel flag array).
  double inverse_n_ = 1;  // the optimizer step is paid once per N micro-batches
  std::vector<std::vector<double>> cache_;
  std::vector<std::vector<char>> cache_exact_;
  std::vector<std::vector<std::uint64_t>> cache_stamp_;
  std::uint64_t stamp_ = 1;  // never wraps
};

PiperCursor::PiperCursor(const PiperCostModel& m)
    : m_(m),
      degree_count_(static_cast<int>(m.degrees_.size())),
      memory_objective_(m.settings_.objective == PiperSettings::Objective::kMemory) {
  for (const auto& g : m_.groups_) {
    limit_.push_back(g.memory_bytes);
    factor_.push_back(g.time_factor);
  }
  const Model& model = m_.model_;
  layer_options_.assign(model.size() * degree_count_, nullptr);
  alpha_offset_.assign(model.size() * degree_count_, 0);
  int total = 0;
  for (int v = 0; v < model.size(); ++v)
    for (int ti = 0; ti < degree_count_; ++ti) {
      const auto* opts = model.layers[v].options_for(m_.degrees_[ti]);
      layer_options_[v * degree_count_ + ti] = opts;
      alpha_offset_[v * degree_count_ + ti] = total;
      if (opts) total += static_cast<int>(opts->size());
    }
  alpha_size_ = static_cast<std::size_t>(total);
  alpha_.assign(alpha_size_ * m_.groups_.size(), 0.0);
  int max_d = 1;
  for (const auto& s : m_.shapes_) max_d = std::max(max_d, s.data_parallel);
  gamma_.assign(max_d + 1, 0.0);
  const double n = m_.settings_.microbatches, b = m_.settings_.allreduce_bandwidth();
  for (int d = 1; d <= max_d; ++d) gamma_[d] = 4.0 * (d - 1) / d / n / b;
  inverse_n_ = 1.0 / n;
  stage_ = LayerSet(model.size());
  missing_.assign(degree_count_, 0);
  sum_time_.assign(m_.shapes_.size(), 0.0);
  sum_a_.assign(m_.shapes_.size(), 0.0);
  sum_b_.assign(m_.shapes_.size(), 0.0);
  lean_a_.assign(degree_count_, 0.0);
  lean_b_.assign(degree_count_, 0.0);
  lean_1_.assign(degree_count_, 0.0);
  max_y_ = m_.max_dp_sum_ + 1;
  if (memory_objective_) min_memory_.assign(degree_count_ * (max_y_ + 1), 0.0);
  cache_.resize(m_.shapes_.size());
  cache_stamp_.resize(m_.shapes_.size());
  cache_exact_.resize(m_.shapes_.size());
  for (std::size_t s = 0; s < m_.shapes_.size(); ++s) {
    int ys = m_.max_dp_sum_ / m_.shapes_[s].data_parallel + 2;
    cache_[s].assign(ys, 0.0);
    cache_exact_[s].assign(ys, 0);
    cache_stamp_[s].assign(ys, 0);
  }
}

int PiperCursor::fastest(int layer, int ti, int d, int g) const {
  const auto& opts = *options(layer, ti);
  int best = 0;
  double best_c = contribution(layer, ti, 0, d, g);
  for (int l = 1; l < static_cast<int>(opts.size()); ++l) {
    double c = contribution(layer, ti, l, d, g);
    // Ties go to the smaller memory, then to the earlier option (Piper's array order).
    if (c < best_c ||
        (c == best_c &&
         (opts[l].memory_per_inflight_bytes < opts[best].memory_per_inflight_bytes ||
          (opts[l].memory_per_inflight_bytes == opts[best].memory_per_inflight_bytes &&
           opts[l].memory_fixed_bytes < opts[best].memory_fixed_bytes)))) {
      best = l;
      best_c = c;
    }
  }
  return best;
}

void PiperCursor::account(int layer, double sign) {
  for (std::size_t s = 0; s < m_.shapes_.size(); ++s) {
    int ti = m_.shape_degree_index_[s];
    if (!options(layer, ti)) continue;
    int d = m_.shapes_[s].data_parallel, g = m_.shapes_[s].device_type;
    int l = fastest(layer, ti, d, g);
    const auto& o = (*options(layer, ti))[l];
    sum_time_[s] += sign * contribution(layer, ti, l, d, g);
    sum_a_[s] += sign * o.memory_per_inflight_bytes;
    sum_b_[s] += sign * o.memory_fixed_bytes;
  }
}

void PiperCursor::account_lean(int layer, double sign) {
  for (int ti = 0; ti < degree_count_; ++ti) {
    const auto* opts = options(layer, ti);
    if (!opts) continue;
    double a = kInfinity, b = kInfinity, one = kInfinity;
    for (const auto& o : *opts) {
      a = std::min(a, o.memory_per_inflight_bytes);
      b = std::min(b, o.memory_fixed_bytes);
      one = std::min(one, o.memory_per_inflight_bytes + o.memory_fixed_bytes);
    }
    lean_a_[ti] += sign * a;
    lean_b_[ti] += sign * b;
    lean_1_[ti] += sign * one;
  }
}

void PiperCursor::reset(const std::vector<int>& layers) {
  const Model& model = m_.model_;
  const double b = m_.settings_.bandwidth_bytes_per_s;
  stage_.assign(layers);
  std::fill(missing_.begin(), missing_.end(), 0);
  std::fill(sum_time_.begin(), sum_time_.end(), 0.0);
  std::fill(sum_a_.begin(), sum_a_.end(), 0.0);
  std::fill(sum_b_.begin(), sum_b_.end(), 0.0);
  std::fill(lean_a_.begin(), lean_a_.end(), 0.0);
  std::fill(lean_b_.begin(), lean_b_.end(), 0.0);
  std::fill(lean_1_.begin(), lean_1_.end(), 0.0);
  std::fill(min_memory_.begin(), min_memory_.end(), 0.0);
  frames_.clear();
  sum_stack_.clear();
  alpha_stack_.clear();
  ++stamp_;
  for (int v : stage_.members()) {
    for (int ti = 0; ti < degree_count_; ++ti) {
      const auto* opts = options(v, ti);
      if (!opts) {
        ++missing_[ti];
        continue;
      }
      for (int l = 0; l < static_cast<int>(opts->size()); ++l) {
        const auto& o = (*opts)[l];
        // S is successor-closed, so only incoming edges from outside can be cut.
        double bytes = 0;
        const auto& in = model.in_edge_ids[v];
        for (int i = 0; i < static_cast<int>(in.size()); ++i) {
          const Edge& e = model.edges[in[i]];
          if (!stage_.contains(e.from)) bytes += 2 * (e.bytes + o.sync_in_bytes[i]);
        }
        for (std::size_t g = 0; g < factor_.size(); ++g)  // factor 1: p + bytes/B, as Piper
          alpha_[g * alpha_size_ + alpha_offset_[v * degree_count_ + ti] + l] =
              factor_[g] * o.compute_time_s + bytes / b;
      }
      if (memory_objective_) account_memory(v, ti, +1);
    }
    account(v, +1);
    account_lean(v, +1);
  }
}

void PiperCursor::account_memory(int layer, int ti, double sign) {
  for (int y = 1; y <= max_y_; ++y) {
    double best = kInfinity;
    for (const auto& o : *options(layer, ti))
      best = std::min(best, o.memory_per_inflight_bytes * y + o.memory_fixed_bytes);
    min_memory_[ti * (max_y_ + 1) + y] += sign * best;
  }
}

void PiperCursor::add_cut_out_edge(int layer, int edge) {
  const Model& model = m_.model_;
  const Edge& e = model.edges[edge];
  const int pos = m_.edge_out_pos_[edge];
  const double b = m_.settings_.bandwidth_bytes_per_s;
  for (int ti = 0; ti < degree_count_; ++ti) {
    const auto* opts = options(layer, ti);
    if (!opts) continue;
    for (int l = 0; l < static_cast<int>(opts->size()); ++l)
      for (std::size_t g = 0; g < factor_.size(); ++g) {
        const std::size_t idx = g * alpha_size_ + alpha_offset_[layer * degree_count_ + ti] + l;
        alpha_stack_.push_back({idx, alpha_[idx]});
        alpha_[idx] += 2 * (e.bytes + (*opts)[l].sync_out_bytes[pos]) / b;
      }
  }
}

void PiperCursor::remove(int layer) {
  const Model& model = m_.model_;
  Frame f{layer, stage_.position(layer), sum_stack_.size(), alpha_stack_.size()};
  sum_stack_.insert(sum_stack_.end(), sum_time_.begin(), sum_time_.end());
  sum_stack_.insert(sum_stack_.end(), sum_a_.begin(), sum_a_.end());
  sum_stack_.insert(sum_stack_.end(), sum_b_.begin(), sum_b_.end());
  sum_stack_.insert(sum_stack_.end(), lean_a_.begin(), lean_a_.end());
  sum_stack_.insert(sum_stack_.end(), lean_b_.begin(), lean_b_.end());
  sum_stack_.insert(sum_stack_.end(), lean_1_.begin(), lean_1_.end());
  frames_.push_back(f);
  account(layer, -1);
  account_lean(layer, -1);
  for (int ti = 0; ti < degree_count_; ++ti) {
    if (!options(layer, ti))
      --missing_[ti];
    else if (memory_objective_)
      account_memory(layer, ti, -1);
  }
  stage_.remove(layer);
  // Its predecessors still in S now send to a layer outside S.
  for (int e : model.in_edge_ids[layer]) {
    int u = model.edges[e].from;
    if (!stage_.contains(u)) continue;
    account(u, -1);
    add_cut_out_edge(u, e);
    account(u, +1);
  }
  ++stamp_;
}

void PiperCursor::undo() {
  Frame f = frames_.back();
  frames_.pop_back();
  while (alpha_stack_.size() > f.saved_alphas) {
    alpha_[alpha_stack_.back().first] = alpha_stack_.back().second;
    alpha_stack_.pop_back();
  }
  const std::size_t n = sum_time_.size();
  std::copy_n(sum_stack_.begin() + f.saved_sums, n, sum_time_.begin());
  std::copy_n(sum_stack_.begin() + f.saved_sums + n, n, sum_a_.begin());
  std::copy_n(sum_stack_.begin() + f.saved_sums + 2 * n, n, sum_b_.begin());
  const std::size_t m = lean_a_.size(), at = f.saved_sums + 3 * n;
  std::copy_n(sum_stack_.begin() + at, m, lean_a_.begin());
  std::copy_n(sum_stack_.begin() + at + m, m, lean_b_.begin());
  std::copy_n(sum_stack_.begin() + at + 2 * m, m, lean_1_.begin());
  sum_stack_.resize(f.saved_sums);
  stage_.restore(f.layer, f.position);
  for (int ti = 0; ti < degree_count_; ++ti) {
    if (!options(f.layer, ti))
      ++missing_[ti];
    else if (memory_objective_)
      account_memory(f.layer, ti, +1);
  }
  ++stamp_;
}

KnapsackResult PiperCursor::solve(int shape, int y, double cutoff) {
  int ti = m_.shape_degree_index_[shape];
  int d = m_.shapes_[shape].data_parallel, g = m_.shapes_[shape].device_type;
  order_ = stage_.members();
  std::sort(order_.begin(), order_.end());
  if (items_.size() < order_.size()) items_.resize(order_.size());
  for (std::size_t i = 0; i < order_.size(); ++i) {
    const auto& opts = *options(order_[i], ti);
    items_[i].clear();
    for (int l = 0; l < static_cast<int>(opts.size()); ++l)
      items_[i].push_back({opts[l].memory_per_inflight_bytes * y + opts[l].memory_fixed_bytes,
                           contribution(order_[i], ti, l, d, g)});
  }
  return solve_knapsack(std::span(items_.data(), order_.size()),
                        limit_[static_cast<std::size_t>(g)], cutoff);
}

double PiperCursor::lower_bound(int shape) {
  int ti = m_.shape_degree_index_[shape];
  if (missing_[ti] > 0 || stage_.empty()) return kInfinity;
  if (memory_objective_) return min_memory_[ti * (max_y_ + 1) + 1];
  if (too_big(ti, m_.shapes_[shape].device_type, 1)) return kInfinity;
  return sum_time_[shape];
}

double PiperCursor::cost(int shape, int y, double cutoff) {
  int ti = m_.shape_degree_index_[shape];
  if (missing_[ti] > 0 || stage_.empty()) return kInfinity;
  if (memory_objective_) return min_memory_[ti * (max_y_ + 1) + std::min(y, max_y_)];
  if (sum_a_[shape] * y + sum_b_[shape] <=
      limit_[static_cast<std::size_t>(m_.shapes_[shape].device_type)])
    return sum_time_[shape];
  if (sum_time_[shape] >= cutoff) return sum_time_[shape];
  if (too_big(ti, m_.shapes_[shape].device_type, y)) return kInfinity;
  auto& stamps = cache_stamp_[shape];
  const bool cacheable = y < static_cast<int>(stamps.size());
  if (cacheable && stamps[y] == stamp_) {
    double v = cache_[shape][y];
    if (cache_exact_[shape][y] || v >= cutoff) return v;
  }
  KnapsackResult r = solve(shape, y, cutoff);
  if (cacheable) {
    stamps[y] = stamp_;
    cache_[shape][y] = r.cost;
    cache_exact_[shape][y] = r.exact;
  }
  return r.cost;
}

std::vector<std::pair<int, int>> PiperCursor::choice(int shape, int y) {
  int ti = m_.shape_degree_index_[shape];
  int d = m_.shapes_[shape].data_parallel, g = m_.shapes_[shape].device_type;
  std::vector<int> order = stage_.members();
  std::sort(order.begin(), order.end());
  std::vector<std::pair<int, int>> picks;
  if (memory_objective_ ||
      sum_a_[shape] * y + sum_b_[shape] <= limit_[static_cast<std::size_t>(g)]) {
    for (int v : order) {
      int l = 0;
      if (memory_objective_) {
        const auto& opts = *options(v, ti);
        for (int k = 1; k < static_cast<int>(opts.size()); ++k)
          if (opts[k].memory_per_inflight_bytes * y + opts[k].memory_fixed_bytes <
              opts[l].memory_per_inflight_bytes * y + opts[l].memory_fixed_bytes)
            l = k;
      } else {
        l = fastest(v, ti, d, g);
      }
      picks.push_back({v, l});
    }
    return picks;
  }
  KnapsackResult r = solve(shape, y, kInfinity);
  for (std::size_t i = 0; i < order.size() && !r.choice.empty(); ++i)
    picks.push_back({order[i], r.choice[i]});
  return picks;
}

std::unique_ptr<StageCursor> PiperCostModel::generic_cursor() const {
  return std::make_unique<PiperCursor>(*this);
}

}  // namespace paraplan
