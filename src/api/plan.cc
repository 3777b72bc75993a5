// The plan job: each planner's search, the smallest-memory search when nothing fits, the
// simulator's re-ranking and the products (simulation, report) of the best plan.
#include "api/plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "api/frontier.h"
#include "cost/dapple_states.h"
#include "cost/placement.h"
#include "io/graph_svg.h"
#include "ir/error.h"
#include "ir/topology.h"
#include "ir/units.h"
#include "report/plan_report.h"
#include "search/coarsen.h"
#include "search/dapple_search.h"
#include "search/pipeline_iteration.h"
#include "search/placement.h"
#include "sim/intra_op_program.h"
#include "zoo/cluster_presets.h"

namespace paraplan::api {

namespace {

double known_peak_flops(const std::string& device) {
  for (const char* preset : {"dgx-a100", "dgx-h100", "h200"})
    if (auto c = zoo::cluster_preset(preset, 1); c && c->device_types[0].name == device)
      return c->device_types[0].peak_flops_per_s;
  return 0;
}

}  // namespace

PiperSettings piper_settings(const Workload& w, int devices, double memory_bytes,
                             double bandwidth_bytes_per_s, int microbatches,
                             const std::string& model_device) {
  PiperSettings s;
  s.max_devices = devices > 0 ? devices : w.devices;
  s.memory_per_device_bytes = memory_bytes > 0 ? memory_bytes : w.memory_per_device_bytes;
  s.bandwidth_bytes_per_s =
      bandwidth_bytes_per_s > 0 ? bandwidth_bytes_per_s : w.bandwidth_bytes_per_s;
  // A bandwidth given on its own prices the all-reduce too; a cluster's measured one stays.
  if (!(bandwidth_bytes_per_s > 0))
    s.allreduce_bandwidth_bytes_per_s = w.allreduce_bandwidth_bytes_per_s;
  s.microbatches = microbatches > 0 ? microbatches : w.model.microbatches;
  // Device groups: the types of the first K devices, machine by machine.
  const Cluster& c = w.cluster;
  if (c.machine_count() == 0) return s;
  std::vector<int> count(c.device_types.size(), 0);
  int left = s.max_devices;
  for (int m = 0; m < c.machine_count() && left > 0; ++m) {
    const int take = std::min(left, c.machine_sizes[m]);
    count[static_cast<std::size_t>(c.machine_device_type[m])] += take;
    left -= take;
  }
  const std::string& first =
      c.device_types[static_cast<std::size_t>(c.machine_device_type[0])].name;
  // A profile that recorded its device's matmul rate, measured alone, is priced against it: the
  // cluster's rate (a probe's, measured while every rank runs) scales its compute.
  const ProfileFacts& profiled = w.model.profiled;
  const bool by_profile = model_device.empty() && profiled.flops_per_s > 0;
  const std::string reference = !model_device.empty() ? model_device
                                : by_profile          ? profiled.device
                                                      : first;
  int types = 0;
  for (int n : count) types += n > 0;
  if (types < 2 && reference == first && !by_profile) return s;
  double reference_peak = by_profile ? profiled.flops_per_s : known_peak_flops(reference);
  for (const auto& t : c.device_types)
    if (!by_profile && t.name == reference) reference_peak = t.peak_flops_per_s;
  if (!(reference_peak > 0))
    throw FieldError("model_device", " \"" + reference +
                                         "\": not a device type of the cluster with a peak "
                                         "FLOP/s, nor a known GPU (A100, H100, H200)");
  for (std::size_t t = 0; t < count.size(); ++t) {
    if (count[t] == 0) continue;
    const DeviceType& type = c.device_types[t];
    if (!(type.peak_flops_per_s > 0))
      throw Error(ErrorKind::kInput, "cluster",
                  "device type \"" + type.name +
                      "\" needs its peak FLOP/s to be priced against \"" + reference + "\"");
    s.device_groups.push_back({type.name, count[t],
                               memory_bytes > 0 ? memory_bytes : type.memory_bytes,
                               reference_peak / type.peak_flops_per_s});
  }
  if (s.device_groups.size() == 1 && s.device_groups[0].time_factor == 1 &&
      s.device_groups[0].memory_bytes == s.memory_per_device_bytes)
    s.device_groups.clear();  // the model's own device: the homogeneous search
  return s;
}

namespace {

constexpr int kFallbackSuperNodes = 64;

// Device ids for every stage: rank order, then (on a cluster with a network) the placer's.
void place_plan(const PipelinePlanRequest& request, PipelinePlanResult& out,
                std::optional<Topology>& topology) {
  Plan& plan = out.plan;
  int next = 0;
  for (auto& st : plan.stages) {
    st.device_ids.clear();
    for (int k = 0; k < st.devices(); ++k) st.device_ids.push_back(next++);
  }
  if (!request.cluster) return;
  const Cluster& c = *request.cluster;
  if (c.links.empty() && c.machine_count() == 1 && request.settings.device_groups.empty()) return;
  topology.emplace(cluster_topology(c, request.cluster_name));
  // Tensor-parallel groups stay inside a machine, unless one is larger than every machine.
  std::vector<int> machine_of_device;
  int largest_group = 1;
  for (const auto& st : plan.stages) largest_group = std::max(largest_group, st.tensor_parallel);
  if (largest_group <= *std::max_element(c.machine_sizes.begin(), c.machine_sizes.end()))
    for (int m = 0; m < c.machine_count(); ++m)
      machine_of_device.insert(machine_of_device.end(),
                               static_cast<std::size_t>(c.machine_sizes[m]), m);
  // Stages of a device group run on devices of that group's type.
  std::vector<int> group_of_device;
  if (!request.settings.device_groups.empty())
    for (int m = 0; m < c.machine_count(); ++m) {
      const std::string& type =
          c.device_types[static_cast<std::size_t>(c.machine_device_type[m])].name;
      int group = -1;
      for (std::size_t g = 0; g < request.settings.device_groups.size(); ++g)
        if (request.settings.device_groups[g].name == type) group = static_cast<int>(g);
      group_of_device.insert(group_of_device.end(), static_cast<std::size_t>(c.machine_sizes[m]),
                             group);
    }
  const PlacementCostModel cost(request.model, plan, *topology, request.settings.microbatches,
                                machine_of_device, group_of_device);
  cost.apply(cost.rank_order(), plan);
  PlacementResult placed;
  if (request.rank_order) {
    placed.device_of_slot = cost.rank_order();
    placed.cost_s = placed.rank_order_cost_s = cost.cost(placed.device_of_slot);
    placed.lower_bound_s = std::min(placed.cost_s, cost.lower_bound());
  } else {
    // Budgets in flow visits, so large plans stay within seconds.
    const long long flows = std::max<long long>(1, static_cast<long long>(cost.flows().size()));
    PlacementOptions options;
    options.evaluation_limit = std::max<long long>(200, 20000000 / flows / 8);
    options.node_limit = std::max<long long>(50000, 30000000 / flows);
    placed = place(cost, options);
  }
  cost.apply(placed.device_of_slot, plan);
  std::optional<PlacementFigures>& placement = plan.as<PipelineDetail>().placement;
  placement = PlacementFigures{request.cluster_name, placed.cost_s, placed.rank_order_cost_s,
                               placed.lower_bound_s, placed.exact};
  const int n = request.settings.microbatches;
  out.placed_simulated_s =
      sim::simulate_pipeline_plan(request.model, plan, n, &*topology).makespan_s;
  Plan ranked = plan;
  cost.apply(cost.rank_order(), ranked);
  out.rank_order_simulated_s =
      sim::simulate_pipeline_plan(request.model, ranked, n, &*topology).makespan_s;
  // The cost model is a bottleneck bound; the simulator has the last word: a placement it
  // finds slower than rank order is not kept.
  if (*out.placed_simulated_s > *out.rank_order_simulated_s) {
    cost.apply(cost.rank_order(), plan);
    placement->cost_s = placed.rank_order_cost_s;
    placement->exact = false;
    placement->lower_bound_s = std::min(placed.lower_bound_s, placed.rank_order_cost_s);
    out.placed_simulated_s = out.rank_order_simulated_s;
  }
}

// The best plan of a given stage count on the flat model, with its flat iteration (seconds).
struct StagedPlan {
  Plan plan;
  double iteration_s = 0;
};
using BestOfStages = std::function<std::optional<StagedPlan>(int stages)>;

// The flat model prices every link at the outermost tier's bandwidth, so on several machines it
// cannot see that a stage boundary on the slow link with each all-reduce inside a machine beats
// one wide stage whose all-reduce crosses machines (DAPPLE's plans). The best plan of each stage
// count dividing the machine count is placed and simulated on the links too, and the fastest
// there is the answer (the flat optimum is one of the candidates, so never a slower one).
void choose_on_the_network(const PipelinePlanRequest& request, const BestOfStages& best_of_stages,
                           PipelinePlanResult& out) {
  const Cluster& c = *request.cluster;
  const int machines = c.machine_count();
  if (machines < 2 || !out.placed_simulated_s) return;
  PipelinePlanResult::NetworkChoice choice;
  choice.flat_stages = static_cast<int>(out.plan.stages.size());
  choice.flat_placed_simulated_s = *out.placed_simulated_s;
  for (int stages = 1; stages <= std::min(machines, request.model.size()); ++stages) {
    if (machines % stages != 0 || stages == choice.flat_stages) continue;
    std::optional<StagedPlan> staged = best_of_stages(stages);
    if (!staged) continue;
    ++choice.candidates;
    PipelinePlanResult candidate;
    candidate.plan = std::move(staged->plan);
    std::optional<Topology> topology;
    place_plan(request, candidate, topology);
    if (!(*candidate.placed_simulated_s < *out.placed_simulated_s)) continue;
    out.plan = std::move(candidate.plan);
    out.placed_simulated_s = candidate.placed_simulated_s;
    out.rank_order_simulated_s = candidate.rank_order_simulated_s;
    out.iteration->iteration_s = staged->iteration_s;
    out.iteration->exact = false;  // not the flat model's optimum: chosen on the links
  }
  out.network_choice = choice;
}

// A mixed cluster's baselines: the plan made as if every device were the model's, priced on
// this cluster (each stage at the slowest group its rank-order devices touch), and the best plan
// on the fastest group alone.
PipelinePlanResult::MixedBaselines mixed_baselines(const PipelinePlanRequest& request,
                                                   const PipelineSearchOptions& search) {
  const PiperSettings& settings = request.settings;
  PipelinePlanResult::MixedBaselines b;
  PiperSettings blind = settings;
  blind.device_groups.clear();
  blind.memory_per_device_bytes = kInfinity;
  for (const auto& g : settings.device_groups)
    blind.memory_per_device_bytes = std::min(blind.memory_per_device_bytes, g.memory_bytes);
  const PiperCostModel blind_cost(request.model, blind);
  const Plan planned = search_pipeline(request.model, blind_cost, search).plan;
  b.blind_planned = planned.objective;
  b.blind_on_cluster = planned.feasible ? 0 : kInfinity;
  int next = 0;
  for (const Stage& st : planned.stages) {
    double factor = 0;  // the slowest group among devices [next, next + d·t)
    for (int device = next, first = 0; device < next + st.devices(); ++device) {
      int end = 0;
      for (const auto& g : settings.device_groups) {
        first = end;
        end += g.count;
        if (device >= first && device < end) factor = std::max(factor, g.time_factor);
      }
    }
    next += st.devices();
    b.blind_on_cluster =
        std::max(b.blind_on_cluster, factor * (st.compute_time + st.optimizer_time) +
                                         st.communication_time + st.allreduce_time);
  }
  const PiperSettings::DeviceGroup* fastest = &settings.device_groups.front();
  for (const auto& g : settings.device_groups)
    if (g.time_factor < fastest->time_factor) fastest = &g;
  PiperSettings alone = settings;
  alone.device_groups = {*fastest};
  alone.max_devices = fastest->count;
  alone.memory_per_device_bytes = fastest->memory_bytes;
  const PiperCostModel alone_cost(request.model, alone);
  b.fastest_group = fastest->name;
  b.fastest_alone = search_pipeline(request.model, alone_cost, search).plan.objective;
  return b;
}

}  // namespace

PipelinePlanResult plan_pipeline(const PipelinePlanRequest& request) {
  const PiperSettings& settings = request.settings;
  PiperCostModel cost(request.model, settings);
  PipelineSearchOptions search;
  search.progress = request.progress;
  PipelinePlanResult out;
  const auto replay = [&](const Model& m, const Plan& p) {  // the simulated iteration, flat
    return sim::simulate_pipeline_plan(m, p, settings.microbatches).makespan_s;
  };
  const IterationTime iteration = [&](const Plan& p) { return replay(request.model, p); };
  IterationSearchOptions staging;
  staging.stages = request.stages;
  staging.stage_widths = request.stage_widths;
  const auto coarsened = [&](int nodes, const std::string& reason) {
    CoarseIterationOptions coarse_iteration{replay, staging};
    const CoarsePlanResult c = plan_coarsened(request.model, settings, nodes, search,
                                              request.steady_state ? nullptr : &coarse_iteration);
    out.coarsening = PipelinePlanResult::Coarsening{
        c.super_nodes, c.coarse_objective, c.uncoarsened_objective, c.moves, reason, nodes};
    if (c.iteration)
      out.iteration = PipelinePlanResult::Iteration{
          c.iteration->iteration_s, c.iteration->steady_state_plan_iteration_s, false,
          c.iteration->stage_prices, c.iteration->plans_replayed};
    return c.plan;
  };
  const auto no_staged_plan = [&] {
    return Error(
        ErrorKind::kInfeasible, "",
        fmt::format("no plan of {} stages{} fits in {} per device on {} devices", request.stages,
                    request.stage_widths.empty()
                        ? ""
                        : fmt::format(" of widths {}", fmt::join(request.stage_widths, ",")),
                    format_bytes(settings.memory_per_device_bytes), settings.max_devices));
  };
  if (request.coarsen > 0) {
    out.plan = coarsened(request.coarsen, "asked for");
  } else {
    try {
      out.plan = search_pipeline(request.model, cost, search).plan;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kLimit) throw;
      out.plan = coarsened(kFallbackSuperNodes, "too large for the exact search");
    }
  }
  if (!out.plan.feasible && out.coarsening) {
    if (out.iteration && (request.stages > 0 || !request.stage_widths.empty()))
      throw no_staged_plan();
    out.iteration.reset();
    out.plan = Plan::of(PlanKind::kPipeline);
    out.plan.objective = kInfinity;
    out.plan.microbatches = settings.microbatches;
    return out;  // no smallest-memory search on a graph this large
  }
  if (!out.plan.feasible) {
    // Nothing fits: the memory-objective plan's largest stage memory is the smallest limit any
    // plan fits in.
    PiperSettings lean = settings;
    lean.objective = PiperSettings::Objective::kMemory;
    PiperCostModel memory_cost(request.model, lean);
    const PipelineSearchResult smallest = search_pipeline(request.model, memory_cost, search);
    double need = 0;
    for (const auto& st : smallest.plan.stages) need = std::max(need, st.memory_bytes);
    out.smallest_memory_per_device_bytes = std::ceil(need);  // whole bytes, not below the need
    out.plan = Plan::of(PlanKind::kPipeline);
    out.plan.feasible = false;
    out.plan.objective = kInfinity;
    out.plan.microbatches = settings.microbatches;
    return out;
  }
  std::optional<Plan> steady_plan;  // the steady-state optimum, under the iteration objective
  if (!request.steady_state && !out.coarsening) {
    // The plan of least simulated iteration, the steady-state optimum as the first bound.
    const IterationSearchResult it = search_pipeline_iteration(
        request.model, cost, settings.microbatches, iteration, out.plan, staging);
    if (!it.plan.feasible) throw no_staged_plan();
    const double steady =
        request.stages > 0 && static_cast<int>(out.plan.stages.size()) != request.stages
            ? iteration(out.plan)
            : it.seed_iteration_s;
    steady_plan = std::move(out.plan);
    out.plan = it.plan;
    out.iteration = PipelinePlanResult::Iteration{it.iteration_s, steady, it.exact, it.stage_prices,
                                                  it.plans_replayed};
  }
  if (settings.device_groups.size() > 1) out.mixed = mixed_baselines(request, search);
  std::optional<Topology> topology;
  place_plan(request, out, topology);
  if (topology && out.iteration && request.stages == 0 && request.stage_widths.empty())
    choose_on_the_network(
        request,
        [&](int stages) -> std::optional<StagedPlan> {
          IterationSearchOptions options;
          options.stages = stages;
          if (out.coarsening) {
            CoarseIterationOptions coarse_iteration{replay, options};
            const CoarsePlanResult c = plan_coarsened(
                request.model, settings, out.coarsening->nodes_asked, search, &coarse_iteration);
            if (!c.plan.feasible) return std::nullopt;
            return StagedPlan{c.plan, c.iteration->iteration_s};
          }
          const IterationSearchResult it = search_pipeline_iteration(
              request.model, cost, settings.microbatches, iteration, *steady_plan, options);
          if (!it.plan.feasible) return std::nullopt;
          return StagedPlan{it.plan, it.iteration_s};
        },
        out);
  if (request.products.simulation || request.products.report)
    out.simulation = sim::simulate_pipeline_plan(request.model, out.plan, settings.microbatches,
                                                 topology ? &*topology : nullptr);
  if (request.products.report) {
    const auto frontier = report_frontier(request.model, settings, request.progress);
    out.report_html = report::pipeline_report(request.model, out.plan, settings, *out.simulation,
                                              frontier ? &*frontier : nullptr, {},
                                              topology ? &*topology : nullptr);
  }
  return out;
}

