// Hugging Face config.json of a decoder-only transformer, then its parameter count.
#include "fuzz_support.h"
#include "io/hf_config.h"
#include "io/json_fields.h"
#include "io/transformer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error([&] {
    const paraplan::TransformerConfig model = paraplan::io::hf_config_from_json(
        paraplan::io::parse_json_text(paraplan::fuzz::text(data, size), "config.json"),
        "config.json");
    (void)model.parameters();
    paraplan::fuzz::write_out(paraplan::io::transformer_to_json(model));
  });
  return 0;
}
