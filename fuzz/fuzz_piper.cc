// Piper's input JSON (docs/specs/piper.md §2), then the cost model built from what it read.
#include "cost/piper_cost.h"
#include "fuzz_support.h"
#include "io/native_json.h"
#include "io/piper_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error([&] {
    const paraplan::io::PiperInput in =
        paraplan::io::parse_piper(paraplan::fuzz::text(data, size), "fuzz.json");
    paraplan::fuzz::write_out(paraplan::io::model_to_json(in.model));
    paraplan::PiperSettings settings;
    settings.max_devices = in.max_devices;
    settings.memory_per_device_bytes = in.memory_per_device_bytes;
    settings.bandwidth_bytes_per_s = in.bandwidth_bytes_per_s;
    settings.microbatches = in.model.microbatches;
    paraplan::PiperCostModel cost(in.model, settings);
    (void)cost.objective_lower_bound();
  });
  return 0;
}
