// The evaluate and frontier jobs: defaults, dispatch, documents, words, plots.
#include "api/jobs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <utility>

#include "api/evaluate.h"
#include "api/frontier.h"
#include "api/inputs.h"
#include "api/launch.h"
#include "api/plan.h"
#include "api/plan_job.h"
#include "api/plan_text.h"
#include "api/results_json.h"
#include "io/transformer_json.h"
#include "ir/units.h"
#include "render/svg_plot.h"
#include "report/plan_report.h"
#include "zoo/pase_graphs.h"

namespace paraplan::api {
namespace {

const std::vector<std::string> kPipelineFrontierFields = {
    "input",       "format",     "memory",  "bandwidth", "microbatches",
    "memory_step", "time_limit", "cluster", "devices",   "svg"};
const std::vector<std::string> kTransformerFrontierFields = {
    "model", "cluster", "devices", "batch", "uniform_stages", "memory", "svg"};

JobOutcome pipeline_frontier_job(const FrontierOptions& o) {
  refuse_fields(o.given, kPipelineFrontierFields, "the pipeline planner's frontier (an input)");
  const Workload w =
      load_workload({o.input, o.format, o.cluster, 0, o.devices > 0 ? o.devices : 8});
  const PiperSettings settings = piper_settings(
      w, o.devices, o.memory.empty() ? 0 : bytes_value("memory", o.memory),
      o.bandwidth.empty() ? 0 : bandwidth_value("bandwidth", o.bandwidth), o.microbatches);
  PipelineFrontierRequest request{w.model, settings, {}};
  request.options.memory_step = o.memory_step;
  request.options.time_limit_s = o.time_limit_s;
  request.options.progress = o.progress;
  const PipelineFrontierPlan found =
      pipeline_frontier(request, o.input.empty() ? "default workload" : o.input);
  const PipelineFrontierResult& f = found.frontier;
  JobOutcome out;
  out.document = pipeline_frontier_json(request, found);
  if (o.svg) {
    std::map<int, render::PlotSeries> by_devices;
    for (const auto& p : f.points) {
      auto& series = by_devices[p.objectives.devices];
      series.name = fmt::format("{} devices", p.objectives.devices);
      series.points.emplace_back(p.objectives.peak_bytes / 1073741824.0, p.objectives.time_s);
    }
    std::vector<render::PlotSeries> series;
    for (auto it = by_devices.rbegin(); it != by_devices.rend(); ++it) series.push_back(it->second);
    out.svg =
        render::scatter_svg(series, w.model.name + ": time against memory",
                            "peak memory per device (GiB)", "time per sample (Piper's objective)");
  }
  if (!o.words) return out;
  out.words = fmt::format(
      "{}: {} non-dominated plans over (Piper's time per sample, peak memory per device, "
      "devices) on up to {} devices; {} planner runs in {:.3f} s{}\n",
      w.model.name, f.points.size(), settings.max_devices, f.solves, found.seconds,
      f.truncated ? " (truncated: time or point limit)" : "");
  out.words +=
      fmt::format("{:>16} {:>12} {:>7} {:>7}\n", "objective", "memory", "devices", "stages");
  for (const auto& p : f.points)
    out.words += fmt::format("{:>16.9g} {:>12} {:>7} {:>7}\n", p.objectives.time_s,
                             format_bytes(p.objectives.peak_bytes), p.objectives.devices,
                             p.plan.stages.size());
  return out;
}

const std::vector<std::string> kIntraOpFrontierFields = {
    "input", "format",    "model",     "planner",       "devices",        "batch", "memory",
    "flops", "bandwidth", "min_block", "powers_of_two", "keep_all_flows", "svg",   "memory_step"};

JobOutcome intra_op_frontier_job(const FrontierOptions& o) {
  refuse_fields(o.given, kIntraOpFrontierFields, "the intra-op frontier (operator graphs)");
  const bool batch_given = std::find(o.given.begin(), o.given.end(), "batch") != o.given.end();
  OperatorGraph g = requested_operator_graph(o.model, o.input, o.format,
                                             batch_given ? static_cast<int>(o.batch) : 0,
                                             "the intra-op frontier");
  IntraOpFrontierRequest r;
  PaseSettings& s = r.settings;
  s = pase_settings(o.devices, o.flops, o.bandwidth, o.min_block, g);
  s.keep_all_flows = o.keep_all_flows;
  s.powers_of_two = o.powers_of_two;
  r.memory_limit_bytes = o.memory.empty() ? 0 : bytes_value("memory", o.memory);
  r.options.memory_step = o.memory_step;
  r.model = std::move(g.model);
  r.batch = g.batch;
  const IntraOpFrontierPlan f = intra_op_frontier(r, o.model.empty() ? o.input : o.model);
  JobOutcome out;
  out.document = intra_op_frontier_json(r, f);
  if (o.svg)
    out.svg = render::scatter_svg(intra_op_frontier_series(f),
                                  r.model.name + ": step time against memory (intra-op)",
                                  "memory per device (GiB)", "step time (s)");
  if (!o.words) return out;
  out.words = fmt::format(
      "{} (batch {}): {} non-dominated shardings over (step time, memory per device, devices) on "
      "up to {} devices; {}, {} eliminations in {:.3f} s\n",
      r.model.name, r.batch, f.plans.size(), s.devices,
      o.memory_step > 0 ? fmt::format("memory step {:g}", o.memory_step) : "exact",
      f.frontier.solves, f.seconds);
  out.words += fmt::format("{:>14} {:>12} {:>7}  {}\n", "step time s", "memory", "devices",
                           "layers split beyond the batch");
  for (std::size_t i = 0; i < f.plans.size(); ++i) {
    int beyond_batch = 0;
    const auto& splits = f.plans[i].as<IntraOpDetail>().layer_splits;
    for (const LayerSplit& ls : splits)
      for (std::size_t d = 1; d < ls.split.size(); ++d)
        if (ls.split[d] > 1) {
          ++beyond_batch;
          break;
        }
    out.words += fmt::format("{:>14.6g} {:>12} {:>7}  {} of {}\n",
                             f.plans[i].as<IntraOpDetail>().step_time_s,
                             format_bytes(f.memory[i].peak_bytes), f.frontier.points[i].devices,
                             beyond_batch, splits.size());
  }
  return out;
}

JobOutcome transformer_frontier_job(const FrontierOptions& o) {
  if (!o.input.empty()) throw FieldError("model", ": give either it or an input, not both");
  std::vector<std::string> takes = kTransformerFrontierFields;
  takes.insert(takes.end(), kKnobFields.begin(), kKnobFields.end());
  refuse_fields(o.given, takes, "the transformer frontier (" + o.model + ")");
  const std::string cluster_name = o.cluster.empty() ? std::string(kDefaultCluster) : o.cluster;
  const int devices = o.devices > 0 ? o.devices : kDefaultDevices;
  const TransformerConfig model = load_transformer(o.model);
  Cluster cluster =
      one_device_type(load_cluster(cluster_name, devices), devices, "the transformer frontier");
  TransformerKnobs k = o.knobs;
  k.memory = o.memory;
  apply_memory_knobs(k, cluster);
  LlmSearchSettings s = search_settings(k, devices, o.batch, o.uniform_stages);
  s.progress = o.progress;
  const TransformerFrontierRequest request{model, cluster, load_calibration(k.calibration, cluster),
                                           s};
  const LlmFrontierResult f = transformer_frontier(request);
  JobOutcome out;
  out.document = transformer_frontier_json(request, cluster_name, f);
  const std::vector<DefaultTaken> defaults =
      defaults_taken(o.given, {{"cluster", cluster_name},
                               {"devices", std::to_string(devices)},
                               {"batch", std::to_string(s.global_batch)},
                               {"seq_len", std::to_string(s.seq_len)}});
  out.document["defaults"] = defaults_json(defaults);
  if (o.svg)
    out.svg = report::frontier_svg(f.points, fmt::format("{}: time against memory", model.name));
  if (!o.words) return out;
  out.words = fmt::format(
      "{} on up to {} × {}: {} non-dominated plans over (iteration time, peak memory per device, "
      "devices) from {} configurations in {:.3f} s\n",
      model.name, devices, cluster.device_types[0].name, f.points.size(), f.evaluated, f.seconds);
  out.words += defaults_words(defaults);
  out.words +=
      fmt::format("{:>12} {:>12} {:>7}  {}\n", "iteration s", "memory", "devices", "configuration");
  for (const auto& c : f.points) {
    const TrainingConfig& t = c.config;
    out.words += fmt::format(
        "{:>12.4f} {:>12} {:>7}  tp {} cp {} pp {} dp {} ep {} mb {} vpp {} recompute {}{} zero "
        "{}{}{}\n",
        c.result.iteration_time_s, format_bytes(c.result.memory.peak_bytes), t.devices(), t.tp,
        t.cp, t.pp, t.dp, t.ep, t.micro_batch, t.vpp, recompute_text(t),
        t.sequence_parallel ? " sp" : "", t.zero_stage,
        t.shard_group > 0 ? fmt::format(" (HSDP groups of {})", t.shard_group) : "",
        t.overlap_grad_reduce ? " overlap" : "");
  }
  return out;
}

}  // namespace

JobOutcome evaluate_job(const EvaluateOptions& o) {
  if (!o.from_format.empty()) {
    std::vector<std::string> given;  // the CLI's "from" is Python's from_format and from_file
    for (const std::string& field : o.given)
      if (field != "from_file") given.push_back(field == "from_format" ? "from" : field);
    return launch_job({o.from_format, o.from_file, o.from_text, o.model, o.cluster, o.devices,
                       o.knobs, o.explain, o.words, given, o.export_to, o.batch});
  }
  if (o.explain) throw FieldError("explain", ": it explains a launch configuration (--from)");
  const TransformerConfig model = load_transformer(o.model);
  TransformerKnobs knobs = o.knobs;  // an export prices the engine's stack unless told otherwise
  if (knobs.stack.empty() && !o.export_to.empty())
    knobs.stack = stack_text(engine_rules(export_engine(o.export_to)).stack);
  TrainingConfig t = training_config(knobs, o.devices, o.batch, &model);
  // The split the stack's engine runs when it splits the layers itself (Megatron-DeepSpeed).
  apply_engine_split(engine_rules(stack_engine(t.stack)), t, static_cast<int>(model.num_layers));
  // Unless asked for, the shared experts' overlap only where the export's engine carries it.
  if (!o.export_to.empty() && knobs.shared_expert_overlap < 0 &&
      !engine_rules(export_engine(o.export_to)).shared_expert_overlap)
    t.moe_shared_expert_overlap = false;
  // What the stack's engine (and the export's) does not run is refused before it is priced.
  for (const std::optional<Engine> e :
       {std::optional<Engine>(stack_engine(t.stack)),
        o.export_to.empty() ? std::nullopt : std::optional<Engine>(export_engine(o.export_to))})
    if (e)
      if (const auto v = rules::engine(engine_rules(*e), t, static_cast<int>(model.num_layers)))
        throw RuleViolation(*v);
  Cluster cluster =
      one_device_type(load_cluster(o.cluster, t.devices()), t.devices(), "paraplan evaluate");
  apply_memory_knobs(o.knobs, cluster);
  AnalyticResult r;
  try {
    r = evaluate({model, cluster, load_calibration(o.knobs.calibration, cluster), t});
  } catch (const RuleViolation& e) {  // a rule the default broke: say it was the default
    Violation v = e.violation();
    const std::string field(knob_spec(v.knob).keyword);
    if (std::find(o.given.begin(), o.given.end(), field) != o.given.end() ||
        (v.knob != Knob::kGlobalBatch && v.knob != Knob::kSeqLen && v.knob != Knob::kMicroBatch))
      throw;
    v.value += " (the default)";
    throw RuleViolation(v);
  }
  JobOutcome out;
  out.document = evaluate_json(t, r, model.name, o.cluster, cluster.device_types[0]);
  const std::vector<DefaultTaken> defaults =
      defaults_taken(o.given, {{"cluster", o.cluster},
                               {"batch", std::to_string(t.global_batch)},
                               {"seq_len", std::to_string(t.seq_len)},
                               {"micro_batch", std::to_string(t.micro_batch)},
                               {"recompute", recompute_text(t)},
                               {"zero", std::to_string(t.zero_stage)}});
  out.document["defaults"] = defaults_json(defaults);
  if (!o.export_to.empty()) {
    out.exported =
        export_plan(o.export_to, model, t, devices_per_node(cluster), cluster.device_types[0].name);
    out.document["export"] = out.exported;
  }
  if (o.words)
    out.words =
        evaluate_words(model, o.cluster, cluster.device_types[0], t, r) + defaults_words(defaults);
  return out;
}

JobOutcome frontier_job(const FrontierOptions& given) {
  if (FrontierOptions as_input = given; model_file_as_input(as_input))
    return frontier_job(as_input);
  const FrontierOptions& o = given;
  check_model_name(o.model);
  const bool operator_graph =
      o.format == "onnx" || ends_with(o.input, ".onnx") ||
      std::count(zoo::pase_graph_names().begin(), zoo::pase_graph_names().end(), o.model) > 0;
  if (o.planner == "intra-op" || (o.planner.empty() && operator_graph))
    return intra_op_frontier_job(o);
  if (!o.planner.empty() && o.planner != "pipeline" && o.planner != "llm")
    throw FieldError("planner", " must be pipeline, intra-op or llm (got \"" + o.planner + "\")");
  if (o.planner == "llm" && (o.model.empty() || !is_transformer_model(o.model)))
    throw FieldError("planner", " llm needs a transformer model (built-in or config.json)");
  if (o.planner == "pipeline" && o.input.empty() && !o.model.empty())
    throw FieldError("planner", " pipeline needs a layer model as the input");
  if (o.model.empty() || !is_transformer_model(o.model)) {
    if (!o.model.empty())
      throw FieldError("model",
                       ": the frontier takes a transformer here; give a layer model as "
                       "the input");
    return pipeline_frontier_job(o);
  }
  return transformer_frontier_job(o);
}

}  // namespace paraplan::api
