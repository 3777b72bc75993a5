// Label-setting dynamic programme over (state, GPUs used, GPUs of the last stage) with Pareto
// labels (bottleneck P, activation hops H, largest stage all-reduce A); every complete label is
// scored with the full latency formula, and the best layout wins. A bounds the all-reduce tail
// from above (the formula subtracts s·β of slack). Not exact: a cell keeps at most 12 labels
// (past that the one with the worst latency estimate goes), and the bound on the tail can rank
// two labels wrongly, so the best layout can be missed. Every candidate DAPPLE's planner
// generates is scored too (search/dapple_candidates), so the plan is never worse than DAPPLE's
// on the same model (tested on every profile, layout and micro-batch size).
#include "search/dapple_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "search/dapple_candidates.h"

namespace paraplan {
namespace {

struct Label {
  double bottleneck;  // P so far
  double hops;        // Σ per-micro-batch activation transfers so far
  double allreduce;   // max over stages of the gradient all-reduce time
  double estimate;    // P·(M-1)/M + H + A: the latency with the tail bounded by A
  int prev_state;     // -1: this is the first stage
  int prev_units;     // units used before this stage
  int prev_last;      // units of the previous stage
  int prev_label;
};

std::vector<int> range(int begin, int end) {
  std::vector<int> r;
  for (int i = begin; i < end; ++i) r.push_back(i);
  return r;
}

class Searcher {
 public:
  Searcher(const DappleCostModel& cost, int max_dp_states)
      : cost_(cost),
        n_(cost.states().size()),
        gpus_(cost.devices()),
        max_dp_states_(max_dp_states) {
    // Successors in the state DAG: j such that k is a (transitive) predecessor of j.
    succ_.assign(n_, {});
    for (int j = 0; j < n_; ++j)
      for (int k : cost.states().predecessors[j]) succ_[k].push_back(j);
  }

  DappleSearchResult run() {
    DappleSearchResult result;
    result.data_parallel_latency_s = cost_.data_parallel_latency_s();
    // One stage: any replica count and any multiple of it (plain data parallelism included).
    for (int rp = 1; rp <= gpus_; ++rp)
      for (int g = rp; g <= gpus_; g += rp) consider({{n_ - 1}, {range(0, g)}, rp});
    // Every two-stage layout first: a good incumbent makes the label programme's bound bite.
    two_stages();
    if (n_ <= max_dp_states_)
      for (int rp = gpus_; rp >= 1; --rp) label_dp(rp);
    // Every candidate DAPPLE's own planner generates (its straight pipelines, whose GPUs follow
    // its allocator, and bipartitions with GPUs from every machine): the plan is never worse.
    for_each_dapple_candidate(
        cost_, [&](const DappleCandidate& c) { consider(c.layout); }, max_dp_states_);
    result.layout = best_;
    result.plan = cost_.to_plan(best_);
    result.layouts_scored = scored_;
    return result;
  }

 private:
  void consider(const DappleLayout& layout) {
    ++scored_;
    double latency = cost_.latency_s(layout);
    if (latency < best_latency_) {
      best_latency_ = latency;
      best_ = layout;
    }
  }

  void two_stages() {
    for (int rp = 1; rp <= gpus_; ++rp) {
      const long long m = static_cast<long long>(cost_.settings().global_batch) / rp /
                          cost_.settings().microbatch_size;
      if (m <= 0) continue;
      const double md = static_cast<double>(m), warmup = cost_.total_compute_s() / rp / md;
      const auto& pre = cost_.states().prefix_parameter_bytes;
      for (int k : cost_.states().predecessors[n_ - 1]) {
        const double first = cost_.compute_s(-1, k), second = cost_.compute_s(k, n_ - 1);
        const double first_parameters = pre[std::min(k + 1, n_ - 1)];  // DAPPLE's off-by-one
        for (int g1 = rp; g1 < gpus_; g1 += rp) {
          // The first stage's all-reduce has no slack: it is a floor on the tail.
          const double tail = cost_.allreduce_s(0, g1, first_parameters);
          for (int g2 = rp; g1 + g2 <= gpus_; g2 += rp) {
            // L >= P·(M-1)/M + Ctot/(rp·M) + tail with P >= each stage's compute share.
            const double p = std::max(first / g1, second / g2);
            if (p * (md - 1) / md + warmup + tail >= best_latency_) continue;
            consider({{k, n_ - 1}, {range(0, g1), range(g1, g1 + g2)}, rp});
          }
        }
      }
    }
  }

  double parameters(int k, int j) const {
    const auto& pre = cost_.states().prefix_parameter_bytes;
    return pre[j] - (k >= 0 ? pre[k] : 0.0);
  }

