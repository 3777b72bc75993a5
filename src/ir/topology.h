// The network between a cluster's devices as a graph: devices and switches (NVSwitch, PCIe
// switch, CPU socket, NIC, leaf or spine: anything that forwards) joined by full-duplex links,
// each with a bandwidth per direction and a latency. Every device pair has one route (single-path
// routing: parallel equal links are one link of their summed bandwidth), which cost models and
// the simulator price transfers on, sharing a link direction between the transfers that cross it.
#pragma once

#include <string>
#include <vector>

#include "ir/cluster.h"

namespace paraplan {

class Topology {
 public:
  struct Node {
    std::string name;
    int device = -1;  ///< device id, or -1 for a switch
  };
  struct Edge {
    int a = 0, b = 0;  ///< node indices
    double bandwidth_bytes_per_s = 0;
    double latency_s = 0;
  };

  /// Devices are nodes 0 .. devices − 1; `switch_names` follow. Error(kInput) naming `source`'s
  /// /links when a link joins a node to itself or repeats a pair, and when a device cannot reach
  /// another.
  Topology(int devices, std::vector<std::string> switch_names, std::vector<Edge> edges,
           const std::string& source = "cluster");

  int device_count() const { return devices_; }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Edge>& edges() const { return edges_; }
  /// Directed channels: edge e from a to b is 2e, from b to a is 2e + 1.
  int channel_count() const { return 2 * static_cast<int>(edges_.size()); }
  double channel_bandwidth(int channel) const { return edges_[channel / 2].bandwidth_bytes_per_s; }
  std::string channel_name(int channel) const;

  /// The channels from device `from` to device `to` in order (empty when equal), through
  /// switches only (devices do not forward). The widest route (largest bottleneck bandwidth), then
  /// the fewest hops, then the smallest latency, then the smallest node indices.
  std::vector<int> route(int from, int to) const;
  /// Calls f(channel) for each channel of the route, last first (no allocation).
  template <class F>
  void for_each_channel(int from, int to, F&& f) const {
    if (from == to) return;
    const std::vector<int>& arrive =
        arrive_[static_cast<std::size_t>(from) * widths_.size() +
                static_cast<std::size_t>(level_[static_cast<std::size_t>(from) * devices_ + to])];
    for (int node = to; node != from;) {
      const int c = arrive[static_cast<std::size_t>(node)];
      f(c);
      node = c % 2 == 0 ? edges_[static_cast<std::size_t>(c / 2)].a
                        : edges_[static_cast<std::size_t>(c / 2)].b;
    }
  }
  double route_latency_s(int from, int to) const;
  double route_bandwidth_bytes_per_s(int from, int to) const;  ///< its bottleneck
  /// The largest bandwidth of any link (the best any transfer can get).
  double max_bandwidth_bytes_per_s() const { return max_bandwidth_; }

 private:
  int devices_;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  double max_bandwidth_ = 0;
  std::vector<double> widths_;  ///< distinct link bandwidths, widest first
  /// Per (source device, width level), per node: the channel its route arrives by.
  std::vector<std::vector<int>> arrive_;
  /// Per (source, target device): the width level its route comes from.
  std::vector<int> level_;
};

/// The cluster's network: its explicit switches and links when it has links, else its tiers as
/// a graph — a switch per machine joined to each of its devices at tier 0's bandwidth and, with
/// a second tier, one network switch joined to every device at the outermost tier's bandwidth
/// (one NIC per device); a tier's latency is split over the route's two hops.
Topology cluster_topology(const Cluster& cluster, const std::string& source = "cluster");

/// Tiers derived from a topology for the flat cost models: tier 0 the narrowest route inside a
/// machine, tier 1 the narrowest between machines (each with the largest latency).
std::vector<LinkTier> tiers_of(const Cluster& cluster, const Topology& topology);

}  // namespace paraplan
