#include "cost/analytic_mixed.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/error.h"
#include "ir/topology.h"
#include "ir/training_rules.h"

namespace paraplan {
namespace {

[[noreturn]] void bad_request(const std::string& message) {
  throw Error(ErrorKind::kUsage, "", message);
}

}  // namespace

MixedAnalyticModel::MixedAnalyticModel(TransformerConfig model, Cluster cluster,
                                       std::vector<Calibration> calibrations, int devices)
    : model_(std::move(model)), cluster_(std::move(cluster)), cal_(std::move(calibrations)) {
  const std::size_t types = cluster_.device_types.size();
  if (cal_.size() != types) bad_request("one calibration per device type is needed");
  if (devices < 1 || devices > cluster_.device_count())
    bad_request(
        fmt::format("{} devices asked of a cluster of {}", devices, cluster_.device_count()));
  if (cluster_.tiers.empty())
    bad_request("the cluster has no link tiers; the analytic model needs them");
  devices_of_type_.assign(types, {});
  machine_size_of_type_.assign(types, 0);
  tier0_of_type_.assign(types, cluster_.tiers[0]);
  tier1_of_type_.assign(types, cluster_.tiers.back());
  const std::vector<int> ends = cluster_.machine_ends();
  int id = 0;
  for (int m = 0; m < cluster_.machine_count(); ++m) {
    const auto type =
        static_cast<std::size_t>(cluster_.machine_device_type[static_cast<std::size_t>(m)]);
    const int size = cluster_.machine_sizes[static_cast<std::size_t>(m)];
    machine_size_of_type_[type] = std::max(machine_size_of_type_[type], size);
    for (int k = 0; k < size; ++k, ++id) {
      machine_of_device_.push_back(m);
      if (id < devices) devices_of_type_[type].push_back(id);
    }
  }
  if (cluster_.links.empty()) return;
  // A network graph: each type's links are what its routes give (NVLink or PCIe inside one of its
  // machines; its NICs to another of its machines, else to any other machine).
  const Topology topology = cluster_topology(cluster_);
  const auto narrowest = [&](int from, const std::vector<int>& to) {
    LinkTier t{"", std::numeric_limits<double>::infinity(), 0, 0};
    for (int d : to) {
      t.bandwidth_bytes_per_s =
          std::min(t.bandwidth_bytes_per_s, topology.route_bandwidth_bytes_per_s(from, d));
      t.latency_s = std::max(t.latency_s, topology.route_latency_s(from, d));
    }
    return t;
  };
  for (std::size_t type = 0; type < types; ++type) {
    int home = -1, other_own = -1, other_any = -1;
    for (int m = 0; m < cluster_.machine_count(); ++m) {
      const bool own =
          cluster_.machine_device_type[static_cast<std::size_t>(m)] == static_cast<int>(type);
      if (own && home < 0)
        home = m;
      else if (own && other_own < 0)
        other_own = m;
      else if (other_any < 0 && home >= 0 && m != home)
        other_any = m;
    }
    if (home < 0) continue;
    const int first = ends[static_cast<std::size_t>(home)] -
                      cluster_.machine_sizes[static_cast<std::size_t>(home)];
    std::vector<int> inside;
    for (int d = first + 1; d < ends[static_cast<std::size_t>(home)]; ++d) inside.push_back(d);
    if (!inside.empty()) {
      tier0_of_type_[type] = narrowest(first, inside);
      tier0_of_type_[type].name = "inside a machine";
    }
    if (other_any < 0)
      for (int m = 0; m < home && other_any < 0; ++m) other_any = m;
    const int other = other_own >= 0 ? other_own : other_any;
    if (other >= 0) {
      // Local rank 0 to local rank 0 (on a rail-optimised fabric, the same rail).
      const int to = ends[static_cast<std::size_t>(other)] -
                     cluster_.machine_sizes[static_cast<std::size_t>(other)];
      tier1_of_type_[type] = narrowest(first, {to});
      tier1_of_type_[type].name = "between machines";
    }
  }
}

Cluster MixedAnalyticModel::type_cluster(int device_type, int devices, bool one_machine) const {
  const auto type = static_cast<std::size_t>(device_type);
  Cluster c;
  c.name = cluster_.name + " (" + cluster_.device_types[type].name + ")";
  c.device_types = {cluster_.device_types[type]};
  const int node = one_machine ? devices : std::max(1, machine_size_of_type_[type]);
  for (int left = devices; left > 0; left -= node) {
    c.machine_sizes.push_back(std::min(node, left));
    c.machine_device_type.push_back(0);
  }
  c.tiers = {tier0_of_type_[type], tier1_of_type_[type]};
  return c;
}

std::vector<std::vector<int>> MixedAnalyticModel::segment_devices(const MixedConfig& config) const {
  std::vector<std::size_t> next(cluster_.device_types.size(), 0);
  std::vector<std::vector<int>> out;
  for (const MixedSegment& g : config.segments) {
    const auto type = static_cast<std::size_t>(g.device_type);
    std::vector<int> ids;
    for (int d = 0; d < g.devices() && next[type] < devices_of_type_[type].size(); ++d)
      ids.push_back(devices_of_type_[type][next[type]++]);
    out.push_back(std::move(ids));
  }
  return out;
}

AnalyticCostModel MixedAnalyticModel::segment_model(const MixedConfig& config, int s) const {
  const MixedSegment& g = config.segments[static_cast<std::size_t>(s)];
  const std::vector<int> ids = segment_devices(config)[static_cast<std::size_t>(s)];
  bool one_machine = !ids.empty();
  for (int d : ids)
    one_machine = one_machine && machine_of_device_[static_cast<std::size_t>(d)] ==
                                     machine_of_device_[static_cast<std::size_t>(ids[0])];
  return AnalyticCostModel(model_,
                           type_cluster(g.device_type, g.tp * g.dp * config.stages(), one_machine),
                           cal_[static_cast<std::size_t>(g.device_type)]);
}

double MixedAnalyticModel::boundary_send_extra_s(const MixedConfig& config, int s) const {
  if (config.segments.size() < 2) return 0;
  const MixedSegment& g = config.segments[static_cast<std::size_t>(s)];
  const TrainingConfig t = segment_config(config, s);
  // Every device its own machine: the sends cross the cluster's outermost tier.
  Cluster apart = type_cluster(g.device_type, g.tp * g.dp * config.stages());
  apart.machine_sizes.assign(static_cast<std::size_t>(apart.device_count()), 1);
  apart.machine_device_type.assign(apart.machine_sizes.size(), 0);
  apart.tiers[1] = cluster_.tiers.back();
  const AnalyticCostModel crossing(model_, apart, cal_[static_cast<std::size_t>(g.device_type)]);
  const double own = segment_model(config, s).block_costs(t).p2p_send_s;
  return stage_sends(t) / 2.0 * (crossing.block_costs(t).p2p_send_s - own);
}

TrainingConfig MixedAnalyticModel::segment_config(const MixedConfig& config, int s) const {
  const MixedSegment& g = config.segments[static_cast<std::size_t>(s)];
  TrainingConfig t;
  t.seq_len = config.seq_len;
  t.global_batch = config.global_batch;
  t.micro_batch = config.samples_per_microbatch / g.dp;
  t.tp = g.tp;
  t.dp = g.dp;
  t.pp = config.stages();
  t.recompute = config.recompute;
  t.sequence_parallel = config.sequence_parallel && g.tp > 1;
  t.zero_stage = config.zero_stage;
  t.attention = config.attention;
  t.stage_layers = config.stage_layers;
  // The megatron stack's overlaps where they apply (tensor-parallel with sequence parallelism,
  // the parameter gather with the distributed optimizer), as the homogeneous planner sets them.
  StackChoices fixed;
  fixed.overlap_grad_reduce = config.overlap_grad_reduce;
  apply_stack_defaults(t, fixed);
  return t;
}

void MixedAnalyticModel::check(const MixedConfig& config) const {
  if (config.segments.empty()) bad_request("a mixed pipeline needs at least one segment");
  if (config.zero_stage < 0 || config.zero_stage > 2)
    bad_request(
        fmt::format("ZeRO stage {}: a mixed pipeline runs ZeRO 0, 1 or 2", config.zero_stage));
  if (config.samples_per_microbatch < 1 || config.global_batch % config.samples_per_microbatch != 0)
    bad_request(
        fmt::format("a pipeline micro-batch of {} sequences does not divide the batch of {}",
                    config.samples_per_microbatch, config.global_batch));
  std::vector<int> used(cluster_.device_types.size(), 0);
  for (std::size_t s = 0; s < config.segments.size(); ++s) {
    const MixedSegment& g = config.segments[s];
    if (g.device_type < 0 || g.device_type >= static_cast<int>(used.size()))
      bad_request(fmt::format("segment {}: no device type {}", s, g.device_type));
    if (g.tp < 1 || g.dp < 1 || g.pp < 1)
      bad_request(fmt::format("segment {}: a width below 1", s));
    if (config.samples_per_microbatch % g.dp != 0)
      bad_request(fmt::format("segment {}: {} replicas do not split a micro-batch of {} sequences",
                              s, g.dp, config.samples_per_microbatch));
    used[static_cast<std::size_t>(g.device_type)] += g.devices();
    segment_model(config, static_cast<int>(s)).check(segment_config(config, static_cast<int>(s)));
  }
  for (std::size_t k = 0; k < used.size(); ++k)
    if (used[k] > static_cast<int>(devices_of_type_[k].size()))
      bad_request(fmt::format("{} {} devices used; the job has {}", used[k],
                              cluster_.device_types[k].name, devices_of_type_[k].size()));
}

MixedResult MixedAnalyticModel::evaluate(const MixedConfig& config) const {
  check(config);
  const int stages = config.stages();
  const int layers = static_cast<int>(model_.num_layers);
  MixedResult r;
  r.stage_layers =
      config.stage_layers.empty() ? even_stage_split(layers, stages) : config.stage_layers;
  const double microbatches = static_cast<double>(config.microbatches());
  double work_max = 0, work_sum = 0, overhead = 0, peak_flops = 0;
  const std::vector<std::vector<int>> devices = segment_devices(config);
  int stage = 0, layer = 0;
  for (std::size_t s = 0; s < config.segments.size(); ++s) {
    const MixedSegment& g = config.segments[s];
    const AnalyticCostModel cost = segment_model(config, static_cast<int>(s));
    const TrainingConfig t = segment_config(config, static_cast<int>(s));
    const BlockCosts c = cost.block_costs(t);
    const double boundary = boundary_send_extra_s(config, static_cast<int>(s));
    const auto type = static_cast<std::size_t>(g.device_type);
    overhead = std::max(overhead, cal_[type].iteration_overhead_s);
    peak_flops += g.devices() * cluster_.device_types[type].peak_flops_per_s;
    for (int k = 0; k < g.pp; ++k, ++stage) {
      MixedStage st;
      st.segment = static_cast<int>(s);
      st.device_type = g.device_type;
      st.tp = g.tp;
      st.dp = g.dp;
      st.first_layer = layer;
      st.layers = r.stage_layers[static_cast<std::size_t>(stage)];
      layer += st.layers;
      const bool first = stage == 0, last = stage == stages - 1;
      // The segment's first stage receives from (and its last sends to) another segment.
      const int crossings =
          (k == 0 && s > 0 ? 1 : 0) + (k == g.pp - 1 && s + 1 < config.segments.size() ? 1 : 0);
      st.time_per_microbatch_s =
          cost.stage_work_s(t, c, first, last, st.layers) + crossings * boundary;
      st.memory = cost.stage_memory(t, c, stage, st.layers);
      st.memory_limit_bytes = cluster_.device_types[type].memory_limit_bytes();
      const auto [dense, expert] = cost.stage_parameters(c, t, stage, st.layers);
      // Gradient reduction may hide behind the last micro-batch's backward (two thirds of it).
      st.sync_s = cost.gradient_sync_s(t, dense, expert, st.time_per_microbatch_s * 2 / 3);
      st.optimizer_s = cost.optimizer_step_s(t, dense, expert);
      const auto& ids = devices[s];
      st.device_ids.assign(ids.begin() + k * g.tp * g.dp, ids.begin() + (k + 1) * g.tp * g.dp);
      work_max = std::max(work_max, st.time_per_microbatch_s);
      work_sum += st.time_per_microbatch_s;
      r.dp_allreduce_s = std::max(r.dp_allreduce_s, st.sync_s);
      r.optimizer_s = std::max(r.optimizer_s, st.optimizer_s);
      r.fits = r.fits && st.memory.peak_bytes <= st.memory_limit_bytes;
      r.stages.push_back(std::move(st));
    }
  }
  // 1F1B: the slowest stage paces every micro-batch; the others add the fill and drain.
  r.pipeline_s = microbatches * work_max + (work_sum - work_max);
  r.bubble_s = work_sum - work_max;
  r.iteration_time_s = r.pipeline_s + r.dp_allreduce_s + r.optimizer_s + overhead;
  const double s = static_cast<double>(config.seq_len), h = static_cast<double>(model_.hidden_size);
  const double q_dim = static_cast<double>(model_.num_attention_heads * model_.head_dim);
  const double vocab = static_cast<double>(model_.vocab_size);
  const double tokens = static_cast<double>(config.global_batch) * s;
  r.tokens_per_s = tokens / r.iteration_time_s;
  const double model_flops =
      tokens * (6 * (model_.active_parameters() - model_.embedding_parameters()) +
                12.0 * static_cast<double>(model_.num_layers) * q_dim * s + 6 * h * vocab);
  r.tflops_per_device = model_flops / r.iteration_time_s / config.devices() / 1e12;
  r.mfu = model_flops / r.iteration_time_s / peak_flops;
  return r;
}

}  // namespace paraplan
