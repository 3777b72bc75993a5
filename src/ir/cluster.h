// The cluster vocabulary: device types, machines, and tiers of links between devices.
// Cost models read what they need; a planner never hard-codes a bandwidth.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace paraplan {

/// A kind of accelerator.
struct DeviceType {
  std::string name = "device";
  double memory_bytes = 0;
  double peak_flops_per_s = 0;  ///< 0 when unknown (measured-cost models do not need it)
  /// A paraplan-calibration file for the analytic model (empty: the shipped one for `name`).
  std::string calibration_file = {};
  /// Memory the user keeps free (--memory-headroom): plans must fit in memory_bytes − this.
  double memory_headroom_bytes = 0;
  /// What a plan may use: the memory less the headroom.
  double memory_limit_bytes() const { return memory_bytes - memory_headroom_bytes; }
};

/// One level of the link hierarchy. Tier 0 connects devices inside a machine, tier 1 machines.
struct LinkTier {
  std::string name;
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
  /// What an all-reduce across this tier achieves, as the bandwidth that prices it in the cost
  /// models' formulas (measured by a probe; 0: bandwidth_bytes_per_s).
  double allreduce_bandwidth_bytes_per_s = 0;
};

/// A link of the cluster's network (ir/topology.h): between nodes, which are the devices
/// (0 .. devices − 1) and then the cluster's switches.
struct Link {
  int from = 0;
  int to = 0;
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

/// Devices grouped into machines, with link tiers (and optionally explicit links).
struct Cluster {
  std::string name;
  std::vector<DeviceType> device_types;
  /// Devices per machine, in machine order; device ids are numbered machine by machine.
  std::vector<int> machine_sizes;
  /// Device type of each machine (index into device_types); all machines hold one type.
  std::vector<int> machine_device_type;
  std::vector<LinkTier> tiers;  ///< innermost first
  /// The network as a graph (optional; empty links: the tiers describe it): switches, NICs,
  /// sockets (nodes after the devices) and the links between any nodes.
  std::vector<std::string> switches;
  std::vector<Link> links;

  int device_count() const;
  int machine_count() const { return static_cast<int>(machine_sizes.size()); }
  /// Exclusive end id of each machine (DAPPLE's "seps").
  std::vector<int> machine_ends() const;
  /// Memory of the smallest device.
  double min_device_memory_bytes() const;
  /// Bandwidth of the outermost tier (the one a flat model uses).
  double flat_bandwidth_bytes_per_s() const;
  /// The outermost tier's all-reduce bandwidth (0: none measured; use the bandwidth).
  double flat_allreduce_bandwidth_bytes_per_s() const;

  /// A cluster of `count` identical devices on one flat network.
  static Cluster flat(int count, double memory_bytes, double bandwidth_bytes_per_s);
};

/// Parses a machine layout as users write it: "2x8" (machines x devices per machine) or "4,8,4"
/// (devices per machine). nullopt if malformed, a count is below 1, or more than 65536 devices.
std::optional<std::vector<int>> parse_machine_sizes(const std::string& text);
/// Exclusive end id of each machine for the given sizes ({8, 8} -> {8, 16}).
std::vector<int> machine_ends(const std::vector<int>& sizes);

}  // namespace paraplan
