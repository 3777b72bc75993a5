#include "search/placement.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace paraplan {
namespace {

// (slowest stage, sum over stages): the local search's order; the first is the objective.
std::pair<double, double> placement_score(const PlacementCostModel& cost,
                                          const std::vector<int>& place) {
  double worst = 0, sum = 0;
  for (const auto& c : cost.stage_costs(place)) {
    worst = std::max(worst, c.total());
    sum += c.total();
  }
  return {worst, sum};
}

bool better(std::pair<double, double> a, std::pair<double, double> b) {
  const double eps = 1e-12;
  if (a.first < b.first * (1 - eps)) return true;
  if (a.first > b.first) return false;  // the slowest stage never gets slower
  return a.second < b.second * (1 - eps);
}

// Twins: devices joined to the same switches by equal links, in the same machine and device
// group, whose routes
// to and from every other device differ only in their own first or last link. Swapping two free
// twins maps every completion of a partial placement to one of equal cost, so branch and bound
// tries one free device per class.
std::vector<int> twin_classes(const PlacementCostModel& cost) {
  const Topology& t = cost.topology();
  const int devices = t.device_count();
  using Neighbours = std::vector<std::tuple<int, double, double>>;
  std::vector<Neighbours> around(static_cast<std::size_t>(devices));
  std::vector<bool> plain(static_cast<std::size_t>(devices), true);  // joined to switches only
  for (const auto& e : t.edges())
    for (auto [self, other] : {std::pair{e.a, e.b}, std::pair{e.b, e.a}})
      if (self < devices) {
        around[static_cast<std::size_t>(self)].push_back(
            {other, e.bandwidth_bytes_per_s, e.latency_s});
        if (other < devices) plain[static_cast<std::size_t>(self)] = false;
      }
  const auto& machine = cost.machine_of_device();
  const auto symmetric = [&](int a, int b) {
    for (int x = 0; x < devices; ++x) {
      if (x == a || x == b) continue;
      auto out_a = t.route(a, x), out_b = t.route(b, x);
      auto in_a = t.route(x, a), in_b = t.route(x, b);
      if (out_a.size() != out_b.size() || in_a.size() != in_b.size() ||
          !std::equal(out_a.begin() + 1, out_a.end(), out_b.begin() + 1) ||
          !std::equal(in_a.begin(), in_a.end() - 1, in_b.begin()))
        return false;
    }
    return true;
  };
  const auto& group = cost.group_of_device();
  // (neighbours, machine, device group) → the class representatives
  std::map<std::tuple<Neighbours, int, int>, std::vector<int>> groups;
  std::vector<int> cls(static_cast<std::size_t>(devices));
  int classes = 0;
  for (int d = 0; d < devices; ++d) {
    Neighbours n = around[static_cast<std::size_t>(d)];
    std::sort(n.begin(), n.end());
    cls[static_cast<std::size_t>(d)] = -1;
    if (plain[static_cast<std::size_t>(d)]) {
      auto& reps = groups[{n, machine.empty() ? 0 : machine[static_cast<std::size_t>(d)],
                           group.empty() ? 0 : group[static_cast<std::size_t>(d)]}];
      for (int rep : reps)
        if (symmetric(rep, d)) {
          cls[static_cast<std::size_t>(d)] = cls[static_cast<std::size_t>(rep)];
          break;
        }
      if (cls[static_cast<std::size_t>(d)] < 0) reps.push_back(d);
    }
    if (cls[static_cast<std::size_t>(d)] < 0) cls[static_cast<std::size_t>(d)] = classes++;
  }
  return cls;
}

class BranchAndBound {
 public:
  BranchAndBound(const PlacementCostModel& cost, long long limit, std::vector<int> incumbent,
                 double incumbent_cost)
      : cost_(cost),
        limit_(limit),
        best_(std::move(incumbent)),
        best_cost_(incumbent_cost),
        place_(static_cast<std::size_t>(cost.slot_count()), -1),
        used_(static_cast<std::size_t>(cost.device_count()), false),
        twin_(twin_classes(cost)) {}

  bool run() {
    visit(0);
    return !stopped_;
  }
  const std::vector<int>& best() const { return best_; }
  double best_cost() const { return best_cost_; }
  long long nodes() const { return nodes_; }

