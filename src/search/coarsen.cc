#include "search/coarsen.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "ir/error.h"

namespace paraplan {
namespace {

const TensorParallelOptions* smallest_degree(const Layer& layer) {
  for (const auto& d : layer.by_degree)
    if (!d.options.empty()) return &d;
  return nullptr;
}

// Index of the fastest (ties: leanest) and leanest (ties: fastest) option.
int pick(const std::vector<LayerOption>& options, bool lean) {
  int best = 0;
  for (int l = 1; l < static_cast<int>(options.size()); ++l) {
    const LayerOption &o = options[static_cast<std::size_t>(l)],
                      &b = options[static_cast<std::size_t>(best)];
    const auto key = [lean](const LayerOption& x) {
      return lean ? std::pair{x.memory_per_inflight_bytes, x.compute_time_s}
                  : std::pair{x.compute_time_s, x.memory_per_inflight_bytes};
    };
    if (key(o) < key(b)) best = l;
  }
  return best;
}

// Where the segments of a topological order end (exclusive positions): each near its share of the
// compute, among those cuts the one fewest bytes cross.
std::vector<int> segment_ends(const Model& model, const std::vector<int>& order, int nodes) {
  const int n = model.size();
  std::vector<int> position(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) position[static_cast<std::size_t>(order[p])] = p;
  // Prefix weights and the bytes crossing a cut after each position.
  std::vector<double> weight(static_cast<std::size_t>(n) + 1, 0.0),
      crossing(static_cast<std::size_t>(n) + 1, 0.0);
  for (int p = 0; p < n; ++p) {
    const auto* d = smallest_degree(model.layers[static_cast<std::size_t>(order[p])]);
    const double w =
        d ? d->options[static_cast<std::size_t>(pick(d->options, false))].compute_time_s : 0;
    weight[static_cast<std::size_t>(p) + 1] = weight[static_cast<std::size_t>(p)] + w;
  }
  std::vector<double> delta(static_cast<std::size_t>(n) + 1, 0.0);
  for (const Edge& e : model.edges) {
    delta[static_cast<std::size_t>(position[static_cast<std::size_t>(e.from)])] += e.bytes;
    delta[static_cast<std::size_t>(position[static_cast<std::size_t>(e.to)])] -= e.bytes;
  }
  for (int p = 0; p < n; ++p)
    crossing[static_cast<std::size_t>(p)] =
        (p ? crossing[static_cast<std::size_t>(p) - 1] : 0) + delta[static_cast<std::size_t>(p)];
  // Segment ends (exclusive positions).
  const double total = weight[static_cast<std::size_t>(n)];
  std::vector<int> ends;
  int start = 0;
  for (int j = 0; j < nodes - 1; ++j) {
    const double ideal = total * (j + 1) / nodes, slack = total / nodes / 4;
    const int last = n - (nodes - 1 - j);  // leave a layer for each later segment
    int best = -1;
    for (int p = start + 1; p <= last; ++p) {  // cut between positions p-1 and p
      const double w = weight[static_cast<std::size_t>(p)];
      if (std::fabs(w - ideal) > slack) continue;
      if (best < 0 ||
          crossing[static_cast<std::size_t>(p) - 1] <
              crossing[static_cast<std::size_t>(best) - 1] ||
          (crossing[static_cast<std::size_t>(p) - 1] ==
               crossing[static_cast<std::size_t>(best) - 1] &&
           std::fabs(w - ideal) < std::fabs(weight[static_cast<std::size_t>(best)] - ideal)))
        best = p;
    }
    if (best < 0) {  // nothing near the balanced point: the closest cut
      best = start + 1;
      for (int p = start + 1; p <= last; ++p)
        if (std::fabs(weight[static_cast<std::size_t>(p)] - ideal) <
            std::fabs(weight[static_cast<std::size_t>(best)] - ideal))
          best = p;
    }
    ends.push_back(best);
    start = best;
  }
  ends.push_back(n);
  return ends;
}

}  // namespace

CoarseModel coarsen(const Model& model, int nodes) {
  CoarseModel out;
  const int n = model.size();
  const std::vector<int> order = model.topological_order();
  if (static_cast<int>(order.size()) != n)
    throw Error(ErrorKind::kInput, "model", "the layer graph has a cycle");
  if (nodes >= n || nodes < 1) {
    out.model = model;
    for (int v = 0; v < n; ++v) out.members.push_back({v});
    return out;
  }
  const std::vector<int> ends = segment_ends(model, order, nodes);
  std::vector<int> segment(static_cast<std::size_t>(n));
  out.members.assign(ends.size(), {});
  for (std::size_t j = 0, p = 0; j < ends.size(); ++j)
    for (; static_cast<int>(p) < ends[j]; ++p) {
      segment[static_cast<std::size_t>(order[p])] = static_cast<int>(j);
      out.members[j].push_back(order[p]);
    }
  for (auto& m : out.members) std::sort(m.begin(), m.end());
  // Edges between segments, summed.
  std::map<std::pair<int, int>, double> edges;
  for (const Edge& e : model.edges) {
    const int a = segment[static_cast<std::size_t>(e.from)],
              b = segment[static_cast<std::size_t>(e.to)];
    if (a != b) edges[{a, b}] += e.bytes;
  }
  Model& c = out.model;
  c.name = model.name;
  c.profile_batch_size = model.profile_batch_size;
  c.profiled = model.profiled;
  c.microbatches = model.microbatches;
  for (const auto& [pair, bytes] : edges) c.edges.push_back({pair.first, pair.second, bytes});
  c.layers.resize(out.members.size());
  c.index();
  // Each coarse edge's position among its ends' in- and out-edges (for the sync bytes).
  std::map<std::pair<int, int>, int> coarse_edge;
  std::vector<int> in_pos(c.edges.size()), out_pos(c.edges.size());
  for (std::size_t e = 0; e < c.edges.size(); ++e)
    coarse_edge[{c.edges[e].from, c.edges[e].to}] = static_cast<int>(e);
  for (int v = 0; v < c.size(); ++v) {
    for (std::size_t q = 0; q < c.in_edge_ids[static_cast<std::size_t>(v)].size(); ++q)
      in_pos[static_cast<std::size_t>(c.in_edge_ids[static_cast<std::size_t>(v)][q])] =
          static_cast<int>(q);
    for (std::size_t q = 0; q < c.out_edge_ids[static_cast<std::size_t>(v)].size(); ++q)
      out_pos[static_cast<std::size_t>(c.out_edge_ids[static_cast<std::size_t>(v)][q])] =
          static_cast<int>(q);
  }
  for (std::size_t j = 0; j < out.members.size(); ++j) {
    Layer& layer = c.layers[j];
    layer.id = static_cast<std::int64_t>(j);
    layer.name = fmt::format(
        "layers {}..{} ({})", model.layers[static_cast<std::size_t>(out.members[j].front())].id,
        model.layers[static_cast<std::size_t>(out.members[j].back())].id, out.members[j].size());
    // Degrees every member has.
    std::map<int, int> have;
    for (int v : out.members[j])
      for (const auto& d : model.layers[static_cast<std::size_t>(v)].by_degree)
        if (!d.options.empty()) ++have[d.degree];
    for (const auto& [degree, count] : have) {
      if (count != static_cast<int>(out.members[j].size())) continue;
      TensorParallelOptions group{degree, {}};
      for (bool lean : {false, true}) {
        LayerOption sum;
        sum.id = lean ? "leanest" : "fastest";
        sum.sync_in_bytes.assign(c.in_edge_ids[j].size(), 0.0);
        sum.sync_out_bytes.assign(c.out_edge_ids[j].size(), 0.0);
        bool forward = true;
        for (int v : out.members[j]) {
          const auto* opts = model.layers[static_cast<std::size_t>(v)].options_for(degree);
          const LayerOption& o = (*opts)[static_cast<std::size_t>(pick(*opts, lean))];
          sum.compute_time_s += o.compute_time_s;
          sum.forward_time_s += o.forward_time_s;
          forward = forward && o.forward_time_s > 0;
          sum.optimizer_time_s += o.optimizer_time_s;
          sum.parameter_bytes += o.parameter_bytes;
          sum.memory_per_inflight_bytes += o.memory_per_inflight_bytes;
          sum.memory_fixed_bytes += o.memory_fixed_bytes;
          // Its sync bytes on edges that leave the segment go to the coarse edge they join.
          const auto& ins = model.in_edge_ids[static_cast<std::size_t>(v)];
          for (std::size_t q = 0; q < ins.size() && q < o.sync_in_bytes.size(); ++q) {
            const int from = segment[static_cast<std::size_t>(
                model.edges[static_cast<std::size_t>(ins[q])].from)];
            if (from != static_cast<int>(j))
              sum.sync_in_bytes[static_cast<std::size_t>(
                  in_pos[static_cast<std::size_t>(coarse_edge.at({from, static_cast<int>(j)}))])] +=
                  o.sync_in_bytes[q];
          }
          const auto& outs = model.out_edge_ids[static_cast<std::size_t>(v)];
          for (std::size_t q = 0; q < outs.size() && q < o.sync_out_bytes.size(); ++q) {
            const int to = segment[static_cast<std::size_t>(
                model.edges[static_cast<std::size_t>(outs[q])].to)];
            if (to != static_cast<int>(j))
              sum.sync_out_bytes[static_cast<std::size_t>(
                  out_pos[static_cast<std::size_t>(coarse_edge.at({static_cast<int>(j), to}))])] +=
                  o.sync_out_bytes[q];
          }
        }
        if (!forward) sum.forward_time_s = 0;
        if (lean && group.options.size() == 1 &&
            group.options[0].compute_time_s == sum.compute_time_s &&
            group.options[0].memory_per_inflight_bytes == sum.memory_per_inflight_bytes &&
            group.options[0].sync_in_bytes == sum.sync_in_bytes &&
            group.options[0].sync_out_bytes == sum.sync_out_bytes)
          continue;  // one option is both
        group.options.push_back(sum);
      }
      layer.by_degree.push_back(std::move(group));
    }
  }
  return out;
}

namespace {

// Per-layer options of each stage chosen exactly (the cost model's knapsack) and the plan scored.
// The cursor prices a stage as what is left of a successor-closed set: this stage and every
// later one, the later layers removed sinks first (so edges into later stages count as cut).
Plan priced(const PiperCostModel& cost, StageCursor& cursor, std::vector<Stage> stages) {
  const auto& shapes = cost.shapes();
  const Model& model = cost.model();
  // Layers in topological order with their stage: a stage's successor-closed set is every
  // layer of it or a later stage, and the later ones leave it last-first.
  std::vector<int> stage_of(static_cast<std::size_t>(model.size()), 0);
  for (std::size_t i = 0; i < stages.size(); ++i)
    for (int v : stages[i].layers) stage_of[static_cast<std::size_t>(v)] = static_cast<int>(i);
  const std::vector<int> order = model.topological_order();
  long long suffix = 0;
  for (const Stage& st : stages) suffix += st.data_parallel;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    Stage& st = stages[i];
    std::vector<int> closed, later;
    for (int v : order) {
      const int at = stage_of[static_cast<std::size_t>(v)];
      if (at >= static_cast<int>(i)) closed.push_back(v);
      if (at > static_cast<int>(i)) later.push_back(v);
    }
    std::sort(st.layers.begin(), st.layers.end());
    const int d = st.data_parallel;
    int shape = -1;
    for (int s = 0; s < static_cast<int>(shapes.size()); ++s)
      if (shapes[static_cast<std::size_t>(s)].data_parallel == d &&
          shapes[static_cast<std::size_t>(s)].tensor_parallel == st.tensor_parallel &&
          shapes[static_cast<std::size_t>(s)].device_type == st.device_type)
        shape = s;
    const int y = static_cast<int>((suffix + d - 1) / d);
    suffix -= d;
    st.option_index.assign(st.layers.size(), 0);
    if (shape < 0) continue;
    cursor.reset(closed);
    for (auto it = later.rbegin(); it != later.rend(); ++it) cursor.remove(*it);
    if (!std::isfinite(cursor.cost(shape, y))) continue;  // evaluate() marks it infeasible
    const auto choice = cursor.choice(shape, y);
    for (const auto& [layer, option] : choice) {
      const auto it = std::lower_bound(st.layers.begin(), st.layers.end(), layer);
      st.option_index[static_cast<std::size_t>(it - st.layers.begin())] = option;
    }
  }
  Plan plan;
  plan.stages = std::move(stages);
  return cost.evaluate(plan);
}

std::pair<double, double> score(const Plan& p) {
  double sum = 0;
  for (const Stage& st : p.stages) sum += st.time;
  return {p.feasible ? p.objective : kInfinity, sum};
}

// Uncoarsens a coarse plan (each stage's layers with their exact options) and refines it.
// Refinement: move one layer across a boundary between consecutive stages (a layer with no
// successor left in its stage goes to the next; one with no predecessor in its stage to the
// previous) while (bottleneck, sum of stage times) falls. Bounded passes and evaluations.
Plan uncoarsened(const CoarseModel& coarse, const PiperCostModel& cost, const Plan& coarse_plan,
                 double& unrefined_objective, int& moves) {
  const Model& model = cost.model();
  std::vector<Stage> stages;
  for (const Stage& cs : coarse_plan.stages) {
    Stage st;
    st.data_parallel = cs.data_parallel;
    st.tensor_parallel = cs.tensor_parallel;
    st.device_type = cs.device_type;
    for (int v : cs.layers)
      st.layers.insert(st.layers.end(), coarse.members[static_cast<std::size_t>(v)].begin(),
                       coarse.members[static_cast<std::size_t>(v)].end());
    stages.push_back(std::move(st));
  }
  auto cursor = cost.cursor();
  Plan best = priced(cost, *cursor, stages);
  unrefined_objective = best.objective;
  std::vector<int> stage_of(static_cast<std::size_t>(model.size()), -1);
  const auto index = [&](const Plan& p) {
    for (std::size_t i = 0; i < p.stages.size(); ++i)
      for (int v : p.stages[i].layers) stage_of[static_cast<std::size_t>(v)] = static_cast<int>(i);
  };
  index(best);
  long long evaluations = 0;
  const long long budget = std::max<long long>(2000, 20000000 / std::max(1, model.size()));
  bool improved = true;
  while (improved && evaluations < budget) {
    improved = false;
    for (std::size_t i = 0; i + 1 < best.stages.size() && evaluations < budget; ++i) {
      for (int direction : {+1, -1}) {
        const std::size_t from = direction > 0 ? i : i + 1, to = direction > 0 ? i + 1 : i;
        const std::vector<int> candidates = best.stages[from].layers;
        if (candidates.size() < 2) continue;
        for (int v : candidates) {
          if (evaluations >= budget) break;
          if (stage_of[static_cast<std::size_t>(v)] != static_cast<int>(from) ||
              !model.layers[static_cast<std::size_t>(v)].options_for(
                  best.stages[to].tensor_parallel))
            continue;  // moved already, or it cannot run at the other stage's degree
          const auto& near = direction > 0 ? model.out_edge_ids[static_cast<std::size_t>(v)]
                                           : model.in_edge_ids[static_cast<std::size_t>(v)];
          bool free = true;
          for (int e : near) {
            const Edge& edge = model.edges[static_cast<std::size_t>(e)];
            if (stage_of[static_cast<std::size_t>(direction > 0 ? edge.to : edge.from)] ==
                static_cast<int>(from))
              free = false;
          }
          if (!free) continue;
          std::vector<Stage> moved = best.stages;
          auto& src = moved[from].layers;
          src.erase(std::find(src.begin(), src.end(), v));
          moved[to].layers.push_back(v);
          if (src.empty()) continue;
          ++evaluations;
          Plan candidate = priced(cost, *cursor, moved);
          const auto a = score(candidate), b = score(best);
          if (a.first < b.first || (a.first == b.first && a.second < b.second * (1 - 1e-12))) {
            best = std::move(candidate);
            index(best);
            ++moves;
            improved = true;
          }
        }
      }
    }
  }
  return best;
}

}  // namespace

