// DAPPLE's cost functions.
#include "cost/dapple_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/error.h"

namespace paraplan {

DappleCostModel::DappleCostModel(const Model& model, DappleStates states, DappleSettings settings)
    : model_(model), states_(std::move(states)), settings_(std::move(settings)) {
  scale_ = static_cast<double>(settings_.global_batch) / model_.profile_batch_size;
}

int DappleCostModel::machine_of(int gpu) const {
  const auto& ends = settings_.machine_ends;
  return static_cast<int>(std::upper_bound(ends.begin(), ends.end(), gpu) - ends.begin());
}

namespace {

// AR(G, W) for |G| = n whose lowest and highest ids do or do not lie in different machines.
double allreduce(const DappleSettings& s, int n, bool crosses, double bytes) {
  if (n <= 1) return 0;
  const double nd = n;
  double volume = bytes * 2 * ((nd - 1) / nd);
  if (crosses) return volume / s.nccl_bytes_per_s;
  return volume / s.nvlink_bytes_per_s / std::floor(nd / 2);
}

}  // namespace

double DappleCostModel::allreduce_s(const std::vector<int>& g, double bytes) const {
  if (g.size() <= 1) return 0;
  auto [lo, hi] = std::minmax_element(g.begin(), g.end());
  return allreduce(settings_, static_cast<int>(g.size()), machine_of(*lo) != machine_of(*hi),
                   bytes);
}

double DappleCostModel::allreduce_s(int first, int count, double bytes) const {
  return allreduce(settings_, count, machine_of(first) != machine_of(first + count - 1), bytes);
}

double DappleCostModel::transfer_s(const std::vector<int>& from, const std::vector<int>& to,
                                   double bytes) const {
  auto [lo, hi] = std::minmax_element(to.begin(), to.end());
  int m = machine_of(*lo);
  if (m != machine_of(*hi)) return bytes / settings_.nccl_bytes_per_s;
  double outside = 0;
  for (int x : from) outside += machine_of(x) != m;
  if (outside > 0)
    return bytes / static_cast<double>(from.size()) * outside / settings_.ethernet_bytes_per_s;
  return bytes / settings_.nvlink_bytes_per_s;
}

double DappleCostModel::compute_s(int k, int j) const {
  double end = states_.prefix_compute_s[j];
  double start = k >= 0 ? states_.prefix_compute_s[k] : 0.0;
  return scale_ * (end - start);
}

double DappleCostModel::cut_bytes(int j) const {
  return scale_ * states_.output_activation_bytes[j];
}

double DappleCostModel::bottleneck_s(const DappleLayout& l) const {
  double p = 0;
  for (std::size_t s = 0; s < l.cuts.size(); ++s) {
    int from = s == 0 ? -1 : l.cuts[s - 1];
    p = std::max(p, compute_s(from, l.cuts[s]) / static_cast<double>(l.gpus[s].size()));
    if (s + 1 < l.cuts.size())
      p = std::max(p, transfer_s(l.gpus[s], l.gpus[s + 1],
                                 settings_.bottleneck_activation_factor * cut_bytes(l.cuts[s])));
  }
  return p;
}

double DappleCostModel::latency_s(const DappleLayout& l, double p) const {
  const long long m = settings_.global_batch / l.replicas / settings_.microbatch_size;
  if (m <= 0) return std::numeric_limits<double>::infinity();
  const double md = static_cast<double>(m);
  const double beta = p / md;
  double latency = beta * (md - 1) + total_compute_s() / l.replicas / md;
  const int stages = static_cast<int>(l.cuts.size());
  for (int s = 0; s + 1 < stages; ++s)
    latency += transfer_s(l.gpus[s], l.gpus[s + 1], cut_bytes(l.cuts[s]) / l.replicas / md);
  // All-reduce tail: stage s has s·β of backward slack. DAPPLE's parameter range for a non-last
  // stage runs one state past its end (parameter_sizes[b][e] with e exclusive).
  const auto& pre = states_.prefix_parameter_bytes;
  const int last = states_.size() - 1;
  double tail = 0;
  for (int s = 0; s < stages; ++s) {
    int before = s == 0 ? -1 : l.cuts[s - 1];
    int end = s + 1 < stages ? std::min(l.cuts[s] + 1, last) : last;
    double w = pre[end] - (before >= 0 ? pre[before] : 0.0);
    tail = std::max(tail, allreduce_s(l.gpus[s], w) - s * beta);
  }
  return latency + tail;
}

double DappleCostModel::data_parallel_latency_s() const {
  std::vector<int> all(devices());
  for (int i = 0; i < devices(); ++i) all[i] = i;
  return total_compute_s() / devices() +
         allreduce_s(all, states_.prefix_parameter_bytes[states_.size() - 1]);
}

Plan DappleCostModel::to_plan(const DappleLayout& l) const {
  Plan plan = Plan::of(PlanKind::kDapple);
  DappleDetail& dapple = plan.as<DappleDetail>();
  plan.schedule = Schedule::kOneFOneB;  // DAPPLE's early backward, synchronous
  dapple.pipeline_replicas = l.replicas;
  plan.microbatches =
      static_cast<int>(settings_.global_batch / l.replicas / settings_.microbatch_size);
  const double p = bottleneck_s(l);
  plan.objective = latency_s(l, p);
  plan.feasible = std::isfinite(plan.objective);
  dapple.speedup = plan.feasible ? total_compute_s() / plan.objective : 0.0;
  std::vector<bool> placed(model_.size(), false);
  for (std::size_t s = 0; s < l.cuts.size(); ++s) {
    Stage st;
    const bool last = s + 1 == l.cuts.size();
    if (last) {
      for (int v = 0; v < model_.size(); ++v)
        if (!placed[v]) st.layers.push_back(v);  // includes dropped sinks
    } else {
      for (int v : states_.covered_layers[l.cuts[s]])
        if (!placed[v]) st.layers.push_back(v);
      if (s == 0)  // dropped "Input" sources go with the first stage
        for (int v = 0; v < model_.size(); ++v)
          if (!placed[v] && model_.in_edge_ids[v].empty() &&
              std::find(st.layers.begin(), st.layers.end(), v) == st.layers.end() &&
              model_.layers[v].name.rfind("Input", 0) == 0)
            st.layers.push_back(v);
    }
    std::sort(st.layers.begin(), st.layers.end());
    for (int v : st.layers) placed[v] = true;
    st.option_index.assign(st.layers.size(), 0);
    st.device_ids = l.gpus[s];
    st.data_parallel = static_cast<int>(l.gpus[s].size());
    st.tensor_parallel = 1;
    int from = s == 0 ? -1 : l.cuts[s - 1];
    st.compute_time = compute_s(from, l.cuts[s]) / static_cast<double>(l.gpus[s].size());
    st.communication_time = last ? 0.0 : transfer_s(l.gpus[s], l.gpus[s + 1], cut_bytes(l.cuts[s]));
    st.time = std::max(st.compute_time, st.communication_time);
    plan.devices_used += st.data_parallel;
    plan.stages.push_back(std::move(st));
  }
  return plan;
}

}  // namespace paraplan
