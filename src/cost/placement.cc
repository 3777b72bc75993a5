#include "cost/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "ir/error.h"

namespace paraplan {
namespace {
constexpr double kUnplaceable = std::numeric_limits<double>::infinity();
}  // namespace

std::map<std::pair<int, int>, double> stage_cut_bytes(const Model& model, const Plan& plan) {
  std::vector<int> stage_of(static_cast<std::size_t>(model.size()), -1);
  for (std::size_t s = 0; s < plan.stages.size(); ++s)
    for (int v : plan.stages[s].layers)
      stage_of.at(static_cast<std::size_t>(v)) = static_cast<int>(s);
  std::map<std::pair<int, int>, double> cut;
  for (const Edge& e : model.edges) {
    const int a = stage_of.at(static_cast<std::size_t>(e.from));
    const int b = stage_of.at(static_cast<std::size_t>(e.to));
    if (a >= 0 && b >= 0 && a != b) cut[{a, b}] += e.bytes;
  }
  return cut;
}

double stage_gradient_bytes(const Model& model, const Stage& stage) {
  double bytes = 0;
  for (std::size_t j = 0; j < stage.layers.size(); ++j) {
    const auto* opts = model.layers.at(static_cast<std::size_t>(stage.layers[j]))
                           .options_for(stage.tensor_parallel);
    if (opts) bytes += opts->at(static_cast<std::size_t>(stage.option_index.at(j))).parameter_bytes;
  }
  return bytes;
}

PlacementCostModel::PlacementCostModel(const Model& model, const Plan& plan,
                                       const Topology& topology, int microbatches,
                                       std::vector<int> machine_of_device,
                                       std::vector<int> group_of_device)
    : topology_(topology),
      stages_(static_cast<int>(plan.stages.size())),
      n_(microbatches),
      machine_of_device_(std::move(machine_of_device)),
      group_of_device_(std::move(group_of_device)) {
  if (!group_of_device_.empty() &&
      static_cast<int>(group_of_device_.size()) != topology.device_count())
    throw Error(ErrorKind::kInternal, "placement", "one group per device");
  for (const Stage& st : plan.stages) group_of_stage_.push_back(st.device_type);
  if (!machine_of_device_.empty() &&
      static_cast<int>(machine_of_device_.size()) != topology.device_count())
    throw Error(ErrorKind::kInternal, "placement", "one machine per device");
  if (microbatches < 1) throw Error(ErrorKind::kInput, "plan", "needs at least one micro-batch");
  std::vector<int> first_slot;
  for (int s = 0; s < stages_; ++s) {
    const Stage& st = plan.stages[static_cast<std::size_t>(s)];
    first_slot.push_back(slot_count());
    for (int r = 0; r < st.data_parallel; ++r)
      for (int k = 0; k < st.tensor_parallel; ++k) {
        group_head_.push_back(slot_count() - k);
        slots_.push_back({s, r, k});
      }
    base_.push_back(st.compute_time + st.optimizer_time);
  }
  if (slot_count() > topology.device_count())
    throw Error(ErrorKind::kInput, "plan",
                fmt::format("the plan needs {} devices; the cluster has {}", slot_count(),
                            topology.device_count()));
  const auto slot = [&](int s, int r, int k) {
    const Stage& st = plan.stages[static_cast<std::size_t>(s)];
    return first_slot[static_cast<std::size_t>(s)] + r * st.tensor_parallel + k;
  };
  // Pipeline traffic, per ordered stage pair in stage order.
  for (const auto& [pair, bytes] : stage_cut_bytes(model, plan)) {
    const auto [a, b] = pair;
    const Stage& sa = plan.stages[static_cast<std::size_t>(a)];
    const Stage& sb = plan.stages[static_cast<std::size_t>(b)];
    std::map<std::pair<int, int>, int> count;  // (replica of a, replica of b) → micro-batches
    for (int j = 0; j < microbatches; ++j) ++count[{j % sa.data_parallel, j % sb.data_parallel}];
    const int ranks = std::max(sa.tensor_parallel, sb.tensor_parallel);
    for (const auto& [replicas, m] : count)
      for (int k = 0; k < ranks; ++k) {
        const int from = slot(a, replicas.first, k % sa.tensor_parallel);
        const int to = slot(b, replicas.second, k % sb.tensor_parallel);
        const double flow_bytes = m * bytes / ranks;
        flows_.push_back({from, to, flow_bytes, m, false, a, b});  // activations
        flows_.push_back({to, from, flow_bytes, m, false, a, b});  // their gradients
      }
  }
  // Each stage's ring all-reduce, per rank.
  for (int s = 0; s < stages_; ++s) {
    const Stage& st = plan.stages[static_cast<std::size_t>(s)];
    const int d = st.data_parallel;
    if (d < 2) continue;
    const double weights = stage_gradient_bytes(model, st);
    if (!(weights > 0)) continue;
    for (int k = 0; k < st.tensor_parallel; ++k)
      for (int r = 0; r < d; ++r)
        flows_.push_back({slot(s, r, k), slot(s, (r + 1) % d, k), 2.0 * (d - 1) / d * weights,
                          2 * (d - 1), true, s, -1});
  }
}

std::vector<PlacementCostModel::StageCost> PlacementCostModel::stage_costs(
    const std::vector<int>& device_of_slot) const {
  const int channels = topology_.channel_count();
  std::vector<double> load(2 * static_cast<std::size_t>(channels), 0.0);  // pipeline, all-reduce
  const auto placed = [&](const Flow& f) {
    return device_of_slot[static_cast<std::size_t>(f.from)] >= 0 &&
           device_of_slot[static_cast<std::size_t>(f.to)] >= 0;
  };
  for (const Flow& f : flows_) {
    if (!placed(f)) continue;
    double* l = load.data() + (f.allreduce ? channels : 0);
    topology_.for_each_channel(device_of_slot[static_cast<std::size_t>(f.from)],
                               device_of_slot[static_cast<std::size_t>(f.to)],
                               [&](int c) { l[c] += f.bytes; });
  }
  std::vector<StageCost> out(static_cast<std::size_t>(stages_));
  // A stage on a device of another group: infinitely slow.
  if (!group_of_device_.empty())
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const int device = device_of_slot[i];
      const int stage = slots_[i].stage;
      if (device >= 0 && group_of_device_[static_cast<std::size_t>(device)] !=
                             group_of_stage_[static_cast<std::size_t>(stage)])
        out[static_cast<std::size_t>(stage)].base_s = kUnplaceable;
    }
  // A tensor-parallel group split across machines: infinitely slow.
  if (!machine_of_device_.empty())
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const int head = group_head_[i];
      const int a = device_of_slot[i], b = device_of_slot[static_cast<std::size_t>(head)];
      if (a >= 0 && b >= 0 &&
          machine_of_device_[static_cast<std::size_t>(a)] !=
              machine_of_device_[static_cast<std::size_t>(b)])
        out[static_cast<std::size_t>(slots_[i].stage)].base_s = kUnplaceable;
    }
  std::vector<double> bandwidth_s(static_cast<std::size_t>(stages_) * 2, 0.0);
  std::vector<double> latency_s(static_cast<std::size_t>(stages_) * 2, 0.0);
  for (const Flow& f : flows_) {
    if (!placed(f)) continue;
    const int from = device_of_slot[static_cast<std::size_t>(f.from)];
    const int to = device_of_slot[static_cast<std::size_t>(f.to)];
    const double* l = load.data() + (f.allreduce ? channels : 0);
    double busiest = 0, latency = 0;
    topology_.for_each_channel(from, to, [&](int c) {
      busiest = std::max(busiest, l[c] / topology_.channel_bandwidth(c));
      latency += topology_.edges()[static_cast<std::size_t>(c / 2)].latency_s;
    });
    for (int s : {f.stage, f.other_stage}) {
      if (s < 0) continue;
      const std::size_t i = static_cast<std::size_t>(s) * 2 + (f.allreduce ? 1 : 0);
      bandwidth_s[i] = std::max(bandwidth_s[i], busiest);
      latency_s[i] = std::max(latency_s[i], f.messages * latency);
    }
  }
  for (int s = 0; s < stages_; ++s) {
    StageCost& c = out[static_cast<std::size_t>(s)];
    c.base_s = c.base_s == kUnplaceable ? kUnplaceable : base_[static_cast<std::size_t>(s)];
    c.pipeline_s = (bandwidth_s[2 * s] + latency_s[2 * s]) / n_;
    c.allreduce_s = (bandwidth_s[2 * s + 1] + latency_s[2 * s + 1]) / n_;
  }
  return out;
}