Error no_pipeline_plan(const PipelinePlanRequest& request, const PipelinePlanResult& result,
                       const std::string& source) {
  const double need = result.smallest_memory_per_device_bytes.value_or(0);
  const PiperSettings& s = request.settings;
  return Error(ErrorKind::kInfeasible, source,
               fmt::format("no plan fits in {:.0f} bytes ({}) per device on {} devices; the "
                           "smallest memory per device that fits is {:.0f} bytes ({})",
                           s.memory_per_device_bytes, format_bytes(s.memory_per_device_bytes),
                           s.max_devices, need, format_bytes(need)));
}

constexpr int kDappleMaxDevices = 128;

DappleSettings dapple_settings(const Workload& w, const std::string& machines, int global_batch,
                               int microbatch_size) {
  const auto sizes = parse_machine_sizes(machines);
  if (!sizes)
    throw FieldError("machines",
                     ": expected MxD (e.g. 2x8) or devices per machine (e.g. 4,8,4), each at "
                     "least 1 and at most 65536 devices in all; got \"" +
                         machines + "\"");
  DappleSettings settings;
  settings.machine_ends = machine_ends(*sizes);
  const int devices = settings.machine_ends.back();
  if (devices > kDappleMaxDevices)
    throw FieldError(
        "machines",
        fmt::format(": the dapple cost model takes at most {} devices (its formulas describe a "
                    "few machines; its search is quadratic in the devices); got {}",
                    kDappleMaxDevices, devices));
  settings.global_batch = global_batch > 0 ? global_batch : w.model.profile_batch_size * devices;
  settings.microbatch_size = microbatch_size > 0 ? microbatch_size : 1;
  if (settings.microbatch_size > settings.global_batch)
    throw FieldError("microbatch_size",
                     fmt::format(" {} is larger than the global batch {}", settings.microbatch_size,
                                 settings.global_batch));
  return settings;
}

