// The published-runs file (data/moe, `validate --published`), then what `validate` does with
// each entry: resolve its model and cluster preset and price it with the analytic model.
#include "cost/analytic.h"
#include "fuzz_support.h"
#include "io/published_runs.h"
#include "io/transformer_json.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  paraplan::fuzz::refuse_only_with_error([&] {
    const auto runs = paraplan::io::published_runs_from_json(
        paraplan::io::parse_json_text(paraplan::fuzz::text(data, size), "fuzz.json"), "fuzz.json");
    for (const auto& r : runs) {
      paraplan::fuzz::write_out(paraplan::io::training_to_json(r.config));
      const auto model = r.model ? r.model : paraplan::zoo::llm_model(r.model_name);
      if (!model || r.config.devices() > 4096) continue;  // validate refuses it; keep runs short
      const auto cluster = paraplan::zoo::cluster_preset(r.cluster, r.config.devices());
      if (!cluster) continue;
      const paraplan::AnalyticCostModel cost(
          *model, *cluster, paraplan::default_calibration(cluster->device_types[0].name));
      (void)cost.evaluate(r.config);
    }
  });
  return 0;
}
