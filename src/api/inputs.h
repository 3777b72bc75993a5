// What a job works on, loaded once for every front end: a layer model in any supported format
// (detected or forced) with the cluster that comes with it, an operator graph (built-in or
// ONNX), a transformer (built-in or config.json), a cluster (preset or file) and a calibration.
// Wrong names are FieldErrors on the request's field ("model", "cluster", "calibration").
#pragma once

#include <string>
#include <utility>

#include "cost/pase_cost.h"
#include "ir/calibration.h"
#include "ir/cluster.h"
#include "ir/model.h"
#include "ir/transformer.h"

namespace paraplan::api {

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
  double allreduce_bandwidth_bytes_per_s = 0;  ///< the cluster's, when a probe measured it
  bool cluster_given = false;  ///< the cluster is the user's (a preset or file), not a default
};

/// Reads the input once; FieldError("format") for a bad format, reader errors otherwise.
Workload load_workload(const InputSpec& spec);

/// An operator graph for the intra-op planner and the batch it was built (or read) at.
struct OperatorGraph {
  Model model;
  int batch = 0;
  int min_block = 1;  ///< PaSE's cutoff for the graph (4 for its CNNs, 1 otherwise)
};
/// A built-in operator graph (`builtin` names one of PaSE's: alexnet, resnet101, inception3,
/// rnnlm, transformer) at `batch` (0: 128), or an ONNX file (`batch` replaces a symbolic leading
/// dimension). Exactly one of `builtin` and `onnx_path` is non-empty.
OperatorGraph load_operator_graph(const std::string& builtin, const std::string& onnx_path,
                                  int batch);

/// True if `path` is a file of a layer model or operator graph (a paraplan model or Piper's JSON,
/// a DAPPLE/PipeDream profile .txt, an ONNX file): what the planners take as their input.
bool is_layer_model_file(const std::string& path);
/// A request whose model is a layer model's file (Python's first argument) and which has no
/// input: the same request with that file as its input (and "input" given instead of "model").
/// Any request with fields input, model and given.
template <typename Options>
bool model_file_as_input(Options& o) {
  if (!o.input.empty() || !is_layer_model_file(o.model)) return false;
  o.input = std::exchange(o.model, "");
  for (std::string& field : o.given)
    if (field == "model") field = "input";
  return true;
}
/// The operator graph a request names for `what` ("the intra-op planner", "the intra-op
/// frontier"): exactly one of a built-in graph and an ONNX input (format auto or onnx), at `batch`
/// (0: the default). FieldError naming the field otherwise.
OperatorGraph requested_operator_graph(const std::string& model, const std::string& input,
                                       const std::string& format, int batch,
                                       const std::string& what);
/// PaSE's settings from a request's fields, with their defaults (8 devices, 10 TFLOP/s, 16 GB/s,
/// the graph's cutoff); FieldError for a malformed rate.
PaseSettings pase_settings(int devices, const std::string& flops, const std::string& bandwidth,
                           int min_block, const OperatorGraph& graph);
/// True if `s` ends with `suffix` ("model.onnx", ".onnx").
bool ends_with(const std::string& s, const std::string& suffix);
/// True if `model` names a transformer (built-in or a config.json that is not a layer model)
/// rather than an operator graph.
bool is_transformer_model(const std::string& model);
/// A built-in name (or alias) or a config.json; FieldError("model") naming the nearest built-in
/// and listing them otherwise.
TransformerConfig load_transformer(const std::string& name);
/// FieldError("model") for a --model that is neither a built-in transformer (or alias), a
/// built-in operator graph, nor a file (.json, .onnx): never routed to a planner that then
/// does not know it. Says which built-in was probably meant.
void check_model_name(const std::string& model);
/// A preset for `devices` GPUs, or a paraplan-cluster file (.json, .yaml, .yml) with at least
/// `devices` devices, each type with its peak FLOP/s; FieldError("cluster" or "devices")
/// otherwise.
Cluster load_cluster(const std::string& preset_or_file, int devices);
/// Device types among the cluster's first `devices` devices.
int device_types_used(const Cluster& cluster, int devices);
/// The cluster with the type of its first `devices` devices first (what the analytic model reads);
/// FieldError("cluster") when they are of several types (`what` names the job refusing them).
Cluster one_device_type(Cluster cluster, int devices, const std::string& what);
/// The calibration of the cluster's first device type: the file given, else the type's own
/// (`calibration` in the cluster file), else the shipped one for its name.
Calibration load_calibration(const std::string& file, const Cluster& cluster);
/// One calibration per device type: the type's own file, else the file given when it calibrates
/// that type, else the shipped one (Error(kUsage) for a device without one).
std::vector<Calibration> load_calibrations(const std::string& file, const Cluster& cluster);

}  // namespace paraplan::api