 private:
  void visit(int slot) {
    if (stopped_) return;
    if (slot == cost_.slot_count()) {
      const double c = cost_.cost(place_);
      if (c < best_cost_ * (1 - 1e-12)) {
        best_cost_ = c;
        best_ = place_;
      }
      return;
    }
    std::vector<int> tried;  // twin classes tried at this slot
    for (int device = 0; device < cost_.device_count(); ++device) {
      if (used_[static_cast<std::size_t>(device)]) continue;
      const int cls = twin_[static_cast<std::size_t>(device)];
      if (std::find(tried.begin(), tried.end(), cls) != tried.end()) continue;
      tried.push_back(cls);
      if (++nodes_ > limit_) {
        stopped_ = true;
        return;
      }
      place_[static_cast<std::size_t>(slot)] = device;
      used_[static_cast<std::size_t>(device)] = true;
      if (cost_.cost(place_) < best_cost_ * (1 - 1e-12)) visit(slot + 1);
      used_[static_cast<std::size_t>(device)] = false;
      place_[static_cast<std::size_t>(slot)] = -1;
      if (stopped_) return;
    }
  }

  const PlacementCostModel& cost_;
  long long limit_, nodes_ = 0;
  bool stopped_ = false;
  std::vector<int> best_;
  double best_cost_;
  std::vector<int> place_;
  std::vector<bool> used_;
  std::vector<int> twin_;
};

}  // namespace

PlacementResult place(const PlacementCostModel& cost, const PlacementOptions& options) {
  PlacementResult r;
  std::vector<int> current = cost.rank_order();
  auto current_score = placement_score(cost, current);
  r.rank_order_cost_s = current_score.first;
  r.evaluations = 1;
  // Local search: move a slot to a device (swapping with the slot there, if any).
  const int slots = cost.slot_count(), devices = cost.device_count();
  std::vector<int> holder(static_cast<std::size_t>(devices), -1);
  for (int s = 0; s < slots; ++s) holder[static_cast<std::size_t>(current[s])] = s;
  bool improved = true;
  while (improved && r.evaluations < options.evaluation_limit) {
    improved = false;
    for (int s = 0; s < slots && r.evaluations < options.evaluation_limit; ++s)
      for (int d = 0; d < devices && r.evaluations < options.evaluation_limit; ++d) {
        const int here = current[static_cast<std::size_t>(s)];
        const int other = holder[static_cast<std::size_t>(d)];
        if (d == here || (other >= 0 && other < s)) continue;  // each swap once per sweep
        current[static_cast<std::size_t>(s)] = d;
        if (other >= 0) current[static_cast<std::size_t>(other)] = here;
        const auto candidate = placement_score(cost, current);
        ++r.evaluations;
        if (better(candidate, current_score)) {
          current_score = candidate;
          holder[static_cast<std::size_t>(d)] = s;
          holder[static_cast<std::size_t>(here)] = other;
          improved = true;
        } else {
          current[static_cast<std::size_t>(s)] = here;
          if (other >= 0) current[static_cast<std::size_t>(other)] = d;
        }
      }
  }
  r.device_of_slot = current;
  r.cost_s = current_score.first;
  if (options.node_limit > 0) {
    BranchAndBound bb(cost, options.node_limit, current, r.cost_s);
    r.exact = bb.run();
    r.nodes = bb.nodes();
    r.device_of_slot = bb.best();
    r.cost_s = bb.best_cost();
  }
  r.lower_bound_s = r.exact ? r.cost_s : std::min(r.cost_s, cost.lower_bound());
  return r;
}

PlacementResult place_brute_force(const PlacementCostModel& cost) {
  PlacementResult r;
  r.rank_order_cost_s = cost.cost(cost.rank_order());
  r.cost_s = r.rank_order_cost_s;
  r.device_of_slot = cost.rank_order();
  std::vector<int> place(static_cast<std::size_t>(cost.slot_count()), -1);
  std::vector<bool> used(static_cast<std::size_t>(cost.device_count()), false);
  const auto visit = [&](auto&& self, int slot) -> void {
    if (slot == cost.slot_count()) {
      ++r.evaluations;
      const double c = cost.cost(place);
      if (c < r.cost_s) {
        r.cost_s = c;
        r.device_of_slot = place;
      }
      return;
    }
    for (int d = 0; d < cost.device_count(); ++d) {
      if (used[static_cast<std::size_t>(d)]) continue;
      used[static_cast<std::size_t>(d)] = true;
      place[static_cast<std::size_t>(slot)] = d;
      self(self, slot + 1);
      used[static_cast<std::size_t>(d)] = false;
    }
  };
  visit(visit, 0);
  r.exact = true;
  r.lower_bound_s = r.cost_s;
  return r;
}

}  // namespace paraplan
