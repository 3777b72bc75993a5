// Cluster helpers.
#include "ir/cluster.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace paraplan {

int Cluster::device_count() const {
  return std::accumulate(machine_sizes.begin(), machine_sizes.end(), 0);
}

std::vector<int> Cluster::machine_ends() const { return paraplan::machine_ends(machine_sizes); }

std::vector<int> machine_ends(const std::vector<int>& sizes) {
  std::vector<int> ends;
  int end = 0;
  for (int size : sizes) ends.push_back(end += size);
  return ends;
}

std::optional<std::vector<int>> parse_machine_sizes(const std::string& text) {
  auto number = [](const std::string& part) -> int {
    if (part.empty() || part.size() > 6 ||
        part.find_first_not_of("0123456789") != std::string::npos)
      return 0;
    return std::stoi(part);
  };
  std::vector<int> sizes;
  auto x = text.find('x');
  if (x != std::string::npos) {
    int machines = number(text.substr(0, x)), per = number(text.substr(x + 1));
    if (machines < 1 || per < 1 || static_cast<long long>(machines) * per > 65536)
      return std::nullopt;
    sizes.assign(machines, per);
  } else {
    std::size_t start = 0;
    long long total = 0;
    while (true) {
      auto comma = text.find(',', start);
      int size = number(text.substr(start, comma == std::string::npos ? comma : comma - start));
      if (size < 1 || (total += size) > 65536) return std::nullopt;
      sizes.push_back(size);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return sizes;
}

double Cluster::min_device_memory_bytes() const {
  double m = std::numeric_limits<double>::infinity();
  for (int t : machine_device_type) m = std::min(m, device_types.at(t).memory_bytes);
  return machine_device_type.empty() ? 0 : m;
}

double Cluster::flat_bandwidth_bytes_per_s() const {
  return tiers.empty() ? 0 : tiers.back().bandwidth_bytes_per_s;
}

double Cluster::flat_allreduce_bandwidth_bytes_per_s() const {
  return tiers.empty() ? 0 : tiers.back().allreduce_bandwidth_bytes_per_s;
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
