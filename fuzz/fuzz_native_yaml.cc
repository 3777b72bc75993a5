// paraplan's native model, cluster, calibration and plan files, as YAML.
#include "fuzz_native.h"
#include "io/yaml_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error([&] {
    paraplan::fuzz::read_native(
        paraplan::io::parse_yaml_text(paraplan::fuzz::text(data, size), "fuzz.yaml"));
  });
  return 0;
}
