// Input loading shared by the subcommands.
#include "cli/workload.h"

#include <filesystem>

#include "io/dapple_reader.h"
#include "io/native_json.h"
#include "io/piper_reader.h"
#include "ir/error.h"
#include "zoo/cluster_presets.h"
#include "zoo/transformer_stack.h"

namespace paraplan::cli {
namespace {

void use_cluster(Workload& w, Cluster cluster) {
  w.cluster = std::move(cluster);
  w.devices = w.cluster.device_count();
  w.memory_per_device_bytes = w.cluster.min_device_memory_bytes();
  w.bandwidth_bytes_per_s = w.cluster.flat_bandwidth_bytes_per_s();
}

}  // namespace

Workload load_workload(const InputSpec& spec) {
  Workload w;
  if (spec.path.empty()) {
    if (spec.format != "auto")
      throw Error(
          ErrorKind::kUsage, "",
          "--format needs an INPUT file; without one the built-in default workload is used");
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
      throw Error(ErrorKind::kUsage, "",
                  "--format must be one of piper, dapple, native (got \"" + format + "\")");
    }
  }
  if (!spec.cluster.empty()) {
    if (auto preset = zoo::cluster_preset(spec.cluster, spec.preset_devices))
      use_cluster(w, *preset);
    else
      use_cluster(w, io::read_cluster_file(spec.cluster));
  }
  return w;
}

}  // namespace paraplan::cli
