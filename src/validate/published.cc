#include "validate/published.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "ir/training_rules.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan::validate {

std::vector<ScoredPublished> score_published(const std::vector<io::PublishedRun>& runs) {
  std::vector<ScoredPublished> out;
  for (const auto& r : runs) {
    ScoredPublished s;
    s.run = r;
    if (r.model) {
      s.model = *r.model;
    } else if (auto m = zoo::llm_model(r.model_name)) {
      s.model = *m;
    } else {
      throw Error(ErrorKind::kInput, r.place + "/model",
                  fmt::format("\"{}\" is not a built-in transformer (paraplan plan --help lists "
                              "them); give \"hf_config\" instead",
                              r.model_name));
    }
    s.devices = r.config.devices();
    const auto cluster = zoo::cluster_preset(r.cluster, s.devices);
    if (!cluster)
      throw Error(
          ErrorKind::kInput, r.place + "/cluster",
          fmt::format("\"{}\" is not a cluster preset (dgx-a100, dgx-h100, h200, vtrain-a100)",
                      r.cluster));
    const AnalyticCostModel cost(s.model, *cluster,
                                 default_calibration(cluster->device_types[0].name));
    try {
      s.predicted = cost.evaluate(r.config);
    } catch (const RuleViolation& e) {  // the file's configuration breaks a rule
      throw e.in_file(r.place + "/config");
    }
    s.device_memory_bytes = cluster->device_types[0].memory_bytes;
    s.measured_s = static_cast<double>(r.config.global_batch * r.config.seq_len) /
                   (r.tokens_per_s_per_device * s.devices);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace paraplan::validate
