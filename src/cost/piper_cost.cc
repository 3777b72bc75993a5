// Piper's time-per-sample model with incremental stage pricing for the pipeline planner.
#include "cost/piper_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "cost/piper_uniform_cursor.h"
#include "ir/error.h"

namespace paraplan {

PiperCostModel::PiperCostModel(const Model& model, PiperSettings settings)
    : model_(model), settings_(settings) {
  groups_ = settings_.groups();
  if (!settings_.device_groups.empty()) {
    long long total = 0;
    for (const auto& g : groups_) {
      if (g.count < 1 || !(g.memory_bytes > 0) || !(g.time_factor > 0))
        throw Error(ErrorKind::kInput, "cluster",
                    fmt::format("device group {}: needs devices, memory and a positive time "
                                "factor",
                                g.name));
      total += g.count;
    }
    if (total != settings_.max_devices)
      throw Error(ErrorKind::kInternal, "cluster", "the device groups must sum to K");
  }
  max_dp_sum_ = std::min(settings_.microbatches, settings_.max_devices);
  std::set<int> degrees;
  for (const auto& layer : model_.layers)
    for (const auto& d : layer.by_degree)
      if (!d.options.empty()) degrees.insert(d.degree);
  degrees_.assign(degrees.begin(), degrees.end());
  for (int g = 0; g < static_cast<int>(groups_.size()); ++g)
    for (int ti = 0; ti < static_cast<int>(degrees_.size()); ++ti) {
      int t = degrees_[ti];
      for (int d = 1; d <= max_dp_sum_ &&
                      static_cast<long long>(d) * t <= groups_[static_cast<std::size_t>(g)].count;
           ++d) {
        if (settings_.microbatches % d != 0) continue;
        if (settings_.data_parallel > 0 && d != settings_.data_parallel) continue;
        shapes_.push_back({t, d, g});
        shape_degree_index_.push_back(ti);
      }
    }
  edge_out_pos_.assign(model_.edges.size(), 0);
  edge_in_pos_.assign(model_.edges.size(), 0);
  for (int v = 0; v < model_.size(); ++v) {
    for (int i = 0; i < static_cast<int>(model_.out_edge_ids[v].size()); ++i)
      edge_out_pos_[model_.out_edge_ids[v][i]] = i;
    for (int i = 0; i < static_cast<int>(model_.in_edge_ids[v].size()); ++i)
      edge_in_pos_[model_.in_edge_ids[v][i]] = i;
  }
  uniform_ = piper_uniform_applies(*this);
}

std::vector<int> PiperCostModel::device_budgets() const {
  std::vector<int> counts;
  for (const auto& g : groups_) counts.push_back(g.count);
  return counts;
}

std::unique_ptr<StageCursor> PiperCostModel::cursor() const {
  if (uniform_) return make_piper_uniform_cursor(*this);
  return generic_cursor();
}

// Every stage has time >= compute/d and uses d·t devices, so the bottleneck τ satisfies
// K·τ >= Σ_stages d·t·τ >= Σ_layers t·p(layer, t); and each layer alone needs p/d with
// d <= min(N, K/t).
double PiperCostModel::objective_lower_bound() const {
  if (settings_.objective == PiperSettings::Objective::kMemory) return 0;
  double fastest_factor = kInfinity;  // the quickest group's (1 without groups)
  for (const auto& g : groups_) fastest_factor = std::min(fastest_factor, g.time_factor);
  double total = 0, single = 0;
  for (const auto& layer : model_.layers) {
    double best_total = kInfinity, best_single = kInfinity;
    for (const auto& deg : layer.by_degree) {
      int d_max = std::min(max_dp_sum_, settings_.max_devices / deg.degree);
      if (d_max < 1) continue;
      for (const auto& o : deg.options) {
        best_total = std::min(best_total, deg.degree * o.compute_time_s * fastest_factor);
        best_single = std::min(best_single, o.compute_time_s * fastest_factor / d_max);
      }
    }
    if (!(best_total < kInfinity)) return 0;
    total += best_total;
    single = std::max(single, best_single);
  }
  return std::max(total / settings_.max_devices, single);
}

// A stage's time is at least its layers' compute over d (times its group's factor), so
// d·t >= Σ t·p / τ; each of its d·t devices holds Σ (a·y + b) <= limit at degree t with y >= 1,
// so d·t >= t >= Σ t·(a + b) / limit >= Σ min over degrees and options of t·(a + b) / limit.
PipelineCostModel::LayerBounds PiperCostModel::layer_bounds() const {
  LayerBounds bounds;
  if (settings_.objective == PiperSettings::Objective::kMemory) return bounds;
  double fastest_factor = kInfinity;
  for (const auto& g : groups_) {
    fastest_factor = std::min(fastest_factor, g.time_factor);
    bounds.memory_limit = std::max(bounds.memory_limit, g.memory_bytes);
  }
  for (const auto& layer : model_.layers) {
    double work = kInfinity, memory = kInfinity;
    for (const auto& deg : layer.by_degree)
      for (const auto& o : deg.options) {
        work = std::min(work, deg.degree * o.compute_time_s * fastest_factor);
        memory =
            std::min(memory, deg.degree * (o.memory_per_inflight_bytes + o.memory_fixed_bytes));
      }
    bounds.work.push_back(std::isfinite(work) ? work : 0.0);
    bounds.memory.push_back(std::isfinite(memory) ? memory : 0.0);
  }
  return bounds;
}

// ---------------------------------------------------------------------------------------------
// From-scratch plan evaluation (Piper's getTPSForResult).
Plan PiperCostModel::evaluate(const Plan& input) const {
  Plan plan = input;
  if (!plan.get_if<PipelineDetail>()) plan.detail = PipelineDetail{};
  plan.microbatches = settings_.microbatches;
  const Model& model = model_;
  const double b = settings_.bandwidth_bytes_per_s;
  const double n = settings_.microbatches;
  std::vector<int> stage_of(model.size(), -1);
  for (int i = 0; i < static_cast<int>(plan.stages.size()); ++i) {
    for (int v : plan.stages[i].layers) {
      if (v < 0 || v >= model.size())
        throw Error(ErrorKind::kInput, "plan", fmt::format("stage {}: no layer index {}", i, v));
      if (stage_of[v] >= 0)
        throw Error(
            ErrorKind::kInput, "plan",
            fmt::format("layer {} is in stages {} and {}", model.layers[v].id, stage_of[v], i));
      stage_of[v] = i;
    }
  }
  for (int v = 0; v < model.size(); ++v)
    if (stage_of[v] < 0)
      throw Error(ErrorKind::kInput, "plan",
                  fmt::format("layer {} is in no stage", model.layers[v].id));
  for (const auto& e : model.edges)
    if (stage_of[e.from] > stage_of[e.to])
      throw Error(ErrorKind::kInput, "plan",
                  fmt::format("edge {} -> {} goes backwards from stage {} to stage {}",
                              model.layers[e.from].id, model.layers[e.to].id, stage_of[e.from],
                              stage_of[e.to]));
  long long dp_sum = 0, devices = 0;
  std::vector<long long> group_devices(groups_.size(), 0);
  for (int i = 0; i < static_cast<int>(plan.stages.size()); ++i) {
    const Stage& st = plan.stages[i];
    if (st.device_type < 0 || st.device_type >= static_cast<int>(groups_.size()))
      throw Error(ErrorKind::kInput, "plan",
                  fmt::format("stage {}: device group {} does not exist ({} group(s))", i,
                              st.device_type, groups_.size()));
    group_devices[static_cast<std::size_t>(st.device_type)] +=
        static_cast<long long>(st.data_parallel) * st.tensor_parallel;
    if (st.data_parallel < 1 || settings_.microbatches % st.data_parallel != 0)
      throw Error(ErrorKind::kInput, "plan",
                  fmt::format("stage {}: data-parallel degree {} must divide the {} micro-batches",
                              i, st.data_parallel, settings_.microbatches));
    if (st.tensor_parallel < 1)
      throw Error(ErrorKind::kInput, "plan",
                  fmt::format("stage {}: tensor-parallel degree {}", i, st.tensor_parallel));
    dp_sum += st.data_parallel;
    devices += static_cast<long long>(st.data_parallel) * st.tensor_parallel;
  }
  if (dp_sum > settings_.microbatches)
    throw Error(ErrorKind::kInput, "plan",
                fmt::format("the data-parallel degrees sum to {}, more than the {} micro-batches",
                            dp_sum, settings_.microbatches));
  if (devices > settings_.max_devices)
    throw Error(
        ErrorKind::kInput, "plan",
        fmt::format("the plan uses {} devices; {} are available", devices, settings_.max_devices));
  for (std::size_t g = 0; g < groups_.size() && !settings_.device_groups.empty(); ++g)
    if (group_devices[g] > groups_[g].count)
      throw Error(ErrorKind::kInput, "plan",
                  fmt::format("the plan uses {} devices of group {}; it has {}", group_devices[g],
                              groups_[g].name, groups_[g].count));
  plan.devices_used = static_cast<int>(devices);
  plan.feasible = true;
  plan.objective = 0;
  long long suffix = dp_sum;
  for (int i = 0; i < static_cast<int>(plan.stages.size()); ++i) {
    Stage& st = plan.stages[i];
    const int d = st.data_parallel;
    st.inflight_microbatches = static_cast<int>((suffix + d - 1) / d);
    suffix -= d;
    if (st.option_index.size() != st.layers.size())
      throw Error(ErrorKind::kInput, "plan", fmt::format("stage {}: one option per layer", i));
    double compute = 0, edge_bytes = 0, dp_bytes = 0, memory = 0, optimizer = 0;
    const auto& group = groups_[static_cast<std::size_t>(st.device_type)];
    const double factor = group.time_factor;
    for (std::size_t j = 0; j < st.layers.size(); ++j) {
      int v = st.layers[j];
      const auto* opts = model.layers[v].options_for(st.tensor_parallel);
      if (!opts || st.option_index[j] < 0 || st.option_index[j] >= static_cast<int>(opts->size()))
        throw Error(ErrorKind::kInput, "plan",
                    fmt::format("stage {}: layer {} has no option {} at tensor-parallel degree {}",
                                i, model.layers[v].id, st.option_index[j], st.tensor_parallel));
      const LayerOption& o = (*opts)[st.option_index[j]];
      compute += factor * o.compute_time_s;
      const auto& in = model.in_edge_ids[v];
      for (std::size_t k = 0; k < in.size(); ++k) {
        const Edge& e = model.edges[in[k]];
        if (stage_of[e.from] != i) edge_bytes += 2 * (e.bytes + o.sync_in_bytes[k]);
      }
      const auto& out = model.out_edge_ids[v];
      for (std::size_t k = 0; k < out.size(); ++k) {
        const Edge& e = model.edges[out[k]];
        if (stage_of[e.to] != i) edge_bytes += 2 * (e.bytes + o.sync_out_bytes[k]);
      }
      dp_bytes += 4.0 * (d - 1) * o.parameter_bytes / d / n;
      optimizer += factor * o.optimizer_time_s / n;
      memory += o.memory_per_inflight_bytes * st.inflight_microbatches + o.memory_fixed_bytes;
    }
    st.compute_time = compute / d;
    st.communication_time = edge_bytes / d / b;
    st.allreduce_time = dp_bytes / settings_.allreduce_bandwidth();
    st.optimizer_time = optimizer;
    // Piper's expression, bit for bit, when no all-reduce bandwidth of its own is given.
    st.time =
        (settings_.allreduce_bandwidth_bytes_per_s > 0 ? edge_bytes / d / b + st.allreduce_time
                                                       : (edge_bytes / d + dp_bytes) / b) +
        compute / d + optimizer;
    st.memory_bytes = memory;
    // A relative slack of 1e-12 absorbs the rounding of the planner's incremental sums.
    if (memory > group.memory_bytes * (1 + 1e-12)) plan.feasible = false;
    plan.objective = std::max(plan.objective, st.time);
  }
  if (!plan.feasible) plan.objective = kInfinity;
  return plan;
}

}  // namespace paraplan
