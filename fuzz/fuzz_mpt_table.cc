// The MPT benchmark tables (TSV or llm-foundry's Markdown) that validate and calibrate read.
#include "fuzz_support.h"
#include "io/mpt_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error(
      [&] { (void)paraplan::io::parse_mpt_table(paraplan::fuzz::text(data, size), "fuzz.tsv"); });
  return 0;
}
