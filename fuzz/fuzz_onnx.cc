// ONNX model files (protobuf), through shape inference and the operator mapping.
#include "fuzz_support.h"
#include "io/onnx_reader.h"
#include "render/dot_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error([&] {
    paraplan::io::OnnxOptions options;
    options.batch = 8;  // symbolic batch dimensions become 8, as with --batch 8
    const paraplan::io::OnnxModel m =
        paraplan::io::parse_onnx(paraplan::fuzz::text(data, size), "fuzz.onnx", options);
    nlohmann::json names = nlohmann::json::array();  // as `inspect --json` lists the layers
    for (const auto& layer : m.model.layers) names.push_back(layer.name);
    paraplan::fuzz::write_out({{"model", m.model.name}, {"layers", names}});
    (void)paraplan::render::model_to_dot(m.model);
  });
  return 0;
}
