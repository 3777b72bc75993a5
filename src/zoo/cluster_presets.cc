// Vendor figures: dense BF16 peak, HBM capacity, NVLink per-direction bandwidth per GPU, and one
// InfiniBand NIC per GPU (HDR 200 Gb/s on DGX A100, NDR 400 Gb/s on DGX H100/H200).
#include "zoo/cluster_presets.h"

namespace paraplan::zoo {
namespace {

constexpr double kGiB = 1073741824.0;

Cluster node_cluster(const std::string& name, const std::string& gpu, double memory_bytes,
                     double peak_flops, double nvlink_bytes_per_s, double nic_bytes_per_s,
                     int devices) {
  Cluster c;
  c.name = name;
  c.device_types = {{gpu, memory_bytes, peak_flops}};
  for (int left = devices; left > 0; left -= 8) c.machine_sizes.push_back(left >= 8 ? 8 : left);
  c.machine_device_type.assign(c.machine_sizes.size(), 0);
  c.tiers = {{"NVLink", nvlink_bytes_per_s, 0}, {"InfiniBand", nic_bytes_per_s, 0}};
  return c;
}

}  // namespace

const std::vector<std::string>& cluster_preset_names() {
  static const std::vector<std::string> names = {"dgx-a100", "dgx-h100", "h200", "vtrain-a100"};
  return names;
}

std::optional<Cluster> cluster_preset(const std::string& name, int devices) {
  if (devices < 1) return std::nullopt;
  if (name == "dgx-a100")
    return node_cluster(name, "A100", 80 * kGiB, 312e12, 300e9, 25e9, devices);
  if (name == "dgx-h100")
    return node_cluster(name, "H100", 80 * kGiB, 989e12, 450e9, 50e9, devices);
  if (name == "h200") return node_cluster(name, "H200", 141e9, 989e12, 450e9, 50e9, devices);
  if (name == "vtrain-a100")  // 800 Gb/s per node shared by 8 GPUs
    return node_cluster(name, "A100", 40 * kGiB, 312e12, 300e9, 12.5e9, devices);
  return std::nullopt;
}

}  // namespace paraplan::zoo