DapplePlanResult plan_dapple(const DapplePlanRequest& request, const std::string& source) {
  for (const auto& layer : request.model.layers)
    if (!layer.options_for(1))
      throw Error(ErrorKind::kInput, source,
                  fmt::format("layer {} has no option at tensor-parallel degree 1, which DAPPLE's "
                              "model prices",
                              layer.id));
  const DappleSettings& settings = request.settings;
  DappleCostModel cost(request.model, dapple_states(request.model), settings);
  DappleSearchResult found = search_dapple(cost);
  DapplePlanResult out;
  out.plan = std::move(found.plan);
  out.data_parallel_speedup = cost.total_compute_s() / found.data_parallel_latency_s;
  out.states = cost.states().size();
  out.states_linearised = cost.states().linearised;
  if (request.products.simulation || request.products.report)
    out.simulation = sim::simulate(sim::dapple_program(out.plan));
  if (request.products.report)
    out.report_html = report::dapple_report(
        request.model.name, out.plan, *out.simulation,
        {{"machines", request.machines},
         {"global batch", fmt::format("{} samples, micro-batch {}", settings.global_batch,
                                      settings.microbatch_size)},
         {"speedup", fmt::format("{:.4g} over one GPU; data parallelism alone {:.4g}",
                                 out.plan.as<DappleDetail>().speedup, out.data_parallel_speedup)}});
  return out;
}

