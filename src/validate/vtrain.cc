// Scoring measured runs with the analytic model.
#include "validate/vtrain.h"

#include <cmath>
#include <map>
#include <tuple>

#include "cost/analytic.h"
#include "io/hf_config.h"
#include "io/mpt_reader.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan::validate {

std::vector<ScoredRun> score_runs(const std::vector<io::MeasuredRun>& runs,
                                  const Calibration& calibration) {
  std::vector<ScoredRun> out;
  out.reserve(runs.size());
  for (const auto& r : runs) {
    // MPT rows: the model its config.json describes (what a user of the FSDP stack gives).
    TransformerConfig model = r.set == "mpt"
                                  ? io::hf_config_from_json(io::mpt_config_json(r), "mpt row")
                                  : zoo::megatron_gpt(r.model.empty() ? "gpt" : r.model, r.heads,
                                                      r.hidden, r.layers, r.vocab);
    if (r.set != "mpt") {
      model.max_positions = r.seq_len;
      model.biases = r.biases;
    }
    Cluster cluster = *zoo::cluster_preset(r.cluster, r.gpus);
    for (auto& d : cluster.device_types) d.memory_bytes = r.device_memory_bytes;
    const Calibration& cal =
        r.device == calibration.device ? calibration : default_calibration(r.device);
    AnalyticCostModel cost(model, std::move(cluster), cal);
    TrainingConfig t;
    t.seq_len = r.seq_len;
    t.global_batch = r.global_batch;
    t.micro_batch = r.micro_batch;
    t.tp = r.tp;
    t.pp = r.pp;
    t.dp = r.dp;
    t.recompute = r.recompute;
    t.attention = r.attention;
    t.dropout = r.dropout;
    t.zero_stage = r.zero_stage;
    t.bf16_gradient_reduction = r.bf16_gradient_reduction;
    t.fused_elementwise = r.fused_elementwise;
    t.fp32_loss = r.fp32_loss;
    t.fused_loss = r.fused_loss;
    t.stack = r.stack;
    t.fp8 = r.fp8;
    const AnalyticResult result = cost.evaluate(t);
    out.push_back({r, result.iteration_time_s, result.memory.peak_bytes, result.fits});
  }
  return out;
}

double mean_absolute_percentage_error(const std::vector<ScoredRun>& rows) {
  double sum = 0;
  for (const auto& s : rows) sum += std::abs(s.error());
  return rows.empty() ? 0 : 100 * sum / static_cast<double>(rows.size());
}

std::vector<Ranking> rankings(const std::vector<ScoredRun>& rows) {
  std::map<std::tuple<std::int64_t, std::int64_t, int, std::int64_t>, Ranking> by_model;
  for (const auto& s : rows) {
    Ranking& r = by_model[{s.run.hidden, s.run.layers, s.run.gpus, s.run.global_batch}];
    r.parameters_billion = s.run.parameters_billion;
    r.gpus = s.run.gpus;
    ++r.configurations;
    if (!r.best || s.run.iteration_time_s < r.best->run.iteration_time_s) r.best = &s;
    if (!r.picked || s.predicted_s < r.picked->predicted_s) r.picked = &s;
  }
  std::vector<Ranking> out;
  for (const auto& [key, r] : by_model) out.push_back(r);
  return out;
}

}  // namespace paraplan::validate
