// The layer-model planners' answers in words: Piper's, DAPPLE's and the intra-op planner's.
#include "api/plan_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "ir/units.h"

namespace paraplan::api {
namespace {

// "3-7,9": the layers' ids as ranges.
std::string id_ranges(const std::vector<int>& layers, const Model& model) {
  std::vector<long long> ids;
  for (int v : layers) ids.push_back(model.layers[v].id);
  std::sort(ids.begin(), ids.end());
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", ids[i]) : fmt::format("{}-{}", ids[i], ids[j]);
    i = j + 1;
  }
  return out;
}

// Where each stage runs and, on a cluster's network, what the placement gains.
std::string placement_lines(const Plan& plan, const PipelinePlanResult& result,
                            const PiperSettings& settings) {
  std::string out = "devices:";
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const Stage& st = plan.stages[s];
    const std::string group =
        settings.device_groups.empty()
            ? ""
            : " " + settings.device_groups[static_cast<std::size_t>(st.device_type)].name;
    out += fmt::format("{} stage {}{} [{}]", s ? ";" : "", s, group, fmt::join(st.device_ids, " "));
  }
  out += "\n";
  if (result.mixed)
    out += fmt::format(
        "mixed devices: {:.9g} per micro-batch; planned as if all were the model's device: "
        "{:.9g} as planned, {:.9g} on this cluster ({:+.1f} % against this plan); {} alone: "
        "{:.9g} ({:+.1f} %)\n",
        plan.objective, result.mixed->blind_planned, result.mixed->blind_on_cluster,
        100 * (result.mixed->blind_on_cluster / plan.objective - 1), result.mixed->fastest_group,
        result.mixed->fastest_alone, 100 * (result.mixed->fastest_alone / plan.objective - 1));
  const std::optional<PlacementFigures>& placement = plan.as<PipelineDetail>().placement;
  if (!placement) return out;
  const PlacementFigures& p = *placement;
  out += fmt::format(
      "placement on {}: {:.6g} s per micro-batch on its links (rank order {:.6g} s, {:+.1f} %); "
      "{}\n",
      p.cluster, p.cost_s, p.rank_order_cost_s, 100 * (p.cost_s / p.rank_order_cost_s - 1),
      p.exact ? "optimal"
              : fmt::format("within {:.1f} % of a lower bound",
                            100 * (p.cost_s / p.lower_bound_s - 1)));
  if (result.placed_simulated_s && result.rank_order_simulated_s)
    out += fmt::format("simulated iteration: {:.6g} s placed, {:.6g} s in rank order ({:+.1f} %)\n",
                       *result.placed_simulated_s, *result.rank_order_simulated_s,
                       100 * (*result.placed_simulated_s / *result.rank_order_simulated_s - 1));
  if (const auto& n = result.network_choice; n && n->candidates > 0)
    out += fmt::format(
        "chosen on the links among {} plans: the flat model's choice ({} stage{}) simulates at "
        "{:.6g} s placed{}\n",
        n->candidates + 1, n->flat_stages, n->flat_stages == 1 ? "" : "s",
        n->flat_placed_simulated_s,
        n->flat_placed_simulated_s > *result.placed_simulated_s
            ? fmt::format(", {:+.1f} % against this plan",
                          100 * (n->flat_placed_simulated_s / *result.placed_simulated_s - 1))
            : ", the best of them");
  return out;
}

}  // namespace

std::string plan_table(const Plan& plan, const Model& model, const std::string& unit) {
  std::string out;
  out += fmt::format("model: {}   cost model: {}   schedule: {}\n", model.name, plan.cost_model(),
                     schedule_name(plan.schedule));
  out +=
      fmt::format("{:>5}  {:<24} {:>6} {:>5} {:>3} {:>3}  {:<28} {:>14} {:>12} {:>8}\n", "stage",
                  "layers (ids)", "count", "d", "t", "y", "options", "time", "memory", "devices");
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const Stage& st = plan.stages[i];
    std::map<std::string, int> counts;
    for (std::size_t j = 0; j < st.layers.size(); ++j) {
      const auto* opts = model.layers[st.layers[j]].options_for(st.tensor_parallel);
      counts[opts ? (*opts)[st.option_index[j]].id : "?"]++;
    }
    std::string options;
    for (const auto& [id, n] : counts)
      options += fmt::format("{}{}x {}", options.empty() ? "" : ", ", n, id);
    std::string layers = id_ranges(st.layers, model);
    if (layers.size() > 24) layers = layers.substr(0, 21) + "...";
    // DAPPLE's model has no memory and no in-flight count.
    const bool has_memory = plan.kind() != PlanKind::kDapple;
    std::string memory =
        has_memory ? fmt::format("{:.3f} GiB", st.memory_bytes / 1073741824.0) : "n/a";
    std::string inflight = has_memory ? std::to_string(st.inflight_microbatches) : "-";
    out += fmt::format("{:>5}  {:<24} {:>6} {:>5} {:>3} {:>3}  {:<28} {:>14.9g} {:>12} {:>8}\n", i,
                       layers, st.layers.size(), st.data_parallel, st.tensor_parallel, inflight,
                       options, st.time, memory, st.devices());
  }
  out += fmt::format("objective: {:.12g} {}\n", plan.objective, unit);
  if (const auto* dapple = plan.get_if<DappleDetail>())
    out += fmt::format("speedup: {:.12g} (vs one device running the batch)\n", dapple->speedup);
  out += fmt::format("stages: {}   micro-batches: {}   devices used: {}\n", plan.stages.size(),
                     plan.microbatches, plan.devices_used);
  return out;
}