double PlacementCostModel::cost(const std::vector<int>& device_of_slot) const {
  double worst = 0;
  for (const StageCost& c : stage_costs(device_of_slot)) worst = std::max(worst, c.total());
  return worst;
}

double PlacementCostModel::lower_bound() const {
  std::vector<double> pipeline(static_cast<std::size_t>(stages_), 0.0), ring = pipeline;
  const double widest = topology_.max_bandwidth_bytes_per_s();
  for (const Flow& f : flows_) {
    auto& term = f.allreduce ? ring : pipeline;
    for (int s : {f.stage, f.other_stage})
      if (s >= 0)
        term[static_cast<std::size_t>(s)] =
            std::max(term[static_cast<std::size_t>(s)], f.bytes / widest);
  }
  double bound = 0;
  for (int s = 0; s < stages_; ++s)
    bound = std::max(
        bound,
        base_[static_cast<std::size_t>(s)] +
            (pipeline[static_cast<std::size_t>(s)] + ring[static_cast<std::size_t>(s)]) / n_);
  return bound;
}

std::vector<int> PlacementCostModel::rank_order() const {
  std::vector<int> order(slots_.size());
  if (group_of_device_.empty()) {
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    return order;
  }
  std::vector<bool> used(group_of_device_.size(), false);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const int group = group_of_stage_[static_cast<std::size_t>(slots_[i].stage)];
    int device = 0;
    while (device < device_count() && (used[static_cast<std::size_t>(device)] ||
                                       group_of_device_[static_cast<std::size_t>(device)] != group))
      ++device;
    if (device == device_count())
      throw Error(ErrorKind::kInput, "plan",
                  fmt::format("stage {} needs more devices of group {} than the cluster has",
                              slots_[i].stage, group));
    used[static_cast<std::size_t>(device)] = true;
    order[i] = device;
  }
  return order;
}

