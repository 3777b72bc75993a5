// Cluster helpers.
#include "ir/cluster.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace paraplan {

int Cluster::device_count() const {
  return std::accumulate(machine_sizes.begin(), machine_sizes.end(), 0);
}

std::vector<int> Cluster::machine_ends() const {
  std::vector<int> ends;
  int end = 0;
  for (int size : machine_sizes) ends.push_back(end += size);
  return ends;
}

double Cluster::min_device_memory_bytes() const {
  double m = std::numeric_limits<double>::infinity();
  for (int t : machine_device_type) m = std::min(m, device_types.at(t).memory_bytes);
  return machine_device_type.empty() ? 0 : m;
}

double Cluster::flat_bandwidth_bytes_per_s() const {
  return tiers.empty() ? 0 : tiers.back().bandwidth_bytes_per_s;
}

Cluster Cluster::flat(int count, double memory_bytes, double bandwidth_bytes_per_s) {
  Cluster c;
  c.name = "flat";
  c.device_types.push_back({"device", memory_bytes, 0});
  c.machine_sizes = {count};
  c.machine_device_type = {0};
  c.tiers.push_back({"network", bandwidth_bytes_per_s, 0});
  return c;
}

}  // namespace paraplan