namespace {

// Why the plan's iteration is not proven the least, if it is not.
std::string iteration_caveat(const PipelinePlanResult& result) {
  if (result.iteration->exact) return "";
  const auto& n = result.network_choice;
  if (n && result.placed_simulated_s && n->flat_placed_simulated_s > *result.placed_simulated_s)
    return "; on the flat network a plan is faster, but slower on the links (below)";
  if (result.coarsening) return "; searched on the coarsened graph, so it is the best found there";
  return "; the search stopped at its work limit, so it is the best found";
}

}  // namespace

std::string pipeline_words(const PipelinePlanRequest& request, const PipelinePlanResult& result) {
  std::string out =
      plan_table(result.plan, request.model, "(time per micro-batch of the bottleneck stage)");
  if (result.coarsening)
    out += fmt::format(
        "coarsened to {} super-nodes ({}): coarse optimum {:.9g}, uncoarsened {:.9g}, refined "
        "by {} moves\n",
        result.coarsening->super_nodes, result.coarsening->reason,
        result.coarsening->coarse_objective, result.coarsening->uncoarsened_objective,
        result.coarsening->moves);
  if (const auto& it = result.iteration)
    out += fmt::format(
        "objective: the simulated iteration, {:.6g} (profile time units; the steady-state "
        "optimum's: {:.6g}, {:+.1f}%){}\n",
        it->iteration_s, it->steady_state_plan_iteration_s,
        100 * (it->steady_state_plan_iteration_s / it->iteration_s - 1), iteration_caveat(result));
  const ProfileFacts& p = request.model.profiled;
  if (request.scaled_by_peaks)
    for (const auto& g : request.settings.device_groups)
      out += fmt::format(
          "compute scaled ×{:.3f} on {}: profiled on {}, priced by the ratio of the two "
          "devices' peak FLOP/s\n",
          g.time_factor, g.name, p.device);
  else if (p.flops_per_s > 0)
    for (const auto& g : request.settings.device_groups)
      out += fmt::format(
          "compute scaled ×{:.3f} on {}: profiled alone on {} at {:.3g} GFLOP/s, the cluster's "
          "device runs at {:.3g} GFLOP/s\n",
          g.time_factor, g.name, p.device, p.flops_per_s / 1e9,
          p.flops_per_s / g.time_factor / 1e9);
  return out + placement_lines(result.plan, result, request.settings);
}

std::string dapple_words(const DapplePlanRequest& request, const DapplePlanResult& result) {
  return plan_table(result.plan, request.model, "s per iteration (DAPPLE's estimate)") +
         fmt::format("data parallelism alone: speedup {:.12g}\n", result.data_parallel_speedup);
}

std::string intra_op_words(const IntraOpPlanRequest& request, const IntraOpPlanResult& result) {
  const Plan& plan = result.plan;
  const Model& model = request.model;
  const PaseSettings& s = request.settings;
  std::string out = fmt::format(
      "intra-op plan of {} (batch {}) on {} devices: pase cost model, {:g} TFLOP/s and {:g} GB/s "
      "per device\n",
      model.name, request.batch, s.devices, s.flops_per_s / 1e12, s.bandwidth_bytes_per_s / 1e9);
  out += fmt::format("{:>5}  {:<32} {:<12} {:<26} {:>7} {:>18} {:>18}\n", "id", "layer", "type",
                     "split (dim/parts)", "devices", "layer cost", "redistribution");
  const IntraOpDetail& detail = plan.as<IntraOpDetail>();
  for (const auto& ls : detail.layer_splits) {
    const Layer& layer = model.layers[ls.layer];
    std::string name = layer.name.size() > 32 ? layer.name.substr(0, 29) + "..." : layer.name;
    out += fmt::format("{:>5}  {:<32} {:<12} {:<26} {:>7} {:>18.2f} {:>18.2f}\n", layer.id, name,
                       op_kind_name(layer.op->kind), layer.op->split_text(ls.split), ls.devices,
                       ls.compute + ls.communication, ls.redistribution);
  }
  out += fmt::format("total cost: {:.2f} FLOP-equivalents per device (PaSE's objective)\n",
                     plan.objective);
  out += fmt::format("estimated step time: {:.6g} s\n", detail.step_time_s);
  const MemoryBreakdown& m = result.memory;
  out += fmt::format(
      "memory per device: {} (weights {}, gradients {}, optimizer {}, activations {}; fp32, "
      "Adam)\n",
      format_bytes(m.peak_bytes), format_bytes(m.weights_bytes), format_bytes(m.gradients_bytes),
      format_bytes(m.optimizer_bytes), format_bytes(m.activations_bytes));
  return out;
}

