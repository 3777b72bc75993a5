// Input loading shared by every job.
#include "api/inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

#include "api/knobs.h"
#include "cost/analytic.h"
#include "io/calibration_file.h"
#include "io/dapple_reader.h"
#include "io/hf_config.h"
#include "io/native_json.h"
#include "io/onnx_reader.h"
#include "io/piper_reader.h"
#include "ir/error.h"
#include "ir/names.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"
#include "zoo/pase_graphs.h"
#include "zoo/transformer_stack.h"

namespace paraplan::api {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

void use_cluster(Workload& w, Cluster cluster) {
  w.cluster = std::move(cluster);
  w.devices = w.cluster.device_count();
  w.memory_per_device_bytes = w.cluster.min_device_memory_bytes();
  w.bandwidth_bytes_per_s = w.cluster.flat_bandwidth_bytes_per_s();
  w.allreduce_bandwidth_bytes_per_s = w.cluster.flat_allreduce_bandwidth_bytes_per_s();
}

}  // namespace

Workload load_workload(const InputSpec& spec) {
  Workload w;
  if (spec.path.empty()) {
    if (spec.format != "auto")
      throw FieldError("format",
                       " needs an INPUT file; without one the built-in default workload is used");
    w.model = zoo::transformer_stack({});
    w.format = "builtin";
    use_cluster(w, zoo::default_cluster());
  } else {
    const std::string text = io::read_text_file(spec.path);
    std::string format = spec.format;
    const bool onnx_name =
        spec.path.size() > 5 && spec.path.compare(spec.path.size() - 5, 5, ".onnx") == 0;
    if (format == "onnx" ||
        (format == "auto" && (onnx_name || text.find('\0') != std::string::npos)))
      throw Error(ErrorKind::kUsage, spec.path,
                  "an ONNX (binary) model is an operator graph: plan it with "
                  "`paraplan plan FILE --planner intra-op`; it cannot be converted to a layer "
                  "model");
    io::Json doc;
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    const bool json = first != std::string::npos && text[first] == '{';
    if (format == "auto") {
      if (json) {
        doc = io::parse_json_text(text, spec.path);
        if (io::looks_like_native_model(doc))
          format = "native";
        else if (io::looks_like_piper(doc))
          format = "piper";
        else
          throw Error(ErrorKind::kInput, spec.path,
                      "unrecognised JSON: expected a paraplan model (\"format\": "
                      "\"paraplan-model\") or a Piper input (fields nodes, edges, mbsInBatch); "
                      "use --format");
      } else {
        format = "dapple";
      }
    }
    w.format = format;
    if (format == "piper") {
      io::PiperInput in = io::parse_piper(text, spec.path);
      w.model = std::move(in.model);
      w.model.name = io::utf8_or_replaced(std::filesystem::path(spec.path).stem().string());
      use_cluster(
          w, Cluster::flat(in.max_devices, in.memory_per_device_bytes, in.bandwidth_bytes_per_s));
    } else if (format == "native") {
      if (doc.is_null()) doc = io::parse_json_text(text, spec.path);
      w.model = io::model_from_json(doc, spec.path);
      use_cluster(w, zoo::default_cluster());
    } else if (format == "dapple") {
      w.model = io::parse_dapple(text, spec.path,
                                 io::profile_batch_from_name(spec.path, spec.profile_batch));
      w.model.name = io::utf8_or_replaced(std::filesystem::path(spec.path).stem().string());
      use_cluster(w, zoo::default_cluster());
    } else {
      throw FieldError("format", " must be one of piper, dapple, native (got \"" + format + "\")");
    }
  }
  if (!spec.cluster.empty()) {
    w.cluster_given = true;
    if (auto preset = zoo::cluster_preset(spec.cluster, spec.preset_devices))
      use_cluster(w, *preset);
    else
      use_cluster(w, io::read_cluster_file(spec.cluster));
  }
  return w;
}

OperatorGraph load_operator_graph(const std::string& builtin, const std::string& onnx_path,
                                  int batch) {
  OperatorGraph g;
  if (!builtin.empty()) {
    g.batch = batch > 0 ? batch : 128;
    zoo::OperatorWorkload w = zoo::pase_graph(builtin, g.batch);
    g.model = std::move(w.model);
    g.min_block = w.min_block;
    return g;
  }
  io::OnnxOptions o;
  o.batch = batch;
  io::OnnxModel m = io::read_onnx(onnx_path, o);
  g.model = std::move(m.model);
  g.batch = static_cast<int>(m.batch);
  g.min_block = 1;
  return g;
}

bool is_layer_model_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  if (ends_with(path, ".onnx") || ends_with(path, ".txt")) return true;
  if (!ends_with(path, ".json")) return false;
  try {  // a paraplan model or Piper's graph; a Hugging Face config.json is neither
    const io::Json doc = io::parse_json_file(path);
    return io::looks_like_native_model(doc) || io::looks_like_piper(doc);
  } catch (const Error&) {
    return false;  // the transformer reader names what is wrong with it
  }
}

bool is_transformer_model(const std::string& model) {
  return zoo::llm_model(model).has_value() ||
         (ends_with(model, ".json") && !is_layer_model_file(model));
}

namespace {

[[noreturn]] void unknown_model(const std::string& name) {
  std::vector<std::string> all = zoo::llm_model_names();
  all.insert(all.end(), zoo::pase_graph_names().begin(), zoo::pase_graph_names().end());
  const std::string near = nearest_name(name, all);
  throw FieldError("model",
                   fmt::format(": \"{}\" is not a built-in model or a file;{} built-in "
                               "transformers: {} (and their Hugging Face ids); operator "
                               "graphs: {}; or a config.json, a model .json or an .onnx "
                               "file",
                               name, near.empty() ? "" : " did you mean \"" + near + "\"?",
                               joined(zoo::llm_model_names()), joined(zoo::pase_graph_names())));
}

}  // namespace

