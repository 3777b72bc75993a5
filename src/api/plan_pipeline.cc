// The plan job of the pipeline planner under Piper's cost model: the search (exact, coarsened or
// under the iteration objective), the smallest-memory search when nothing fits, placement on the
// cluster's network, and the products (simulation, report) of the best plan.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>

#include "api/frontier.h"
#include "api/plan.h"
#include "cost/placement.h"
#include "ir/error.h"
#include "ir/topology.h"
#include "ir/units.h"
#include "report/plan_report.h"
#include "search/coarsen.h"
#include "search/pipeline_iteration.h"
#include "search/placement.h"
#include "zoo/cluster_presets.h"

namespace paraplan::api {

namespace {

double known_peak_flops(const std::string& device) {
  for (const char* preset : {"dgx-a100", "dgx-h100", "h200"})
    if (auto c = zoo::cluster_preset(preset, 1); c && c->device_types[0].name == device)
      return c->device_types[0].peak_flops_per_s;
  return 0;
}

std::string lower(std::string text) {
  for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

// The device type a GPU's own name ("NVIDIA H100 80GB HBM3", as PyTorch gives it) is: the
// cluster's type of that name or named inside it, else a known GPU named inside it; "" if none.
std::string gpu_type_of(const std::string& profiled, const Cluster& c) {
  const std::string name = lower(profiled);
  for (const auto& t : c.device_types)
    if (lower(t.name) == name) return t.name;
  for (const auto& t : c.device_types)
    if (!t.name.empty() && name.find(lower(t.name)) != std::string::npos) return t.name;
  for (const char* known : {"A100", "H100", "H200"})
    if (name.find(lower(known)) != std::string::npos) return known;
  return "";
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
  const auto is_cpu = [](const std::string& name) { return name.rfind("cpu", 0) == 0; };
  // A CPU profile with no cluster given is planned on the device it was measured on: its
  // times as they are (the default cluster gives the machines, not a device to scale to).
  // A GPU profile's times are that GPU's: priced against its type by the peak FLOP/s of both
  // (the profiler's small fp32 matmul measures launches on a GPU, not its tensor cores: an H100
  // profile priced on H100s by that rate came out 150 times too fast).
  const bool gpu_profile =
      model_device.empty() && !profiled.device.empty() && !is_cpu(profiled.device);
  const std::string profiled_gpu = gpu_profile ? gpu_type_of(profiled.device, c) : "";
  if (gpu_profile && profiled_gpu.empty()) {
    std::vector<std::string> names;
    for (const auto& t : c.device_types) names.push_back(t.name);
    throw FieldError("cluster",
                     fmt::format(": the model was profiled on {}, which is none of the cluster's "
                                 "device types ({}) nor a known GPU (A100, H100, H200): name the "
                                 "type its times are to be read as with --model-device",
                                 profiled.device, fmt::join(names, ", ")));
  }
  const bool by_profile = model_device.empty() && !gpu_profile && profiled.flops_per_s > 0 &&
                          (w.cluster_given || !is_cpu(profiled.device));
  const std::string reference = !model_device.empty()   ? model_device
                                : !profiled_gpu.empty() ? profiled_gpu
                                : by_profile            ? profiled.device
                                                        : first;
  int types = 0;
  for (int n : count) types += n > 0;
  // A CPU's layer times do not carry to a GPU by the ratio of their FLOP/s: launches, memory
  // traffic and the framework's overheads differ by orders of magnitude (a CPU profile of
  // ResNet-18 scaled to an A100 came out 100 times too fast). Refused unless the user names the
  // device the times are to be read as (--model-device).
  if (by_profile && is_cpu(profiled.device))
    for (std::size_t t = 0; t < count.size(); ++t)
      if (count[t] > 0 && !is_cpu(c.device_types[t].name))
        throw FieldError(
            "cluster",
            fmt::format(
                ": the model was profiled on {} at {:.3g} GFLOP/s and the cluster's "
                "devices are {}: a CPU's layer times do not scale to a GPU by their FLOP/s ratio "
                "(×{:.2g} here; launches, memory traffic and overheads differ by orders of "
                "magnitude). Profile on the GPU (python3 -m paraplan profile MODULE --device "
                "cuda ...), or plan for the machine you profiled on (python3 -m paraplan probe -o "
                "cluster.json, then --cluster cluster.json); --model-device {} prices the times "
                "as if measured on the {}",
                profiled.device, profiled.flops_per_s / 1e9, c.device_types[t].name,
                profiled.flops_per_s / std::max(1.0, c.device_types[t].peak_flops_per_s),
                c.device_types[t].name, c.device_types[t].name));
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
    PipelineSearchOptions exact = search;
    if (request.time_limit_s > 0)
      exact.deadline = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(request.time_limit_s));
    try {
      out.plan = search_pipeline(request.model, cost, exact).plan;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kLimit) throw;
      out.plan = coarsened(kFallbackSuperNodes,
                           std::string(e.what()) == kPastTheTimeLimit
                               ? fmt::format("the exact search passed the {:g} s time limit; "
                                             "--time-limit 0 waits for it",
                                             request.time_limit_s)
                               : "too large for the exact search");
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

}  // namespace paraplan::api
