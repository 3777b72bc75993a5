// PipeDream / DAPPLE profile text (docs/specs/dapple.md §1).
#include "fuzz_support.h"
#include "io/dapple_reader.h"
#include "io/native_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error([&] {
    paraplan::fuzz::write_out(paraplan::io::model_to_json(
        paraplan::io::parse_dapple(paraplan::fuzz::text(data, size), "fuzz.txt", 32)));
  });
  return 0;
}