void check_model_name(const std::string& model) {
  if (model.empty() || zoo::llm_model(model)) return;
  const auto& graphs = zoo::pase_graph_names();
  if (std::find(graphs.begin(), graphs.end(), model) != graphs.end()) return;
  if (ends_with(model, ".json") || ends_with(model, ".onnx")) return;  // read as a file
  unknown_model(model);
}

TransformerConfig load_transformer(const std::string& name) {
  if (auto c = zoo::llm_model(name)) return *c;
  if (ends_with(name, ".json")) return io::read_hf_config(name);
  unknown_model(name);
}

Cluster load_cluster(const std::string& name, int devices) {
  if (auto c = zoo::cluster_preset(name, devices)) return *c;
  if (!ends_with(name, ".json") && !ends_with(name, ".yaml") && !ends_with(name, ".yml"))
    throw FieldError("cluster", ": \"" + name + "\" is neither a preset (" +
                                    joined(zoo::cluster_preset_names()) +
                                    ") nor a cluster file (.json, .yaml)");
  Cluster c = io::read_cluster_file(name);
  for (std::size_t k = 0; k < c.device_types.size(); ++k)
    if (c.device_types[k].peak_flops_per_s <= 0)
      throw Error(ErrorKind::kInput, fmt::format("{}: /device_types/{}/peak_flops_per_s", name, k),
                  "the analytic cost model needs the device's peak FLOP/s");
  if (c.device_count() < devices)
    throw FieldError("devices", " " + std::to_string(devices) + ": the cluster in " + name +
                                    " has only " + std::to_string(c.device_count()) + " devices");
  if (c.machine_count() > 1 && c.tiers.size() < 2)
    throw Error(ErrorKind::kInput, name + ": /tiers",
                "a cluster of several machines needs a second tier (the links between machines)");
  return c;
}

int device_types_used(const Cluster& cluster, int devices) {
  std::vector<bool> used(cluster.device_types.size(), false);
  int id = 0;
  for (int m = 0; m < cluster.machine_count() && id < devices; ++m) {
    used[static_cast<std::size_t>(cluster.machine_device_type[static_cast<std::size_t>(m)])] = true;
    id += cluster.machine_sizes[static_cast<std::size_t>(m)];
  }
  return static_cast<int>(std::count(used.begin(), used.end(), true));
}

Cluster one_device_type(Cluster cluster, int devices, const std::string& what) {
  if (device_types_used(cluster, devices) > 1)
    throw FieldError("cluster", ": " + cluster.name + " mixes device types among its first " +
                                    std::to_string(devices) + " devices; " + what +
                                    " prices one type (paraplan plan --model plans a cluster of "
                                    "several)");
  if (cluster.machine_count() == 0) return cluster;
  // The analytic model reads the first device type: make it the one the devices are.
  const int used = cluster.machine_device_type[0];
  if (used != 0) {
    std::swap(cluster.device_types[0], cluster.device_types[static_cast<std::size_t>(used)]);
    for (int& t : cluster.machine_device_type) t = t == used ? 0 : t == 0 ? used : t;
  }
  return cluster;
}

std::vector<Calibration> load_calibrations(const std::string& file, const Cluster& cluster) {
  std::vector<Calibration> out;
  std::optional<Calibration> given;
  if (!file.empty()) given = io::read_calibration_file(file);
  for (const DeviceType& type : cluster.device_types) {
    if (!type.calibration_file.empty())
      out.push_back(io::read_calibration_file(type.calibration_file));
    else if (given && given->device == type.name)
      out.push_back(*given);
    else
      out.push_back(default_calibration(type.name));
  }
  return out;
}

Calibration load_calibration(const std::string& file, const Cluster& cluster) {
  const DeviceType& type = cluster.device_types.at(0);
  const std::string& device = type.name;
  if (file.empty() && !type.calibration_file.empty())
    return io::read_calibration_file(type.calibration_file);
  if (file.empty()) return default_calibration(device);
  Calibration c = io::read_calibration_file(file);
  if (c.device != device)
    throw FieldError("calibration", ": " + file + " calibrates \"" + c.device +
                                        "\" but the cluster's devices are \"" + device + "\"");
  return c;
}

OperatorGraph requested_operator_graph(const std::string& model, const std::string& input,
                                       const std::string& format, int batch,
                                       const std::string& what) {
  if (!model.empty() && !input.empty())
    throw FieldError("model", ": give either it or an input, not both");
  if (model.empty() && input.empty())
    throw FieldError("model", ": " + what +
                                  " needs an operator graph: a built-in one (alexnet, resnet101, "
                                  "inception3, rnnlm, transformer) or an ONNX file as input");
  if (model.empty() && format != "auto" && format != "onnx")
    throw FieldError("format", ": " + what + " reads ONNX files (onnx) or built-in models");
  return load_operator_graph(model, input, batch);
}

PaseSettings pase_settings(int devices, const std::string& flops, const std::string& bandwidth,
                           int min_block, const OperatorGraph& graph) {
  PaseSettings s;
  s.devices = devices > 0 ? devices : 8;
  s.flops_per_s = flops.empty() ? 10e12 : flops_value("flops", flops);
  s.bandwidth_bytes_per_s = bandwidth.empty() ? 16e9 : bandwidth_value("bandwidth", bandwidth);
  s.min_block = min_block > 0 ? min_block : graph.min_block;
  return s;
}

}  // namespace paraplan::api
