// Cluster presets: DGX A100 (80 GB), DGX H100, H200 nodes of 8 GPUs with NVLink/NVSwitch inside
// a node and one InfiniBand NIC per GPU between nodes; and the A100 cluster of the vTrain
// measurements (data/vtrain).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/cluster.h"

namespace paraplan::zoo {

const std::vector<std::string>& cluster_preset_names();
/// `devices` GPUs in nodes of 8 (a last, partial node if 8 does not divide); nullopt for an
/// unknown name (or a size the preset does not come in: pcie-2socket has at most 8 GPUs).
/// Tier 0: NVLink bandwidth per GPU per direction; tier 1: NIC per GPU. The presets with a
/// network graph (switches and links): dgx-a100-rails and dgx-h100-rails (rail-optimised fat
/// tree: NIC k of every node on leaf k, a non-blocking spine), pcie-2socket (one server: two
/// sockets over UPI, two PCIe switches of two GPUs each per socket), oversubscribed-2to1 (DGX
/// A100 nodes, two per leaf, leaf uplinks half their NICs) and mixed-a100-h100 (rails; the first
/// half of the nodes DGX A100, the rest DGX H100).
std::optional<Cluster> cluster_preset(const std::string& name, int devices);

}  // namespace paraplan::zoo
