// The simulate subcommand.
#include "cli/simulate_command.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "cost/analytic.h"
#include "cost/piper_cost.h"
#include "io/chrome_trace.h"
#include "io/native_json.h"
#include "io/transformer_json.h"
#include "ir/error.h"
#include "ir/training_rules.h"
#include "ir/units.h"
#include "report/plan_report.h"
#include "search/pipeline_frontier.h"
#include "sim/intra_op_program.h"
#include "sim/pipeline_program.h"
#include "sim/transformer_program.h"

namespace paraplan::cli {
namespace {

struct SimulateArgs {
  std::string plan;
  std::string trace;
  std::string schedule;
  std::string report;
  bool json = false;
};

// A pipeline planner's plan (`plan INPUT -o`, Piper's cost model), with its model embedded.
int run_pipeline_plan(const SimulateArgs& a, const io::Json& doc) {
  io::JsonObject top(doc, a.plan, "");
  if (!top.has("model_config") || !top.has("piper_settings"))
    top.fail("model_config",
             "a pipeline plan to replay needs the model and Piper's settings; write it "
             "with `paraplan plan INPUT --cost-model piper -o FILE`");
  const Model model = io::model_from_json(top.field("model_config"), a.plan + " (model_config)");
  const io::JsonObject ps = top.object("piper_settings");
  PiperSettings settings;
  settings.max_devices = static_cast<int>(ps.integer("max_devices", 1, 1 << 24));
  settings.memory_per_device_bytes = ps.positive_number("memory_per_device_bytes");
  settings.bandwidth_bytes_per_s = ps.positive_number("bandwidth_bytes_per_s");
  settings.microbatches = static_cast<int>(ps.integer("microbatches", 1, 1 << 30));
  io::Json plan_part = doc;  // the plan without what `plan` added beside it
  for (const char* extra :
       {"model_config", "piper_settings", "bandwidth_bytes_per_s", "max_devices",
        "memory_per_device_bytes", "smallest_memory_per_device_bytes"})
    plan_part.erase(extra);
  const Plan read = io::plan_from_json(plan_part, model, a.plan);
  PiperCostModel cost(model, settings);
  const Plan plan = cost.evaluate(read);  // refuses layers, options or degrees the model lacks
  if (!plan.feasible)
    throw Error(ErrorKind::kInfeasible, a.plan,
                fmt::format("the plan does not fit in {} per device",
                            format_bytes(settings.memory_per_device_bytes)));
  if (!a.schedule.empty() && a.schedule != "1f1b")
    throw Error(ErrorKind::kUsage, "",
                "--schedule: pipeline plans replay under 1f1b (Piper's in-flight count)");
  const sim::PipelineSimulation s = sim::simulate_pipeline_plan(model, plan, settings.microbatches);
  if (!a.trace.empty()) io::write_chrome_trace(a.trace, s.result.timeline);
  if (!a.report.empty())
    io::write_text_file(a.report, report::pipeline_report(model, plan, settings, s));
  const auto& devices = s.result.timeline.devices;
  if (a.json) {
    io::Json per_device = io::Json::array();
    for (std::size_t i = 0; i < devices.size(); ++i)
      per_device.push_back({{"name", devices[i]},
                            {"busy_s", s.result.devices[i].busy_s},
                            {"peak_bytes", s.result.devices[i].peak_bytes}});
    std::cout << io::Json{{"model", model.name},
                          {"schedule", "1f1b"},
                          {"iteration_time", s.makespan_s},
                          {"bound", s.bound_s},
                          {"difference", s.difference},
                          {"bubble_fraction", s.result.bubble_fraction},
                          {"events", s.result.timeline.events.size()},
                          {"devices", per_device}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << fmt::format(
                   "{}: {} stage(s), {} replicas, {} micro-batches, {} events simulated (1f1b)\n",
                   model.name, plan.stages.size(), devices.size(), settings.microbatches,
                   s.result.timeline.events.size())
            << fmt::format(
                   "iteration (profile time units): simulated {:.6g}, Piper's bound N × objective "
                   "{:.6g} ({:+.2f}%: fill, drain and the all-reduce); bubble {:.1f}%\n",
                   s.makespan_s, s.bound_s, 100 * s.difference, 100 * s.result.bubble_fraction);
  for (std::size_t i = 0; i < devices.size() && i < 64; ++i)
    std::cout << fmt::format("  {:<32} busy {:.6g}   peak memory {}\n", devices[i],
                             s.result.devices[i].busy_s,
                             format_bytes(s.result.devices[i].peak_bytes));
  if (devices.size() > 64)
    std::cout << fmt::format("  ... {} more replicas\n", devices.size() - 64);
  if (!a.trace.empty()) std::cout << "trace written to " << a.trace << "\n";
  return 0;
}

// An intra-operator plan (`plan --planner intra-op -o`): its layers run one after the other on
// all devices, each its sharded computation, then its collectives and the re-layout of its
// inputs (the plan carries every layer's costs, in FLOP-equivalents per device).
int run_intra_op_plan(const SimulateArgs& a, const io::Json& doc) {
  io::JsonObject top(doc, a.plan, "");
  const double flops = top.positive_number("flops_per_s");
  const int devices = static_cast<int>(top.integer("devices", 1, 1 << 24));
  const io::Json& splits = top.array("layer_splits");
  std::vector<LayerSplit> layers;
  std::vector<std::string> names;
  std::vector<report::IntraOpRow> rows;
  double total = 0;
  for (std::size_t i = 0; i < splits.size(); ++i) {
    io::JsonObject ls = top.element("layer_splits", i);
    LayerSplit split;
    split.compute = ls.number("compute");
    split.communication = ls.number("communication");
    split.redistribution = ls.number("redistribution");
    split.devices = static_cast<int>(ls.integer("devices", 1, 1 << 24));
    total += split.compute + split.communication + split.redistribution;
    names.push_back(ls.string("name"));
    std::string cut;  // the split as the plan's table shows it: "b/4 n/2"
    const io::Json& parts = ls.array("split");
    for (std::size_t k = 0; k < parts.size(); ++k) {
      if (!parts[k].is_number_integer() || parts[k].get<long long>() < 1)
        ls.fail("split", fmt::format("element {} must be a positive integer", k));
      if (parts[k].get<long long>() == 1) continue;
      if (k >= ls.array("dims").size()) ls.fail("dims", "has fewer dimensions than \"split\"");
      cut += fmt::format("{}{}/{}", cut.empty() ? "" : " ", ls.element("dims", k).string("name"),
                         parts[k].get<long long>());
    }
    rows.push_back({names.back(), ls.has("type") ? ls.string("type") : "",
                    cut.empty() ? "unsplit" : cut, split.devices, split.compute,
                    split.communication + split.redistribution});
    layers.push_back(split);
  }
  const sim::Program prog = sim::intra_op_program(layers, names, flops, devices);
  const sim::Result r = sim::simulate(prog);
  const double objective = top.number("objective");
  if (std::abs(total - objective) > 1e-6 * std::max(1.0, objective))
    top.fail("layer_splits",
             fmt::format("the layers' costs sum to {:.6g}, not the plan's objective {:.6g}", total,
                         objective));
  if (!a.schedule.empty())
    throw Error(ErrorKind::kUsage, "",
                "--schedule: an intra-operator plan runs its layers one after the other");
  if (!a.trace.empty()) io::write_chrome_trace(a.trace, r.timeline);
  const double step = objective / flops;
  if (!a.report.empty())
    io::write_text_file(a.report, report::intra_op_report(
                                      top.string("model"), devices, flops, objective, rows, r, "",
                                      {{"operator graph", "in the report of `plan --report`"}}));
  if (a.json) {
    std::cout << io::Json{{"model", top.string("model")},
                          {"schedule", "layer by layer"},
                          {"iteration_time_s", r.makespan_s},
                          {"analytic_iteration_time_s", step},
                          {"difference", r.makespan_s / step - 1},
                          {"events", r.timeline.events.size()}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: {} layers on {} devices, {} events simulated\n",
                           top.string("model"), splits.size(), devices, r.timeline.events.size())
            << fmt::format("step time: simulated {:.6g} s, the plan's {:.6g} s ({:+.2f}%)\n",
                           r.makespan_s, step, 100 * (r.makespan_s / step - 1));
  if (!a.trace.empty()) std::cout << "trace written to " << a.trace << "\n";
  return 0;
}

// A DAPPLE plan (`plan PROFILE.txt -o`): its stage figures are all the replay needs.
int run_dapple_plan(const SimulateArgs& a, const io::Json& doc) {
  io::JsonObject top(doc, a.plan, "");
  Plan plan;
  plan.microbatches = static_cast<int>(top.integer("microbatches", 1, 1 << 30));
  plan.objective = top.positive_number("objective");
  const io::Json& stages = top.array("stages");
  if (stages.empty()) top.fail("stages", "needs at least one stage");
  for (std::size_t i = 0; i < stages.size(); ++i) {
    io::JsonObject st = top.element("stages", i);
    Stage s;
    s.data_parallel = static_cast<int>(st.integer("data_parallel", 1, 1 << 20));
    s.compute_time = st.number("compute_time");
    s.communication_time = st.number("communication_time");
    plan.stages.push_back(s);
  }
  if (!a.schedule.empty() && a.schedule != "1f1b")
    throw Error(ErrorKind::kUsage, "",
                "--schedule: DAPPLE plans replay under its early-backward (1F1B) schedule");
  const sim::Result r = sim::simulate(sim::dapple_program(plan));
  if (!a.trace.empty()) io::write_chrome_trace(a.trace, r.timeline);
  if (!a.report.empty())
    io::write_text_file(a.report,
                        report::dapple_report(top.json().value("model", "model"), plan, r));
  const double difference = r.makespan_s / plan.objective - 1;
  if (a.json) {
    std::cout << io::Json{{"schedule", "1f1b"},
                          {"iteration_time_s", r.makespan_s},
                          {"analytic_iteration_time_s", plan.objective},
                          {"difference", difference},
                          {"bubble_fraction", r.bubble_fraction},
                          {"events", r.timeline.events.size()}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << fmt::format("DAPPLE plan: {} stage(s), {} micro-batches, {} events simulated\n",
                           plan.stages.size(), plan.microbatches, r.timeline.events.size())
            << fmt::format(
                   "iteration time: simulated {:.6g} s, DAPPLE's latency {:.6g} s ({:+.2f}%: "
                   "its warm-up is approximate and its all-reduce tail is not replayed); "
                   "bubble {:.1f}%\n",
                   r.makespan_s, plan.objective, 100 * difference, 100 * r.bubble_fraction);
  if (!a.trace.empty()) std::cout << "trace written to " << a.trace << "\n";
  return 0;
}

int run(const SimulateArgs& a) {
  {
    const io::Json doc = io::parse_json_file(a.plan);
    if (doc.is_object() && doc.contains("layer_splits")) return run_intra_op_plan(a, doc);
    if (doc.is_object() && doc.value("format", "") == "paraplan-plan" &&
        doc.value("cost_model", "") == "dapple")
      return run_dapple_plan(a, doc);
    if (doc.is_object() && doc.value("format", "") == "paraplan-plan")
      return run_pipeline_plan(a, doc);
  }
  const io::TransformerPlanFile f = io::read_transformer_plan(a.plan);
  AnalyticCostModel cost(f.model, f.cluster, f.calibration);
  AnalyticResult analytic;
  try {
    analytic = cost.evaluate(f.config);
  } catch (const RuleViolation& e) {  // a knob rule: the file, not the command line, is wrong
    throw e.in_file(a.plan + ": /config");
  }
  if (!analytic.fits)
    throw Error(ErrorKind::kInfeasible, a.plan + ": /config",
                fmt::format("the plan does not fit in memory: {} per device on the busiest stage, "
                            "{} available",
                            format_bytes(analytic.memory.peak_bytes),
                            format_bytes(cost.device_memory_bytes())));
  const sim::Schedule schedule =
      a.schedule.empty() ? sim::default_schedule(f.config) : sim::parse_schedule(a.schedule);
  const sim::TransformerSimulation s = sim::simulate_transformer(cost, f.config, schedule);
  if (!a.trace.empty()) io::write_chrome_trace(a.trace, s.result.timeline);
  if (!a.report.empty()) {
    LlmSearchSettings fs;  // the frontier of the plan's own setting
    fs.devices = f.config.devices();
    fs.global_batch = f.config.global_batch;
    fs.seq_len = f.config.seq_len;
    fs.top_k = 1;
    io::write_text_file(a.report,
                        report::transformer_report(cost, f.config, s, f.cluster.name, fs));
  }
  const auto& devices = s.result.timeline.devices;
  if (a.json) {
    io::Json per_device = io::Json::array();
    for (std::size_t d = 0; d < devices.size(); ++d)
      per_device.push_back({{"name", devices[d]},
                            {"busy_s", s.result.devices[d].busy_s},
                            {"peak_bytes", s.result.devices[d].peak_bytes}});
    io::Json j = {{"model", f.model.name},
                  {"schedule", sim::schedule_name(schedule)},
                  {"iteration_time_s", s.iteration_time_s},
                  {"analytic_iteration_time_s", s.analytic_time_s},
                  {"difference", s.difference},
                  {"bubble_fraction", s.result.bubble_fraction},
                  {"peak_bytes",
                   [&] {
                     double peak = 0;
                     for (const auto& d : s.result.devices) peak = std::max(peak, d.peak_bytes);
                     return peak;
                   }()},
                  {"analytic_peak_bytes", s.analytic_peak_bytes},
                  {"events", s.result.timeline.events.size()},
                  {"devices", per_device}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: {} schedule, {} stage(s) × {} micro-batches, {} events simulated\n",
                           f.model.name, sim::schedule_name(schedule), f.config.pp,
                           f.config.microbatches(), s.result.timeline.events.size())
            << fmt::format(
                   "iteration time: simulated {:.4f} s, analytic {:.4f} s ({:+.2f}%); "
                   "bubble {:.1f}% of the devices' time\n",
                   s.iteration_time_s, s.analytic_time_s, 100 * s.difference,
                   100 * s.result.bubble_fraction);
  for (std::size_t d = 0; d < devices.size(); ++d)
    std::cout << fmt::format("  {:<24} busy {:.4f} s   peak memory {}\n", devices[d],
                             s.result.devices[d].busy_s,
                             format_bytes(s.result.devices[d].peak_bytes));
  if (!a.trace.empty())
    std::cout << "trace written to " << a.trace << " (open in Perfetto or chrome://tracing)\n";
  return 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Replay one iteration of a plan written by `plan -o` (transformer plans; "
      "pipeline plans under Piper's cost model) in the discrete-event simulator");
  cmd->add_option("PLAN", a->plan, "Plan file written by `paraplan plan --model ... -o FILE`")
      ->required();
  cmd->add_option("--trace", a->trace,
                  "Write a Chrome trace (Perfetto, chrome://tracing) of the iteration");
  cmd->add_option(
      "--schedule", a->schedule,
      "gpipe, 1f1b or interleaved-1f1b (default: the plan's: interleaved when vpp > 1)");
  cmd->add_option(
      "--report", a->report,
      "Write a self-contained HTML report (summary, stages, timeline, memory, frontier)");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a, &exit_code] { exit_code = run(*a); });
}

}  // namespace paraplan::cli
