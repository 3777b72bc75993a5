#include "search/dapple_candidates.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace paraplan {
namespace {

using Set = std::vector<int>;

void add_unique(std::vector<Set>& sets, Set s) {
  std::sort(s.begin(), s.end());
  if (std::find(sets.begin(), sets.end(), s) == sets.end()) sets.push_back(std::move(s));
}

}  // namespace

std::vector<Set> dapple_next_cards(const std::vector<int>& ends, const std::vector<bool>& occupied,
                                   int g) {
  const int machines = static_cast<int>(ends.size());
  std::vector<int> begin(static_cast<std::size_t>(machines)), free(begin.size());
  std::vector<bool> fresh(begin.size());
  int total_free = 0;
  for (int k = 0; k < machines; ++k) {
    begin[k] = k == 0 ? 0 : ends[k - 1];
    fresh[k] = true;
    for (int id = begin[k]; id < ends[k]; ++id) {
      if (occupied[id])
        fresh[k] = false;
      else
        ++free[k];
    }
    total_free += free[k];
  }
  std::vector<Set> out;
  if (g < 1 || total_free < g) return out;
  // FreshFirst (fresh machines only) and AppendFirst (the others): per machine, skip the
  // occupied ids at its start, then take what is still needed (consecutively) or the rest of it.
  for (bool want_fresh : {true, false}) {
    Set taken;
    int need = g;
    bool broken = false;
    for (int k = 0; k < machines && need > 0 && !broken; ++k) {
      if (fresh[k] != want_fresh) continue;
      int id = begin[k];
      while (id < ends[k] && occupied[id]) ++id;
      const int take = free[k] >= need ? need : ends[k] - id;
      for (int i = 0; i < take; ++i, ++id) {
        // DAPPLE does not re-check here; with occupancy that is not a prefix of the machine it
        // would hand out an occupied GPU or one past the machine: no candidate then.
        if (id >= ends[k] || occupied[id]) broken = true;
        taken.push_back(id);
      }
      need -= take;
    }
    if (!broken && need == 0) add_unique(out, taken);
  }
  // ScatterFirst: round robin over the machines, the lowest free id of each.
  Set taken;
  std::vector<bool> used = occupied;
  for (int need = g; need > 0;)
    for (int k = 0; k < machines && need > 0; ++k)
      for (int id = begin[k]; id < ends[k]; ++id)
        if (!used[id]) {
          used[id] = true;
          taken.push_back(id);
          --need;
          break;
        }
  add_unique(out, taken);
  return out;
}

