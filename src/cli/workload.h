// Loading what a command works on: a model from any supported format (detected or forced), and
// the cluster and Piper settings that come with it.
#pragma once

#include <string>

#include "ir/cluster.h"
#include "ir/model.h"

namespace paraplan::cli {

struct InputSpec {
  std::string path;             ///< empty: the built-in default workload
  std::string format = "auto";  ///< auto | piper | dapple | native
  std::string cluster;          ///< optional: a cluster preset or a paraplan cluster file
  int profile_batch = 0;        ///< DAPPLE profiles: 0 = from the file name
  int preset_devices = 8;       ///< devices of a preset cluster (one DGX node unless --devices)
};

struct Workload {
  Model model;
  Cluster cluster;
  std::string format;  ///< piper | dapple | native | builtin
  // Piper's flat settings: from the Piper file, else from the cluster.
  int devices = 0;
  double memory_per_device_bytes = 0;
  double bandwidth_bytes_per_s = 0;
};

/// Reads the input once; Error(kUsage) for a bad --format, reader errors otherwise.
Workload load_workload(const InputSpec& spec);

}  // namespace paraplan::cli
