// Flags → search settings → table or JSON.
#include "cli/llm_plan_command.h"

#include <iostream>

#include <fmt/format.h>

#include "cli/report.h"
#include "cli/transformer_common.h"
#include "io/transformer_json.h"
#include "ir/error.h"
#include "ir/units.h"
#include "search/llm.h"
#include "sim/transformer_program.h"
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
  const TransformerKnobs& k = a.knobs;
  const int devices = a.devices > 0 ? a.devices : 8;
  const Cluster cluster = load_cluster(preset, devices);
  LlmSearchSettings s = search_settings(k, devices, a.batch > 0 ? a.batch : 512, a.uniform_stages);
  s.top_k = a.top;
  s.time_limit_s = a.time_limit_s;
  // A plan exported to Megatron-LM must be one it runs: its distributed optimizer is ZeRO 1.
  if (a.export_to == "megatron") s.max_zero_stage = 1;
  AnalyticCostModel cost(model, cluster, load_calibration(k.calibration, cluster));
  LlmSearchResult r = search_llm(cost, s);
  if (a.resimulate < 0) throw Error(ErrorKind::kUsage, "", "--resimulate: expected K >= 0");
  if (r.top.empty()) {
    throw Error(ErrorKind::kInfeasible, "",
                fmt::format("none of the {} configurations of {} on {} × {} fits in {} per device",
                            r.evaluated, model.name, s.devices, cluster.device_types[0].name,
                            format_bytes(cluster.device_types[0].memory_bytes)));
  }
  // --resimulate K: replay the first K plans in the simulator and rank them by its time.
  std::vector<double> simulated(r.top.size(), -1);
  if (a.resimulate > 0) {
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(a.resimulate), r.top.size());
    for (std::size_t i = 0; i < k; ++i)
      simulated[i] = sim::simulate_transformer(cost, r.top[i].config, sim::default_schedule(r.top[i].config))
                         .iteration_time_s;
    std::vector<std::size_t> order(r.top.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k),
                     [&](std::size_t x, std::size_t y) { return simulated[x] < simulated[y]; });
    std::vector<LlmCandidate> top;
    std::vector<double> times;
    for (std::size_t i : order) {
      top.push_back(r.top[i]);
      times.push_back(simulated[i]);
    }
    r.top = std::move(top);
    simulated = std::move(times);
  }
  auto with_simulation = [&](io::Json j, std::size_t i) {
    if (simulated[i] >= 0) {
      j["simulated_iteration_time_s"] = simulated[i];
      j["simulation_difference"] = simulated[i] / r.top[i].result.iteration_time_s - 1;
    }
    return j;
  };
  io::Json j = with_simulation(priced_json(r.top[0].config, r.top[0].result, s.devices), 0);
  j["model"] = model.name;
  j["cluster"] = preset;
  j["planner"] = "llm";
  j["cost_model"] = "analytic";
  io::Json top = io::Json::array();
  for (std::size_t i = 0; i < r.top.size(); ++i)
    top.push_back(with_simulation(priced_json(r.top[i].config, r.top[i].result, s.devices), i));
  j["top"] = top;
  j["search"] = {{"evaluated", r.evaluated},
                 {"rejected_out_of_memory", r.rejected_memory},
                 {"seconds", r.seconds},
                 {"configurations_per_s", r.seconds > 0 ? r.evaluated / r.seconds : 0.0},
                 {"stage_splits_searched", r.balanced},
                 {"timed_out", r.timed_out}};
  if (!a.output.empty()) {
    // The file carries what `paraplan simulate` needs to replay the plan.
    io::Json file = j;
    io::add_replay_keys(file, model, cluster, cost.calibration());
    io::write_text_file(a.output, file.dump(2) + "\n");
  }
  const std::string text = j.dump(2) + "\n";
  if (!a.report.empty()) {
    LlmSearchSettings fs = s;
    fs.top_k = 1;
    fs.time_limit_s = 0;
    io::write_text_file(a.report, transformer_report(cost, r.top[0].config, preset, fs));
  }
  if (!a.export_to.empty()) {
    std::cout << engine_export(a.export_to, model, r.top[0].config);
    return 0;
  }
  if (a.json) {
    std::cout << text;
    return 0;
  }
  std::cout << fmt::format("{} on {} × {} ({}), global batch {} × {} tokens, {} attention: {} "
                           "configurations priced in {:.3f} s ({} do not fit){}\n",
                           model.name, s.devices, cluster.device_types[0].name, preset,
                           s.global_batch, s.seq_len, io::attention_text(s.attention), r.evaluated,
                           r.seconds, r.rejected_memory,
                           r.timed_out ? "; time limit reached, best so far" : "");
  std::cout << fmt::format("{:>4} {:>3} {:>3} {:>3} {:>5} {:>3} {:>4} {:>3} {:>9} {:>3} {:>4} {:>3} "
                           "{:>11} {:>9} {:>7} {:>6} {:>11}  {}\n",
                           "rank", "tp", "cp", "pp", "dp", "ep", "mb", "vpp", "recompute", "sp",
                           "zero", "ovl", "iteration s", "tokens/s", "TFLOP/s", "MFU", "memory",
                           "layers per stage");
  if (a.resimulate > 0)
    std::cout << fmt::format("(re-ranked by the simulator for the first {}: simulated seconds in brackets)\n",
                             std::min<std::size_t>(static_cast<std::size_t>(a.resimulate), r.top.size()));
  int rank = 1;
  for (std::size_t i = 0; i < r.top.size(); ++i) {
    const LlmCandidate& c = r.top[i];
    const TrainingConfig& t = c.config;
    std::string layout = t.stage_layers.empty() ? "even" : "";
    for (int n : t.stage_layers) {
      if (!layout.empty()) layout += ',';
      layout += std::to_string(n);
    }
    if (simulated[i] >= 0) layout += fmt::format("  [{:.4f} s simulated]", simulated[i]);
    std::cout << fmt::format("{:>4} {:>3} {:>3} {:>3} {:>5} {:>3} {:>4} {:>3} {:>9} {:>3} {:>4} {:>3} "
                             "{:>11.4f} {:>9.0f} {:>7.1f} {:>5.1f}% {:>11}  {}\n",
                             rank++, t.tp, t.cp, t.pp, t.dp, t.ep, t.micro_batch, t.vpp,
                             recompute_text(t), t.sequence_parallel ? "yes" : "no", t.zero_stage,
                             t.overlap_grad_reduce ? "yes" : "no", c.result.iteration_time_s,
                             c.result.tokens_per_s, c.result.tflops_per_device, 100 * c.result.mfu,
                             format_bytes(c.result.memory.peak_bytes), layout);
  }
  return 0;
}

}  // namespace paraplan::cli
