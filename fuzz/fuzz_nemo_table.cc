// The NeMo H100 table (data/nemo-h100) that validate reads; its model column names built-ins.
#include "fuzz_support.h"
#include "io/nemo_reader.h"
#include "zoo/llm_models.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error([&] {
    (void)paraplan::io::parse_nemo_table(paraplan::fuzz::text(data, size), "fuzz.tsv",
                                         "data/nemo-h100", paraplan::zoo::llm_model);
  });
  return 0;
}
