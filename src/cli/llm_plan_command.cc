// Flags → search settings → table or JSON.
#include "cli/llm_plan_command.h"

#include <iostream>

#include <fmt/format.h>

#include "cli/transformer_common.h"
#include "ir/error.h"
#include "ir/units.h"
#include "search/llm.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan::cli {
bool is_transformer_model(const std::string& model) {
  return zoo::llm_model(model).has_value() ||
         (model.size() > 5 && model.compare(model.size() - 5, 5, ".json") == 0);
}

int run_llm_plan(const LlmPlanArgs& a) {
  TransformerConfig model = load_transformer(a.model);
  const std::string preset = a.cluster.empty() ? "dgx-a100" : a.cluster;
  LlmSearchSettings s;
  s.devices = a.devices > 0 ? a.devices : 8;
  const Cluster cluster = load_cluster_preset(preset, s.devices);
  s.seq_len = a.seq_len > 0 ? a.seq_len : 2048;
  s.global_batch = a.batch > 0 ? a.batch : 512;
  if (a.tp) s.tp = a.tp;
  if (a.pp) s.pp = a.pp;
  if (a.dp) s.dp = a.dp;
  if (a.micro_batch) s.micro_batch = a.micro_batch;
  if (!a.recompute.empty()) {
    s.recompute = parse_recompute(a.recompute);
  }
  if (a.sequence_parallel) s.sequence_parallel = true;
  if (a.zero >= 0) s.zero_stage = a.zero;
  s.top_k = a.top;
  s.time_limit_s = a.time_limit_s;
  AnalyticCostModel cost(model, cluster, default_calibration(cluster.device_types[0].name));
  LlmSearchResult r = search_llm(cost, s);
  if (r.top.empty()) {
    throw Error(ErrorKind::kInfeasible, "",
                fmt::format("none of the {} configurations of {} on {} × {} fits in {} per device",
                            r.evaluated, model.name, s.devices, cluster.device_types[0].name,
                            format_bytes(cluster.device_types[0].memory_bytes)));
  }
  io::Json j = priced_json(r.top[0].config, r.top[0].result, s.devices);
  j["model"] = model.name;
  j["cluster"] = preset;
  j["planner"] = "llm";
  j["cost_model"] = "analytic";
  io::Json top = io::Json::array();
  for (const auto& c : r.top) top.push_back(priced_json(c.config, c.result, s.devices));
  j["top"] = top;
  j["search"] = {{"evaluated", r.evaluated},
                 {"rejected_out_of_memory", r.rejected_memory},
                 {"seconds", r.seconds},
                 {"configurations_per_s", r.seconds > 0 ? r.evaluated / r.seconds : 0.0},
                 {"timed_out", r.timed_out}};
  const std::string text = j.dump(2) + "\n";
  if (!a.output.empty()) io::write_text_file(a.output, text);
  if (!a.export_to.empty()) {
    std::cout << engine_export(a.export_to, model, r.top[0].config);
    return 0;
  }
  if (a.json) {
    std::cout << text;
    return 0;
  }
  std::cout << fmt::format("{} on {} × {} ({}), global batch {} × {} tokens: {} configurations "
                           "priced in {:.3f} s ({} do not fit){}\n",
                           model.name, s.devices, cluster.device_types[0].name, preset,
                           s.global_batch, s.seq_len, r.evaluated, r.seconds, r.rejected_memory,
                           r.timed_out ? "; time limit reached, best so far" : "");
  std::cout << fmt::format("{:>4} {:>4} {:>4} {:>5} {:>5} {:>10} {:>3} {:>4} {:>12} {:>12} {:>8} {:>6} {:>12}\n",
                           "rank", "tp", "pp", "dp", "mb", "recompute", "sp", "zero",
                           "iteration s", "tokens/s", "TFLOP/s", "MFU", "memory");
  int rank = 1;
  for (const auto& c : r.top) {
    const TrainingConfig& t = c.config;
    std::cout << fmt::format("{:>4} {:>4} {:>4} {:>5} {:>5} {:>10} {:>3} {:>4} {:>12.4f} {:>12.0f} {:>8.1f} {:>5.1f}% {:>12}\n",
                             rank++, t.tp, t.pp, t.dp, t.micro_batch, recompute_name(t.recompute),
                             t.sequence_parallel ? "yes" : "no", t.zero_stage,
                             c.result.iteration_time_s, c.result.tokens_per_s,
                             c.result.tflops_per_device, 100 * c.result.mfu,
                             format_bytes(c.result.memory.peak_bytes));
  }
  return 0;
}

}  // namespace paraplan::cli