  static bool insert(std::vector<Label>& cell, const Label& l) {
    for (const auto& o : cell)
      if (o.bottleneck <= l.bottleneck && o.hops <= l.hops && o.allreduce <= l.allreduce)
        return false;
    std::erase_if(cell, [&](const Label& o) {
      return l.bottleneck <= o.bottleneck && l.hops <= o.hops && l.allreduce <= o.allreduce;
    });
    cell.push_back(l);
    // A cell keeps at most kMaxLabels trade-offs: past that, the one whose latency estimate
    // (the formula with the tail bounded by A) is worst goes.
    if (cell.size() > kMaxLabels) {
      auto worst = std::max_element(cell.begin(), cell.end(), [](const Label& a, const Label& b) {
        return a.estimate < b.estimate;
      });
      cell.erase(worst);
    }
    return true;
  }
  static constexpr std::size_t kMaxLabels = 12;
  static constexpr int kMaxUnits = 16;

  void label_dp(int rp) {
    const int units = gpus_ / rp;
    const long long m = static_cast<long long>(cost_.settings().global_batch) / rp /
                        cost_.settings().microbatch_size;
    // The label programme is cubic in the units; past kMaxUnits, rp values with fewer units
    // (and the exhaustive one- and two-stage layouts) cover the space.
    if (m <= 0 || units < 2 || units > kMaxUnits) return;
    const double md = static_cast<double>(m);
    // Whatever follows, L >= P·(M-1)/M + Ctot/(rp·M) + H: labels at or above the incumbent go.
    const double warmup = cost_.total_compute_s() / rp / md;
    auto hopeless = [&](const Label& l) {
      return l.bottleneck * (md - 1) / md + warmup + l.hops >= best_latency_;
    };
    // cells[(j * (units + 1) + used) * (units + 1) + last]
    auto index = [&](int j, int used, int last) {
      return (static_cast<std::size_t>(j) * (units + 1) + used) * (units + 1) + last;
    };
    std::vector<std::vector<Label>> cells(static_cast<std::size_t>(n_) * (units + 1) * (units + 1));
    for (int j = 0; j < n_; ++j)
      for (int u = 1; u <= units; ++u) {
        Label l{cost_.compute_s(-1, j) / (u * rp),
                0.0,
                cost_.allreduce_s(range(0, u * rp), parameters(-1, j)),
                0.0,
                -1,
                0,
                0,
                -1};
        l.estimate = l.bottleneck * (md - 1) / md + l.hops + l.allreduce;
        cells[index(j, u, u)].push_back(l);
      }
    for (int k = 0; k < n_; ++k) {
      for (int used = 1; used <= units; ++used) {
        for (int last = 1; last <= used; ++last) {
          const auto& from = cells[index(k, used, last)];
          if (from.empty()) continue;
          const std::vector<int> prev_gpus = range((used - last) * rp, used * rp);
          for (int add = 1; used + add <= units; ++add) {
            const std::vector<int> gpus = range(used * rp, (used + add) * rp);
            const double hop = cost_.transfer_s(prev_gpus, gpus, cost_.cut_bytes(k));
            const double hop_per_microbatch =
                cost_.transfer_s(prev_gpus, gpus, cost_.cut_bytes(k) / rp / md);
            for (int j : succ_[k]) {
              const double stage = cost_.compute_s(k, j) / (add * rp);
              const double allreduce = cost_.allreduce_s(gpus, parameters(k, j));
              for (int li = 0; li < static_cast<int>(from.size()); ++li) {
                Label l{std::max({from[li].bottleneck, stage, hop}),
                        from[li].hops + hop_per_microbatch,
                        std::max(from[li].allreduce, allreduce),
                        0.0,
                        k,
                        used,
                        last,
                        li};
                if (hopeless(l)) continue;
                l.estimate = l.bottleneck * (md - 1) / md + l.hops + l.allreduce;
                insert(cells[index(j, used + add, add)], l);
              }
            }
          }
        }
      }
    }
    // Score every complete multi-stage label exactly.
    for (int used = 2; used <= units; ++used)
      for (int last = 1; last < used; ++last) {
        const auto& cell = cells[index(n_ - 1, used, last)];
        for (int li = 0; li < static_cast<int>(cell.size()); ++li) {
          if (cell[li].prev_state < 0) continue;
          DappleLayout layout;
          layout.replicas = rp;
          int j = n_ - 1, u = used, a = last, idx = li;
          while (true) {
            const Label& l = cells[index(j, u, a)][idx];
            layout.cuts.push_back(j);
            layout.gpus.push_back(range((u - a) * rp, u * rp));
            if (l.prev_state < 0) break;
            j = l.prev_state;
            idx = l.prev_label;
            int pu = l.prev_units, pa = l.prev_last;
            u = pu;
            a = pa;
          }
          std::reverse(layout.cuts.begin(), layout.cuts.end());
          std::reverse(layout.gpus.begin(), layout.gpus.end());
          consider(layout);
        }
      }
  }

  const DappleCostModel& cost_;
  int n_, gpus_, max_dp_states_;
  std::vector<std::vector<int>> succ_;
  DappleLayout best_;
  double best_latency_ = std::numeric_limits<double>::infinity();
  long long scored_ = 0;
};

}  // namespace

DappleSearchResult search_dapple(const DappleCostModel& cost, int max_dp_states) {
  return Searcher(cost, max_dp_states).run();
}

}  // namespace paraplan
