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
/// unknown name. Tier 0: NVLink bandwidth per GPU per direction; tier 1: NIC per GPU.
std::optional<Cluster> cluster_preset(const std::string& name, int devices);

}  // namespace paraplan::zoo
