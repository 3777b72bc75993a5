// Any plan file (`plan ... -o`), read by the one plan file reader as the kind its header names,
// then what `simulate` does first with a transformer plan: price it with the analytic model it
// carries.
#include "api/plan_file.h"
#include "cost/analytic.h"
#include "fuzz_support.h"
#include "io/native_json.h"
#include "io/transformer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace paraplan;
  fuzz::refuse_only_with_error([&] {
    const api::PlanFile f =
        api::read_plan_file(io::parse_json_text(fuzz::text(data, size), "fuzz.json"), "fuzz.json");
    if (const auto* pipeline = std::get_if<api::PipelineReplay>(&f.replay))
      fuzz::write_out(io::plan_to_json(f.plan, pipeline->model));
    const auto* replay = std::get_if<api::TransformerReplay>(&f.replay);
    if (!replay) return;
    const TrainingConfig& config = f.plan.as<TrainingPlan>().config;
    fuzz::write_out(io::training_to_json(config));
    fuzz::write_out(io::transformer_to_json(replay->model));
    if (config.devices() > replay->cluster.device_count())
      return;  // simulate refuses it before pricing
    const AnalyticCostModel cost(replay->model, replay->cluster, replay->calibration);
    (void)cost.evaluate(config);
  });
  return 0;
}
