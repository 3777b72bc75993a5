// Vendor figures: dense BF16 peak, HBM capacity, NVLink per-direction bandwidth per GPU, and one
// InfiniBand NIC per GPU (HDR 200 Gb/s on DGX A100, NDR 400 Gb/s on DGX H100/H200).
#include "zoo/cluster_presets.h"

#include <algorithm>
#include <functional>

namespace paraplan::zoo {
namespace {

constexpr double kGiB = 1073741824.0;
constexpr double kMiB = 1048576.0;
// What the driver gives CUDA, as nvidia-smi reports it: the A100 80GB's 81920 MiB are 80 GiB;
// the H100 80GB HBM3 (SXM) shows 81559 MiB (79.65 GiB, read on a DGX-class H100 on 2026-11-13);
// the H200 143771 MiB (140.4 GiB). The 80 and 141 of the names are marketing figures.
constexpr double kH100Bytes = 81559 * kMiB;
constexpr double kH200Bytes = 143771 * kMiB;
// Blackwell: the B200's 192 GB of HBM3e show as 183359 MiB (179.06 GiB, sold as "180GB");
// GB200's as NVIDIA's datasheet gives them, 186 GB (decimal: no reading of one at hand).
constexpr double kB200Bytes = 183359 * kMiB;
constexpr double kGB200Bytes = 186e9;

Cluster node_cluster(const std::string& name, const std::string& gpu, double memory_bytes,
                     double peak_flops, double nvlink_bytes_per_s, double nic_bytes_per_s,
                     int devices, int per_node = 8) {
  Cluster c;
  c.name = name;
  c.device_types = {{gpu, memory_bytes, peak_flops}};
  for (int left = devices; left > 0; left -= per_node)
    c.machine_sizes.push_back(left >= per_node ? per_node : left);
  c.machine_device_type.assign(c.machine_sizes.size(), 0);
  c.tiers = {{"NVLink", nvlink_bytes_per_s, 0}, {"InfiniBand", nic_bytes_per_s, 0}};
  return c;
}

// The networks as graphs (Cluster::switches, links). Latencies: 0.5 µs per NVSwitch or PCIe
// hop, 1 µs per InfiniBand hop.
struct Gpu {
  std::string name;
  double memory_bytes, peak_flops, nvlink_bytes_per_s, nic_bytes_per_s;
};
const Gpu kA100{"A100", 80 * kGiB, 312e12, 300e9, 25e9};
const Gpu kH100{"H100", kH100Bytes, 989e12, 450e9, 50e9};

int add_switch(Cluster& c, const std::string& name) {
  c.switches.push_back(name);
  return c.device_count() + static_cast<int>(c.switches.size()) - 1;
}

// Nodes of 8 GPUs (a last, partial node if 8 does not divide), GPU k of node m of type
// gpus[m]: an NVSwitch per node; NIC k of every node on leaf `leaf_of(m, k)`; each leaf joined
// to one spine by a trunk of its NICs' bandwidth ÷ oversubscription (a single-path route, so the
// spine switches are one node and a leaf's uplinks one trunk).
Cluster fabric(const std::string& name, const std::vector<Gpu>& types, std::vector<int> type_of,
               int devices, int leaves, const std::function<int(int, int)>& leaf_of,
               double oversubscription) {
  Cluster c;
  c.name = name;
  for (const Gpu& g : types) c.device_types.push_back({g.name, g.memory_bytes, g.peak_flops});
  for (int left = devices; left > 0; left -= 8) c.machine_sizes.push_back(left >= 8 ? 8 : left);
  type_of.resize(c.machine_sizes.size(), type_of.empty() ? 0 : type_of.back());
  c.machine_device_type = type_of;
  double nvlink = 1e300, nic = 1e300;
  for (int t : type_of) {
    nvlink = std::min(nvlink, types[t].nvlink_bytes_per_s);
    nic = std::min(nic, types[t].nic_bytes_per_s);
  }
  c.tiers = {{"NVLink", nvlink, 1e-6}, {"InfiniBand", nic, 4e-6}};
  const auto ends = c.machine_ends();
  std::vector<int> leaf_node(static_cast<std::size_t>(leaves), -1);
  std::vector<double> leaf_down(static_cast<std::size_t>(leaves), 0);
  const bool network = c.machine_count() > 1;
  for (int m = 0; m < c.machine_count(); ++m) {
    const Gpu& g = types[static_cast<std::size_t>(type_of[m])];
    const int first = ends[m] - c.machine_sizes[m];
    if (c.machine_sizes[m] > 1) {
      const int nvswitch = add_switch(c, "node " + std::to_string(m) + " NVSwitch");
      for (int d = first; d < ends[m]; ++d)
        c.links.push_back({d, nvswitch, g.nvlink_bytes_per_s, 0.5e-6});
    }
    if (!network) continue;
    for (int d = first; d < ends[m]; ++d) {
      const int leaf = leaf_of(m, d - first);
      if (leaf_node[leaf] < 0) leaf_node[leaf] = add_switch(c, "leaf " + std::to_string(leaf));
      c.links.push_back({d, leaf_node[leaf], g.nic_bytes_per_s, 1e-6});
      leaf_down[leaf] += g.nic_bytes_per_s;
    }
  }
  if (network) {
    const int spine = add_switch(c, "spine");
    for (int leaf = 0; leaf < leaves; ++leaf)
      if (leaf_node[leaf] >= 0)
        c.links.push_back({leaf_node[leaf], spine, leaf_down[leaf] / oversubscription, 1e-6});
  }
  return c;
}

// One server of 8 PCIe GPUs: two CPU sockets joined by UPI, each with two PCIe switches of two
// GPUs; the switch-to-socket link (x16) is shared by its two GPUs.
Cluster pcie_server(int devices) {
  Cluster c;
  c.name = "pcie-2socket";
  c.device_types = {
      {"A100", 80 * kGiB, 312e12}};  // PCIe cards: the SXM part's peak, its calibration
  c.machine_sizes = {devices};
  c.machine_device_type = {0};
  const double pcie = 25e9, upi = 12e9;  // x16 Gen4 per direction; GPU peer traffic over UPI
  c.tiers = {{"PCIe", upi, 2.5e-6}};
  const int socket0 = add_switch(c, "socket 0"), socket1 = add_switch(c, "socket 1");
  c.links.push_back({socket0, socket1, upi, 1e-6});
  for (int sw = 0; sw * 2 < devices; ++sw) {
    const int node = add_switch(c, "PCIe switch " + std::to_string(sw));
    c.links.push_back({node, sw < 2 ? socket0 : socket1, pcie, 0.5e-6});
    for (int d = 2 * sw; d < std::min(devices, 2 * sw + 2); ++d)
      c.links.push_back({d, node, pcie, 0.5e-6});
  }
  return c;
}

}  // namespace

const std::vector<std::string>& cluster_preset_names() {
  static const std::vector<std::string> names = {
      "dgx-a100",        "dgx-h100",       "h200",         "vtrain-a100",
      "dgx-a100-rails",  "dgx-h100-rails", "pcie-2socket", "oversubscribed-2to1",
      "mixed-a100-h100", "dgx-b200",       "gb200-nvl72"};
  return names;
}

std::optional<Cluster> cluster_preset(const std::string& name, int devices) {
  if (devices < 1) return std::nullopt;
  if (name == "dgx-a100")
    return node_cluster(name, "A100", 80 * kGiB, 312e12, 300e9, 25e9, devices);
  if (name == "dgx-h100")
    return node_cluster(name, "H100", kH100Bytes, 989e12, 450e9, 50e9, devices);
  if (name == "h200") return node_cluster(name, "H200", kH200Bytes, 989e12, 450e9, 50e9, devices);
  // DGX B200 (HGX B200 datasheet): 2.25 PFLOP/s dense BF16 (4.5 with sparsity), NVLink 5 at 1.8
  // TB/s per GPU (900 GB/s each way), a 400 Gb/s ConnectX-7 per GPU. GB200 NVL72: 2.5 PFLOP/s
  // dense BF16, one NVLink domain of 72 GPUs (a "node" here), 400 Gb/s per GPU between racks.
  if (name == "dgx-b200")
    return node_cluster(name, "B200", kB200Bytes, 2.25e15, 900e9, 50e9, devices);
  if (name == "gb200-nvl72")
    return node_cluster(name, "GB200", kGB200Bytes, 2.5e15, 900e9, 50e9, devices, 72);
  if (name == "vtrain-a100")  // 800 Gb/s per node shared by 8 GPUs
    return node_cluster(name, "A100", 40 * kGiB, 312e12, 300e9, 12.5e9, devices);
  const auto rail = [](int, int k) { return k; };
  if (name == "dgx-a100-rails") return fabric(name, {kA100}, {}, devices, 8, rail, 1);
  if (name == "dgx-h100-rails") return fabric(name, {kH100}, {}, devices, 8, rail, 1);
  if (name == "pcie-2socket") {
    if (devices > 8) return std::nullopt;
    return pcie_server(devices);
  }
  if (name == "oversubscribed-2to1")  // two DGX A100 nodes per leaf, half their NICs up
    return fabric(
        name, {kA100}, {}, devices, (devices + 15) / 16, [](int m, int) { return m / 2; }, 2);
  if (name == "mixed-a100-h100") {  // the first half of the nodes A100, the rest H100; rails
    const int nodes = (devices + 7) / 8;
    std::vector<int> type_of(static_cast<std::size_t>(nodes), 1);
    for (int m = 0; m < (nodes + 1) / 2; ++m) type_of[m] = 0;
    return fabric(name, {kA100, kH100}, type_of, devices, 8, rail, 1);
  }
  return std::nullopt;
}

}  // namespace paraplan::zoo