std::string simulation_words(const SimulateResult& s) {
  const sim::Result& r = s.result;
  const auto& devices = r.timeline.devices;
  std::string out;
  switch (s.kind) {
    case PlanKind::kPipeline: {
      out +=
          fmt::format("{}: {} stage(s), {} replicas, {} micro-batches, {} events simulated ({})\n",
                      s.model, s.stages, devices.size(), s.microbatches, r.timeline.events.size(),
                      schedule_name(s.schedule));
      out += fmt::format(
          "iteration (profile time units): simulated {:.6g}, {} {:.6g} ({:+.2f}%: fill, drain and "
          "the all-reduce{}); bubble {:.1f}%\n",
          s.iteration_time_s,
          s.on_network ? "on the cluster's links; the placement's bound N × slowest stage"
                       : "Piper's bound N × objective",
          s.reference_s, 100 * s.difference,
          s.on_network ? ", and contention that comes and goes" : "", 100 * r.bubble_fraction);
      for (std::size_t i = 0; i < devices.size() && i < 64; ++i)
        out += fmt::format("  {:<32} busy {:.6g}   peak memory {}\n", devices[i],
                           r.devices[i].busy_s, format_bytes(r.devices[i].peak_bytes));
      if (devices.size() > 64) out += fmt::format("  ... {} more replicas\n", devices.size() - 64);
      return out;
    }
    case PlanKind::kIntraOp:
      return fmt::format("{}: {} layers on {} devices, {} events simulated\n", s.model, s.layers,
                         s.devices, r.timeline.events.size()) +
             fmt::format("step time: simulated {:.6g} s, the plan's {:.6g} s ({:+.2f}%)\n",
                         s.iteration_time_s, s.reference_s, 100 * s.difference);
    case PlanKind::kDapple:
      return fmt::format("DAPPLE plan: {} stage(s), {} micro-batches, {} events simulated\n",
                         s.stages, s.microbatches, r.timeline.events.size()) +
             fmt::format(
                 "iteration time: simulated {:.6g} s, DAPPLE's latency {:.6g} s ({:+.2f}%: "
                 "its warm-up is approximate and its all-reduce tail is not replayed); "
                 "bubble {:.1f}%\n",
                 s.iteration_time_s, s.reference_s, 100 * s.difference, 100 * r.bubble_fraction);
    case PlanKind::kTransformer:
    case PlanKind::kMixedTransformer:
      out += fmt::format("{}: {} schedule, {} stage(s) × {} micro-batches, {} events simulated\n",
                         s.model, schedule_name(s.schedule), s.stages, s.microbatches,
                         r.timeline.events.size());
      out += fmt::format(
          "iteration time: simulated {:.4f} s, analytic {:.4f} s ({:+.2f}%); "
          "bubble {:.1f}% of the devices' time\n",
          s.iteration_time_s, s.reference_s, 100 * s.difference, 100 * r.bubble_fraction);
      for (std::size_t d = 0; d < devices.size(); ++d)
        out += fmt::format("  {:<24} busy {:.4f} s   peak memory {}\n", devices[d],
                           r.devices[d].busy_s, format_bytes(r.devices[d].peak_bytes));
      if (s.device_memory_bytes > 0) {
        double peak = 0;
        for (const auto& d : r.devices) peak = std::max(peak, d.peak_bytes);
        out += fmt::format("memory: the busiest device peaks at {} of {} ({:.1f} %) — {}\n",
                           format_bytes(peak), format_bytes(s.device_memory_bytes),
                           100 * peak / s.device_memory_bytes,
                           s.fits ? "fits" : "DOES NOT FIT under this schedule (exit 4)");
      }
      return out;
  }
  return out;
}

}  // namespace paraplan::api
