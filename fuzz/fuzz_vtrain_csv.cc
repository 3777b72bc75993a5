// The measured-run CSV of the vTrain data set (validate, calibrate).
#include "fuzz_support.h"
#include "io/vtrain_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = paraplan::fuzz::as_file(data, size, ".csv");
  paraplan::fuzz::refuse_only_with_error([&] { (void)paraplan::io::read_vtrain_csv(path); });
  return 0;
}