namespace {

// The report's frontier: the plan's settings, memory step 0.01; none beyond the frontier's limits.
std::vector<io::PlotSeries> report_intra_op_frontier(const IntraOpPlanRequest& request) {
  IntraOpFrontierRequest r{request.model, request.batch, request.settings, 0, {}};
  r.options.memory_step = 0.01;
  r.options.time_limit_s = 20;
  try {
    return intra_op_frontier_series(intra_op_frontier(r, request.model.name));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kLimit) throw;
  }
  return {};
}

}  // namespace

IntraOpPlanResult plan_intra_op(const IntraOpPlanRequest& request) {
  const PaseSettings& s = request.settings;
  PaseCostModel cost(request.model, s);
  IntraOpOptions solve;
  solve.progress = request.progress;
  IntraOpPlanResult out;
  out.solve = solve_intra_op(cost.network(), solve);
  out.plan = cost.to_plan(out.solve.choice);
  for (int v = 0; v < request.model.size(); ++v) {
    const MemoryBreakdown m = cost.layer_memory(v, cost.configs(v)[out.solve.choice[v]]);
    out.memory.weights_bytes += m.weights_bytes;
    out.memory.gradients_bytes += m.gradients_bytes;
    out.memory.optimizer_bytes += m.optimizer_bytes;
    out.memory.activations_bytes += m.activations_bytes;
    out.memory.peak_bytes += m.peak_bytes;
  }
  if (request.products.simulation || request.products.report) {
    std::vector<std::string> names;
    const std::vector<LayerSplit>& splits = out.plan.as<IntraOpDetail>().layer_splits;
    for (const LayerSplit& ls : splits) names.push_back(request.model.layers[ls.layer].name);
    out.simulation = sim::simulate(sim::intra_op_program(splits, names, s.flops_per_s, s.devices));
  }
  if (request.products.report)
    out.report_html = report::intra_op_report(
        request.model.name, s.devices, s.flops_per_s, out.plan.objective,
        report::intra_op_rows(request.model, out.plan), *out.simulation,
        io::operator_graph_svg(request.model, out.plan), report_intra_op_frontier(request),
        {{"batch", std::to_string(request.batch)},
         {"memory per device", format_bytes(out.memory.peak_bytes)},
         {"bandwidth", fmt::format("{:.4g} GB/s per device", s.bandwidth_bytes_per_s / 1e9)}});
  return out;
}

