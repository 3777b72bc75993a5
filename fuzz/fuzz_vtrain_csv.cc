// The measured-run CSV of the vTrain data set (validate, calibrate).
#include "fuzz_support.h"
#include "io/vtrain_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error(
      [&] { (void)paraplan::io::parse_vtrain_csv(paraplan::fuzz::text(data, size), "fuzz.csv"); });
  return 0;
}