void PlacementCostModel::apply(const std::vector<int>& device_of_slot, Plan& plan) const {
  for (auto& st : plan.stages) st.device_ids.clear();
  for (std::size_t i = 0; i < slots_.size(); ++i)
    plan.stages[static_cast<std::size_t>(slots_[i].stage)].device_ids.push_back(device_of_slot[i]);
}

std::vector<int> PlacementCostModel::read(const Plan& plan) const {
  std::vector<int> place;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const Stage& st = plan.stages[s];
    if (static_cast<int>(st.device_ids.size()) != st.devices())
      throw Error(ErrorKind::kInput, "plan",
                  fmt::format("stage {} names {} devices; it needs d × t = {}", s,
                              st.device_ids.size(), st.devices()));
    for (int id : st.device_ids) {
      if (id < 0 || id >= device_count())
        throw Error(
            ErrorKind::kInput, "plan",
            fmt::format("stage {} names device {}; the cluster has {}", s, id, device_count()));
      place.push_back(id);
    }
  }
  if (static_cast<int>(place.size()) != slot_count())
    throw Error(ErrorKind::kInternal, "plan", "the plan does not match its placement model");
  return place;
}

std::vector<double> PlacementCostModel::channel_bytes(
    const std::vector<int>& device_of_slot) const {
  std::vector<double> bytes(static_cast<std::size_t>(topology_.channel_count()), 0.0);
  for (const Flow& f : flows_) {
    const int from = device_of_slot[static_cast<std::size_t>(f.from)];
    const int to = device_of_slot[static_cast<std::size_t>(f.to)];
    if (from >= 0 && to >= 0)
      topology_.for_each_channel(from, to,
                                 [&](int c) { bytes[static_cast<std::size_t>(c)] += f.bytes; });
  }
  return bytes;
}

}  // namespace paraplan