namespace {

// Replays the first `k` plans in the simulator and ranks those by its time (stable: ties keep
// the analytic order); the rest keep their place and -1.
std::vector<double> resimulate(const AnalyticCostModel& cost, std::vector<LlmCandidate>& top,
                               int k_requested) {
  std::vector<double> simulated(top.size(), -1);
  const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(k_requested), top.size());
  if (k == 0) return simulated;
  for (std::size_t i = 0; i < k; ++i)
    simulated[i] =
        sim::simulate_transformer(cost, top[i].config, sim::default_schedule(top[i].config))
            .iteration_time_s;
  std::vector<std::size_t> order(top.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k),
                   [&](std::size_t x, std::size_t y) { return simulated[x] < simulated[y]; });
  std::vector<LlmCandidate> ranked;
  std::vector<double> times;
  for (std::size_t i : order) {
    ranked.push_back(top[i]);
    times.push_back(simulated[i]);
  }
  top = std::move(ranked);
  return times;
}

}  // namespace

TransformerPlanResult plan_transformer(const TransformerPlanRequest& request) {
  LlmSearchSettings s = request.settings;
  // A plan for Megatron-LM must be one it runs: its distributed optimizer is ZeRO 1.
  if (request.megatron_only) s.max_zero_stage = 1;
  if (request.deepspeed_only) {
    if (s.stack != Stack::kDeepSpeed)
      throw FieldError(
          "stack", ": a Megatron-DeepSpeed plan runs on the deepspeed stack (--stack deepspeed)");
    s.cp = 1;
    s.vpp = 1;
    s.even_stages_only = true;
    s.balance_stages = false;
    if (!s.recompute_layers) s.recompute_layers = 0;
  }
  if (request.torchtitan_only) {
    if (s.stack != Stack::kFsdp)
      throw FieldError("stack", ": a torchtitan plan runs on the fsdp stack (--stack fsdp)");
    s.zero_stage_1 = false;
    s.sequence_parallel = true;
    if (!s.recompute_layers) s.recompute_layers = 0;
  }
  const AnalyticCostModel cost(request.model, request.cluster, request.calibration);
  TransformerPlanResult out;
  out.search = search_llm(cost, s);
  if (request.resimulate < 0) throw FieldError("resimulate", ": expected K >= 0");
  if (out.search.top.empty())
    throw Error(ErrorKind::kInfeasible, "",
                fmt::format("none of the {} configurations of {} on {} × {} fits in {} per device",
                            out.search.evaluated, request.model.name, s.devices,
                            request.cluster.device_types[0].name,
                            format_bytes(request.cluster.device_types[0].memory_bytes)));
  out.simulated_s = resimulate(cost, out.search.top, request.resimulate);
  for (const LlmCandidate& c : out.search.top) out.plans.push_back(llm_plan(c));
  const TrainingConfig& best = out.search.top[0].config;
  if (request.products.simulation || request.products.report)
    out.simulation = sim::simulate_transformer(cost, best, sim::default_schedule(best));
  if (request.products.report) {
    // The report plots the frontier of the same search.
    out.report_html = report::transformer_report(cost, best, *out.simulation, request.cluster_name,
                                                 report_frontier(cost, s), s.devices);
  }
  if (request.megatron_alternative) {
    for (const LlmCandidate& c : out.search.top)
      if (c.config.zero_stage <= 1) {
        out.megatron = c;
        out.megatron_is_best = &c == &out.search.top[0];
        break;
      }
    if (!out.megatron) {
      LlmSearchSettings ms = s;
      ms.max_zero_stage = 1;
      if (ms.zero_stage && *ms.zero_stage > 1) ms.zero_stage.reset();  // fixed at 2 or 3: free it
      ms.top_k = 1;
      LlmSearchResult m = search_llm(cost, ms);
      if (!m.top.empty()) out.megatron = m.top[0];
    }
  }
  return out;
}

}  // namespace paraplan::api