CoarsePlanResult plan_coarsened(const Model& model, const PiperSettings& settings, int nodes,
                                const PipelineSearchOptions& options,
                                const CoarseIterationOptions* iteration) {
  CoarsePlanResult r;
  const CoarseModel coarse = coarsen(model, nodes);
  r.super_nodes = coarse.model.size();
  const PiperCostModel coarse_cost(coarse.model, settings);
  const Plan coarse_plan = search_pipeline(coarse.model, coarse_cost, options).plan;
  r.coarse_objective = coarse_plan.objective;
  const PiperCostModel cost(model, settings);
  if (!coarse_plan.feasible) {
    r.plan = coarse_plan;
    r.plan.stages.clear();
    r.uncoarsened_objective = kInfinity;
    return r;
  }
  r.plan = uncoarsened(coarse, cost, coarse_plan, r.uncoarsened_objective, r.moves);
  if (!iteration) return r;
  // The iteration objective: the exact search on the coarse graph, seeded by its steady-state
  // optimum, then both plans uncoarsened and replayed on the real layers; the faster one (ties:
  // the steady-state one) unless the user's stage count or widths rule the seed out.
  const IterationSearchResult it = search_pipeline_iteration(
      coarse.model, coarse_cost, settings.microbatches,
      [&](const Plan& p) { return iteration->replay(coarse.model, p); }, coarse_plan,
      iteration->search);
  CoarsePlanResult::Iteration out;
  out.stage_prices = it.stage_prices;
  out.plans_replayed = it.plans_replayed + 1;
  out.steady_state_plan_iteration_s = iteration->replay(model, r.plan);
  out.iteration_s = out.steady_state_plan_iteration_s;
  const bool constrained = iteration->search.stages > 0 || !iteration->search.stage_widths.empty();
  if (!it.plan.feasible) {
    r.plan.feasible = false;
    r.plan.stages.clear();
    r.plan.objective = kInfinity;
  } else if (constrained || !(it.iteration_s >= it.seed_iteration_s)) {
    double objective = 0;
    int moves = 0;
    Plan searched = uncoarsened(coarse, cost, it.plan, objective, moves);
    const double searched_s = iteration->replay(model, searched);
    ++out.plans_replayed;
    if (constrained || searched_s < out.steady_state_plan_iteration_s) {
      r.plan = std::move(searched);
      r.coarse_objective = it.plan.objective;
      r.uncoarsened_objective = objective;
      r.moves = moves;
      out.iteration_s = searched_s;
    }
  }
  r.iteration = out;
  return r;
}

}  // namespace paraplan
