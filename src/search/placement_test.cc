#include "search/placement.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "ir/topology.h"
#include "zoo/cluster_presets.h"

namespace paraplan {
namespace {

// A chain of `stages` layers, one per stage, and a plan with the given (d, t) per stage.
struct PlacementCase {
  Model model;
  Plan plan;
};

PlacementCase chain(const std::vector<std::pair<int, int>>& shapes,
                    const std::vector<double>& edge_bytes, const std::vector<double>& weight_bytes,
                    const std::vector<double>& compute_s) {
  PlacementCase c;
  const int n = static_cast<int>(shapes.size());
  for (int i = 0; i < n; ++i) {
    Layer layer;
    layer.id = i;
    LayerOption o;
    o.id = "o";
    o.compute_time_s = compute_s[i];
    o.parameter_bytes = weight_bytes[i];
    layer.by_degree.push_back({shapes[i].second, {o}});
    c.model.layers.push_back(layer);
    if (i > 0) c.model.edges.push_back({i - 1, i, edge_bytes[i - 1]});
    Stage st;
    st.layers = {i};
    st.option_index = {0};
    st.data_parallel = shapes[i].first;
    st.tensor_parallel = shapes[i].second;
    st.compute_time = compute_s[i] / shapes[i].first;
    c.plan.stages.push_back(st);
  }
  c.model.index();
  return c;
}

TEST(Placement, PcieServerKeepsHeavyTrafficOnOnePcieSwitch) {
  // Two stages of 4 replicas, a heavy all-reduce: rank order puts each stage on one socket;
  // replicas on a PCIe switch share its uplink. Whatever the best is, it is no worse than rank
  // order, exact, and equals the brute force.
  const Cluster c = *zoo::cluster_preset("pcie-2socket", 8);
  const Topology t = cluster_topology(c);
  PlacementCase k = chain({{2, 1}, {2, 1}, {2, 1}, {2, 1}}, {4e6, 4e6, 4e6}, {1e9, 1e9, 1e9, 1e9},
                          {0.1, 0.1, 0.1, 0.1});
  PlacementCostModel cost(k.model, k.plan, t, 8);
  const PlacementResult placed = place(cost);
  EXPECT_TRUE(placed.exact);
  EXPECT_LE(placed.cost_s, placed.rank_order_cost_s);
  const PlacementResult brute = place_brute_force(cost);
  EXPECT_NEAR(placed.cost_s, brute.cost_s, 1e-12 * brute.cost_s);
  // Each stage's two replicas on one PCIe switch: their ring never crosses a socket.
  for (int s = 0; s < 4; ++s) {
    const int a = placed.device_of_slot[2 * s], b = placed.device_of_slot[2 * s + 1];
    EXPECT_EQ(a / 2, b / 2) << "stage " << s;
  }
}

TEST(Placement, ApplyWritesDeviceIdsReplicaMajor) {
  const Topology t = cluster_topology(Cluster::flat(8, 1e9, 1e9));
  PlacementCase k = chain({{2, 2}, {1, 2}}, {1e6}, {1e6, 1e6}, {1, 1});
  PlacementCostModel cost(k.model, k.plan, t, 2);
  ASSERT_EQ(cost.slot_count(), 6);
  std::vector<int> place = {7, 6, 5, 4, 3, 2};
  cost.apply(place, k.plan);
  EXPECT_EQ(k.plan.stages[0].device_ids, (std::vector<int>{7, 6, 5, 4}));
  EXPECT_EQ(k.plan.stages[1].device_ids, (std::vector<int>{3, 2}));
}

// Random networks of up to 8 devices and 3 switches, random chains: the placer's optimum is the
// brute force's whenever branch and bound finishes (it always does at this size).
RC_GTEST_PROP(PlacementTwin, EqualsBruteForceOnRandomSmallNetworks, ()) {
  const int devices = *rc::gen::inRange(3, 9);
  const int switches = *rc::gen::inRange(1, 4);
  std::vector<std::string> names;
  for (int s = 0; s < switches; ++s) names.push_back("s" + std::to_string(s));
  std::vector<Topology::Edge> edges;
  std::set<std::pair<int, int>> pairs;
  const auto link = [&](int a, int b) {
    if (a == b || !pairs.insert(std::minmax(a, b)).second) return;
    edges.push_back({a, b, 1e9 * *rc::gen::inRange(1, 5), 1e-6 * *rc::gen::inRange(0, 3)});
  };
  // A connected backbone: every device on a random switch, switches in a chain; then extras.
  for (int s = 1; s < switches; ++s) link(devices + s - 1, devices + s);
  for (int d = 0; d < devices; ++d) link(d, devices + *rc::gen::inRange(0, switches));
  const int extra = *rc::gen::inRange(0, 4);
  for (int e = 0; e < extra; ++e)
    link(*rc::gen::inRange(0, devices + switches), *rc::gen::inRange(0, devices + switches));
  const Topology t(devices, names, edges);
  std::vector<std::pair<int, int>> shapes;
  int used = 0;
  const int stages = *rc::gen::inRange(1, 5);
  for (int s = 0; s < stages && used < devices; ++s) {
    const int left = devices - used;
    const int t_ = left >= 2 ? *rc::gen::inRange(1, 3) : 1;
    const int d = *rc::gen::inRange(1, left / t_ + 1);
    shapes.push_back({d, t_});
    used += t_ * d;
  }
  RC_PRE(!shapes.empty());
  std::vector<double> edge_bytes, weights, compute;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    edge_bytes.push_back(1e6 * *rc::gen::inRange(1, 100));
    weights.push_back(1e6 * *rc::gen::inRange(0, 100));
    compute.push_back(1e-3 * *rc::gen::inRange(1, 10));
  }
  PlacementCase k = chain(shapes, edge_bytes, weights, compute);
  const int microbatches = 4;
  // Machines: contiguous blocks of devices (tensor-parallel groups must stay inside one).
  std::vector<int> machine_of_device;
  const int per_machine = *rc::gen::inRange(2, devices + 1);
  for (int d = 0; d < devices; ++d) machine_of_device.push_back(d / per_machine);
  PlacementCostModel cost(k.model, k.plan, t, microbatches, machine_of_device);
  const PlacementResult placed = place(cost);
  const PlacementResult brute = place_brute_force(cost);
  RC_TAG(cost.slot_count(), placed.cost_s < placed.rank_order_cost_s * (1 - 1e-9));
  RC_LOG() << "devices " << devices << " slots " << cost.slot_count() << " placed " << placed.cost_s
           << " brute " << brute.cost_s << "\n";
  RC_ASSERT(placed.exact);
  RC_ASSERT(placed.cost_s == brute.cost_s ||
            std::fabs(placed.cost_s - brute.cost_s) <= 1e-12 * brute.cost_s);
  RC_ASSERT(placed.cost_s <= placed.rank_order_cost_s);
  RC_ASSERT(cost.cost(placed.device_of_slot) == placed.cost_s);
  // Every tensor-parallel group on one machine, whenever some placement allows it.
  if (std::isfinite(brute.cost_s))
    for (int i = 0; i < cost.slot_count(); ++i) {
      const auto& slot = cost.slots()[static_cast<std::size_t>(i)];
      const int head = i - slot.rank;
      RC_ASSERT(machine_of_device[placed.device_of_slot[i]] ==
                machine_of_device[placed.device_of_slot[head]]);
    }
  RC_ASSERT(cost.lower_bound() <= brute.cost_s * (1 + 1e-12));
}

}  // namespace
}  // namespace paraplan
