// The transformer plan file (`plan --model ... -o`), then what `simulate` does first with it:
// price the plan with the analytic model it carries.
#include "cost/analytic.h"
#include "fuzz_support.h"
#include "io/transformer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error([&] {
    const paraplan::io::TransformerPlanFile f = paraplan::io::transformer_plan_from_json(
        paraplan::io::parse_json_text(paraplan::fuzz::text(data, size), "fuzz.json"), "fuzz.json");
    paraplan::fuzz::write_out(paraplan::io::training_to_json(f.config));
    paraplan::fuzz::write_out(paraplan::io::transformer_to_json(f.model));
    if (f.config.devices() > f.cluster.device_count())
      return;  // simulate refuses it before pricing
    const paraplan::AnalyticCostModel cost(f.model, f.cluster, f.calibration);
    (void)cost.evaluate(f.config);
  });
  return 0;
}