std::vector<Set> dapple_next_cards_with_replica(const std::vector<int>& ends,
                                                const std::vector<bool>& occupied, int g, int rp) {
  // Breadth first over the replicas; occupancies reached twice are followed once.
  std::set<std::vector<bool>> level{occupied};
  for (int r = 0; r < rp; ++r) {
    std::set<std::vector<bool>> next;
    for (const auto& occ : level)
      for (const Set& s : dapple_next_cards(ends, occ, g)) {
        std::vector<bool> o = occ;
        for (int id : s) o[id] = true;
        next.insert(std::move(o));
      }
    level = std::move(next);
  }
  std::vector<Set> out;
  for (const auto& occ : level) {
    Set s;
    for (std::size_t id = 0; id < occ.size(); ++id)
      if (occ[id] && !occupied[id]) s.push_back(static_cast<int>(id));
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

std::vector<bool> occupancy(int n, const Set& s) {
  std::vector<bool> o(static_cast<std::size_t>(n), false);
  for (int id : s) o[static_cast<std::size_t>(id)] = true;
  return o;
}

// DAPPLE's straight stage DP (plan_for(i, true), §5.1) with `units` stages of rp GPUs each: a
// cell per (last state, units used) keeps, per occupancy, the best bottleneck (2·a in the
// transfers) and how it was reached; the pipeline is the best full cell, backtracked.
struct Cell {
  double value;
  double hops;     // Σ per-micro-batch activation transfers: the tie-break (DAPPLE's is set order)
  int prev_state;  // -1: the first stage
  std::vector<bool> prev_key;
  Set gpus;
};

bool straight(const DappleCostModel& cost, int units, int rp, DappleLayout& layout) {
  const int n = cost.states().size(), gpus = cost.devices();
  const auto& ends = cost.settings().machine_ends;
  if (n < units) return false;
  // table[j][m]: occupancy → cell (std::map: a fixed order).
  std::vector<std::vector<std::map<std::vector<bool>, Cell>>> table(
      static_cast<std::size_t>(n),
      std::vector<std::map<std::vector<bool>, Cell>>(static_cast<std::size_t>(units)));
  std::vector<std::vector<const Cell*>> best(static_cast<std::size_t>(n),
                                             std::vector<const Cell*>(units, nullptr));
  const std::vector<Set> first = dapple_next_cards(ends, std::vector<bool>(gpus, false), rp);
  if (first.empty()) return false;
  const Set g0 = first.front();  // FreshFirst when it exists: it is listed first
  for (int j = 0; j < n; ++j) {
    auto& cell = table[j][0][occupancy(gpus, g0)];
    cell = {cost.compute_s(-1, j) / rp, 0.0, -1, {}, g0};
    best[j][0] = &cell;
  }
  const long long microbatches =
      static_cast<long long>(cost.settings().global_batch) / rp / cost.settings().microbatch_size;
  if (microbatches <= 0) return false;
  const double md = static_cast<double>(microbatches);
  // The next stage's GPU sets from an occupancy (few distinct occupancies recur for every pair
  // of states).
  std::map<std::vector<bool>, std::vector<Set>> allocations;
  const auto next = [&](const std::vector<bool>& key) -> const std::vector<Set>& {
    auto it = allocations.find(key);
    if (it == allocations.end())
      it = allocations.emplace(key, dapple_next_cards_with_replica(ends, key, 1, rp)).first;
    return it->second;
  };
  const auto better = [](double v, double h, const Cell& than) {
    return v < than.value || (v == than.value && h < than.hops);
  };
  for (int m = 1; m < units; ++m)
    for (int j = 1; j < n; ++j) {
      const Cell* chosen = nullptr;
      for (int k : cost.states().predecessors[j]) {
        const double stage = cost.compute_s(k, j) / rp;
        const double bytes = 2 * cost.cut_bytes(k), per_microbatch = cost.cut_bytes(k) / rp / md;
        for (const auto& [key, cell] : table[k][m - 1])
          for (const Set& g : next(key)) {
            const double v = std::max({cell.value, stage, cost.transfer_s(cell.gpus, g, bytes)});
            const double h = cell.hops + cost.transfer_s(cell.gpus, g, per_microbatch);
            std::vector<bool> to = key;
            for (int id : g) to[id] = true;
            auto [it, fresh] = table[j][m].try_emplace(to, Cell{v, h, k, key, g});
            if (!fresh && better(v, h, it->second)) it->second = Cell{v, h, k, key, g};
            // A key's cell only improves, so a pointer to it stays the best choice.
            if (!chosen || better(v, h, *chosen)) chosen = &it->second;
          }
      }
      best[j][m] = chosen;
    }
  const Cell* cell = best[n - 1][units - 1];
  if (!cell) return false;
  layout = {};
  layout.replicas = rp;
  int j = n - 1;
  for (int m = units - 1; m >= 0; --m) {
    layout.cuts.push_back(j);
    layout.gpus.push_back(cell->gpus);
    if (m == 0) break;
    const int k = cell->prev_state;
    cell = &table[k][m - 1].at(cell->prev_key);
    j = k;
  }
  std::reverse(layout.cuts.begin(), layout.cuts.end());
  std::reverse(layout.gpus.begin(), layout.gpus.end());
  return true;
}

}  // namespace

void for_each_dapple_candidate(const DappleCostModel& cost,
                               const std::function<void(const DappleCandidate&)>& visit,
                               int max_straight_states) {
  const int n = cost.states().size(), N = cost.devices();
  const auto& ends = cost.settings().machine_ends;
  // (a) one stage on i·⌊N/i⌋ GPUs (FreshFirst: the first ids), ⌊N/i⌋ replicas.
  for (int i = 2; i <= N; ++i) {
    const int rp = N / i;
    Set g;
    for (int id = 0; id < i * rp; ++id) g.push_back(id);
    visit({"data parallel i=" + std::to_string(i), {{n - 1}, {g}, rp}});
  }
  // (b), (c): the straight pipelines of 2 stages × N/2 replicas (N > 2 and even) and of N
  // stages × 1 GPU.
  DappleLayout layout;
  if (N > 2 && N % 2 == 0 && straight(cost, 2, N / 2, layout)) visit({"straight 2", layout});
  if (n <= max_straight_states && straight(cost, N, 1, layout)) visit({"straight N", layout});
  // (d) every cut, every split of the GPUs, every allocation of each side.
  const std::vector<bool> empty(static_cast<std::size_t>(N), false);
  for (int g = 1; g < N; ++g)
    for (const Set& g1 : dapple_next_cards(ends, empty, g))
      for (const Set& g2 : dapple_next_cards(ends, occupancy(N, g1), N - g)) {
        DappleCandidate c{"bipartition", {{0, n - 1}, {g1, g2}, 1}};
        for (int l = 0; l + 1 < n; ++l) {
          c.layout.cuts[0] = l;
          visit(c);
        }
      }
}

}  // namespace paraplan
