// paraplan's native model, cluster, calibration and plan files, as JSON.
#include "fuzz_native.h"
#include "io/json_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error([&] {
    paraplan::fuzz::read_native(
        paraplan::io::parse_json_text(paraplan::fuzz::text(data, size), "fuzz.json"));
  });
  return 0;
}
