#include "ir/topology.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "zoo/cluster_presets.h"

namespace paraplan {
namespace {

TEST(Topology, TiersBecomeMachineSwitchesAndOneNicPerDevice) {
  Cluster c = Cluster::flat(4, 1e9, 10e9);
  c.machine_sizes = {2, 2};
  c.machine_device_type = {0, 0};
  c.tiers = {{"fast", 100e9, 2e-6}, {"slow", 10e9, 6e-6}};
  const Topology t = cluster_topology(c);
  EXPECT_EQ(t.device_count(), 4);
  EXPECT_EQ(t.node_count(), 4 + 3);  // two machine switches and the network
  EXPECT_EQ(t.route(0, 1).size(), 2u);
  EXPECT_DOUBLE_EQ(t.route_bandwidth_bytes_per_s(0, 1), 100e9);
  EXPECT_DOUBLE_EQ(t.route_latency_s(0, 1), 2e-6);
  EXPECT_DOUBLE_EQ(t.route_bandwidth_bytes_per_s(1, 2), 10e9);
  EXPECT_DOUBLE_EQ(t.route_latency_s(1, 2), 6e-6);
  // Directions of one link are separate channels; a route and its reverse use opposite ones.
  const auto there = t.route(0, 3), back = t.route(3, 0);
  ASSERT_EQ(there.size(), back.size());
  EXPECT_EQ(there.front() ^ 1, back.back());
  const auto tiers = tiers_of(c, t);
  ASSERT_EQ(tiers.size(), 2u);
  EXPECT_DOUBLE_EQ(tiers[0].bandwidth_bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(tiers[1].bandwidth_bytes_per_s, 10e9);
}

TEST(Topology, RoutesAreWidestThenShortestAndNeverThroughADevice) {
  // 0 - 1 directly at 1 GB/s; 0 - s - 1 at 5 GB/s; device 2 hangs off device 1 only.
  Topology t(3, {"s"},
             {{0, 1, 1e9, 0}, {0, 3, 5e9, 0}, {3, 1, 5e9, 0}, {1, 2, 9e9, 0}, {3, 2, 2e9, 0}});
  EXPECT_EQ(t.route(0, 1).size(), 2u);  // wider through the switch
  EXPECT_DOUBLE_EQ(t.route_bandwidth_bytes_per_s(0, 1), 5e9);
  // 0 → 2: through device 1 would be 5 GB/s, but devices do not forward: the switch's 2 GB/s.
  EXPECT_DOUBLE_EQ(t.route_bandwidth_bytes_per_s(0, 2), 2e9);
}

TEST(Topology, RefusesUnreachableDevicesSelfLinksAndRepeatedPairs) {
  const auto message = [](auto&& build) {
    try {
      build();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] {
              Topology(3, {}, {{0, 1, 1e9, 0}}, "c.json");
            }).find("c.json: /links: device 2 cannot reach device 0"),
            std::string::npos);
  EXPECT_NE(message([] {
              Topology(2, {}, {{0, 1, 1e9, 0}, {1, 1, 1e9, 0}}, "c.json");
            }).find("c.json: /links/1: joins device 1 to itself"),
            std::string::npos);
  EXPECT_NE(message([] {
              Topology(2, {}, {{0, 1, 1e9, 0}, {1, 0, 2e9, 0}}, "c.json");
            }).find("/links/1: a second link between device 1 and device 0"),
            std::string::npos);
}

TEST(Topology, OneDeviceNeedsNoLinks) {
  // A preset cut to one device has no links left; the device still reaches itself.
  const Topology alone(1, {}, {}, "c.json");
  EXPECT_TRUE(alone.route(0, 0).empty());
  for (const char* preset : {"dgx-a100", "dgx-h100", "pcie-2socket"})
    EXPECT_NO_THROW(cluster_topology(*zoo::cluster_preset(preset, 1))) << preset;
}

TEST(Topology, PresetsDescribeTheirNetworks) {
  // PCIe server: peers on one PCIe switch, on one socket, across sockets.
  const Cluster pcie = *zoo::cluster_preset("pcie-2socket", 8);
  const Topology p = cluster_topology(pcie);
  EXPECT_EQ(p.route(0, 1).size(), 2u);
  EXPECT_EQ(p.route(0, 2).size(), 4u);
  EXPECT_EQ(p.route(0, 7).size(), 5u);
  EXPECT_DOUBLE_EQ(p.route_bandwidth_bytes_per_s(0, 7), 12e9);
  EXPECT_FALSE(zoo::cluster_preset("pcie-2socket", 9));
  // Rails: GPU k of one node reaches GPU k of another through leaf k only; other GPUs through
  // the spine.
  const Topology r = cluster_topology(*zoo::cluster_preset("dgx-a100-rails", 32));
  EXPECT_EQ(r.route(3, 8 + 3).size(), 2u);
  EXPECT_EQ(r.route(3, 8 + 4).size(), 4u);
  EXPECT_DOUBLE_EQ(r.route_bandwidth_bytes_per_s(3, 8 + 4), 25e9);
  // Oversubscribed: nodes 0 and 1 share a leaf, node 2 is behind the spine.
  const Cluster over = *zoo::cluster_preset("oversubscribed-2to1", 32);
  const Topology o = cluster_topology(over);
  EXPECT_EQ(o.route(0, 8).size(), 2u);
  EXPECT_EQ(o.route(0, 16).size(), 4u);
  // Mixed: two device types, A100 nodes first.
  const Cluster mixed = *zoo::cluster_preset("mixed-a100-h100", 16);
  ASSERT_EQ(mixed.device_types.size(), 2u);
  EXPECT_EQ(mixed.machine_device_type, (std::vector<int>{0, 1}));
  EXPECT_NO_THROW(cluster_topology(mixed));
}

}  // namespace
}  // namespace paraplan
