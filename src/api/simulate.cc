// The simulate job: read the plan file by what it says it is, rebuild its program, replay it.
#include "api/simulate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "api/frontier.h"
#include "api/knobs.h"
#include "cost/analytic.h"
#include "cost/analytic_mixed.h"
#include "cost/piper_cost.h"
#include "io/json_fields.h"
#include "io/mixed_plan_json.h"
#include "io/native_json.h"
#include "io/transformer_json.h"
#include "ir/error.h"
#include "ir/topology.h"
#include "ir/training_rules.h"
#include "ir/units.h"
#include "report/plan_report.h"
#include "search/llm_mixed.h"
#include "sim/intra_op_program.h"
#include "sim/pass_order.h"
#include "sim/pipeline_program.h"
#include "sim/transformer_program.h"

namespace paraplan::api {
namespace {

void only_schedule(const SimulateRequest& r, const char* allowed, const char* why) {
  if (!r.schedule.empty() && r.schedule != allowed) throw FieldError("schedule", why);
}

// A pipeline planner's plan under Piper's cost model as its file holds it: the model and
// settings embedded, the cluster it was placed on, the plan priced again (which refuses layers,
// options or degrees the model lacks, and a plan that does not fit).
struct PipelineReplay {
  Model model;
  PiperSettings settings;
  std::optional<Topology> topology;
  Plan plan;
};

PipelineReplay read_pipeline_plan(const SimulateRequest& r, const io::Json& doc) {
  const std::string& path = r.plan_path;
  io::JsonObject top(doc, path, "");
  if (!top.has("model_config") || !top.has("piper_settings"))
    top.fail("model_config",
             "a pipeline plan to replay needs the model and Piper's settings; write it "
             "with `paraplan plan INPUT --cost-model piper -o FILE`");
  PipelineReplay out;
  Model& model = out.model;
  model = io::model_from_json(top.field("model_config"), path + " (model_config)");
  const io::JsonObject ps = top.object("piper_settings");
  PiperSettings& settings = out.settings;
  settings.max_devices = static_cast<int>(ps.integer("max_devices", 1, 1 << 24));
  settings.memory_per_device_bytes = ps.positive_number("memory_per_device_bytes");
  settings.bandwidth_bytes_per_s = ps.positive_number("bandwidth_bytes_per_s");
  settings.microbatches = static_cast<int>(ps.integer("microbatches", 1, 1 << 30));
  if (ps.has("allreduce_bandwidth_bytes_per_s"))
    settings.allreduce_bandwidth_bytes_per_s =
        ps.positive_number("allreduce_bandwidth_bytes_per_s");
  if (ps.has("device_groups")) {
    const io::Json& groups = ps.array("device_groups");
    long long total = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const io::JsonObject g = ps.element("device_groups", i);
      g.only({"name", "devices", "memory_bytes", "time_factor"});
      settings.device_groups.push_back(
          {g.string("name"), static_cast<int>(g.integer("devices", 1, 1 << 24)),
           g.positive_number("memory_bytes"), g.positive_number("time_factor")});
      total += settings.device_groups.back().count;
    }
    if (total != settings.max_devices)
      ps.fail("device_groups", "the groups' devices must add up to max_devices");
  }
  io::Json plan_part = doc;  // the plan without what `plan` added beside it
  for (const char* extra :
       {"model_config", "piper_settings", "bandwidth_bytes_per_s", "max_devices",
        "memory_per_device_bytes", "smallest_memory_per_device_bytes", "cluster_config",
        "placed_simulated_s", "rank_order_simulated_s", "coarsening", "device_groups",
        "mixed_baselines", "compute_scaling", "search_objective", "iteration", "network_choice"})
    plan_part.erase(extra);
  // A placed plan replays on its cluster's links (the devices its stages name).
  std::optional<Topology>& topology = out.topology;
  if (top.has("cluster_config")) {
    const std::string where = path + " (cluster_config)";
    const Cluster cluster = io::cluster_from_json(top.field("cluster_config"), where);
    topology.emplace(cluster_topology(cluster, where));
  }
  const Plan read = io::plan_from_json(plan_part, model, path);
  PiperCostModel cost(model, settings);
  out.plan = cost.evaluate(read);  // refuses layers, options or degrees the model lacks
  if (!out.plan.feasible)
    throw Error(ErrorKind::kInfeasible, path,
                fmt::format("the plan does not fit in {} per device",
                            format_bytes(settings.memory_per_device_bytes)));
  return out;
}

// The schedule a pipeline plan runs under: 1f1b (each stage's in-flight count, the plan's own)
// or gpipe (every forward first); FieldError("schedule") otherwise.
Plan under_schedule(const SimulateRequest& r, Plan plan, int microbatches) {
  if (r.schedule.empty() || r.schedule == "1f1b") return plan;
  if (r.schedule != "gpipe")
    throw FieldError("schedule", " " + r.schedule + ": pipeline plans replay under 1f1b or gpipe");
  for (Stage& st : plan.stages) st.inflight_microbatches = microbatches / st.data_parallel;
  return plan;
}

SimulateResult pipeline_plan(const SimulateRequest& r, const io::Json& doc) {
  const PipelineReplay replay = read_pipeline_plan(r, doc);
  const Model& model = replay.model;
  const PiperSettings& settings = replay.settings;
  const std::optional<Topology>& topology = replay.topology;
  const Plan plan = under_schedule(r, replay.plan, settings.microbatches);
  const sim::PipelineSimulation s = sim::simulate_pipeline_plan(model, plan, settings.microbatches,
                                                                topology ? &*topology : nullptr);
  SimulateResult out;
  out.kind = PlanKind::kPipeline;
  out.model = model.name;
  out.schedule = r.schedule == "gpipe" ? "gpipe" : "1f1b";
  out.iteration_time_s = s.makespan_s;
  out.reference_s = s.bound_s;
  out.difference = s.difference;
  out.on_network = topology.has_value();
  out.stages = static_cast<int>(plan.stages.size());
  out.microbatches = settings.microbatches;
  if (r.report) {
    const auto frontier = report_frontier(model, settings, nullptr);
    out.report_html =
        report::pipeline_report(model, plan, settings, s, frontier ? &*frontier : nullptr, {},
                                topology ? &*topology : nullptr);
  }
  out.result = s.result;
  return out;
}

// An intra-operator plan: its layers run one after the other on all devices, each its sharded
// computation, then its collectives and the re-layout of its inputs (the plan carries every
// layer's costs, in FLOP-equivalents per device).
SimulateResult intra_op_plan(const SimulateRequest& r, const io::Json& doc) {
  io::JsonObject top(doc, r.plan_path, "");
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
  SimulateResult out;
  out.result = sim::simulate(sim::intra_op_program(layers, names, flops, devices));
  const double objective = top.number("objective");
  if (std::abs(total - objective) > 1e-6 * std::max(1.0, objective))
    top.fail("layer_splits",
             fmt::format("the layers' costs sum to {:.6g}, not the plan's objective {:.6g}", total,
                         objective));
  if (!r.schedule.empty())
    throw FieldError("schedule", ": an intra-operator plan runs its layers one after the other");
  out.kind = PlanKind::kIntraOp;
  out.model = top.string("model");
  out.schedule = "layer by layer";
  out.iteration_time_s = out.result.makespan_s;
  out.reference_s = objective / flops;
  out.difference = out.iteration_time_s / out.reference_s - 1;
  out.stages = 1;
  out.layers = splits.size();
  out.devices = devices;
  if (r.report)
    out.report_html =
        report::intra_op_report(out.model, devices, flops, objective, rows, out.result, "", {},
                                {{"operator graph", "in the report of `plan --report`"}});
  return out;
}

// A DAPPLE plan: its stage figures are all the replay needs.
SimulateResult dapple_plan(const SimulateRequest& r, const io::Json& doc) {
  io::JsonObject top(doc, r.plan_path, "");
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
  only_schedule(r, "1f1b", ": DAPPLE plans replay under its early-backward (1F1B) schedule");
  SimulateResult out;
  out.result = sim::simulate(sim::dapple_program(plan));
  out.kind = PlanKind::kDapple;
  out.model = top.json().value("model", "model");
  out.schedule = "1f1b";
  out.iteration_time_s = out.result.makespan_s;
  out.reference_s = plan.objective;
  out.difference = out.iteration_time_s / plan.objective - 1;
  out.stages = static_cast<int>(plan.stages.size());
  out.microbatches = plan.microbatches;
  if (r.report) out.report_html = report::dapple_report(out.model, plan, out.result);
  return out;
}

// A transformer plan under the analytic model.
SimulateResult transformer_plan(const SimulateRequest& r, const io::Json& doc) {
  io::TransformerPlanFile f = io::transformer_plan_from_json(doc, r.plan_path);
  if (!r.stack.empty()) {  // the same knobs on another engine: its kernels, its overlaps
    f.config.stack = stack(r.stack);
    StackChoices keep;
    keep.overlap_grad_reduce = f.config.overlap_grad_reduce;
    keep.bf16_gradient_reduction = f.config.bf16_gradient_reduction;
    apply_stack_defaults(f.config, keep);
  }
  AnalyticCostModel cost(f.model, f.cluster, f.calibration);
  AnalyticResult analytic;
  try {
    analytic = cost.evaluate(f.config);
  } catch (const RuleViolation& e) {  // a knob rule: the file, not the request, is wrong
    throw e.in_file(r.plan_path + ": /config");
  }
  if (!analytic.fits)
    throw Error(ErrorKind::kInfeasible, r.plan_path + ": /config",
                fmt::format("the plan does not fit in memory: {} per device on the busiest stage, "
                            "{} available",
                            format_bytes(analytic.memory.peak_bytes),
                            format_bytes(cost.device_memory_bytes())));
  const sim::Schedule schedule =
      r.schedule.empty() ? sim::default_schedule(f.config) : sim::parse_schedule(r.schedule);
  const sim::TransformerSimulation s = sim::simulate_transformer(cost, f.config, schedule);
  SimulateResult out;
  out.kind = PlanKind::kTransformer;
  out.model = f.model.name;
  out.schedule = sim::schedule_name(schedule);
  out.iteration_time_s = s.iteration_time_s;
  out.reference_s = s.analytic_time_s;
  out.difference = s.difference;
  out.stages = f.config.pp;
  out.microbatches = static_cast<int>(f.config.microbatches());
  out.analytic_peak_bytes = s.analytic_peak_bytes;
  if (r.report) {
    LlmSearchSettings fs;  // the frontier of the plan's own setting
    fs.devices = f.config.devices();
    fs.global_batch = f.config.global_batch;
    fs.seq_len = f.config.seq_len;
    out.report_html = report::transformer_report(cost, f.config, s, f.cluster.name,
                                                 report_frontier(cost, fs), fs.devices);
  }
  out.result = s.result;
  return out;
}

// A mixed transformer plan: priced again by the mixed analytic model (which checks its segments
// against the cluster's devices of each type), replayed as lockstep stages.
SimulateResult mixed_plan(const SimulateRequest& r, const io::Json& doc) {
  const io::MixedPlanFile f = io::mixed_plan_from_json(doc, r.plan_path);
  if (!r.stack.empty())
    throw FieldError("stack", ": the mixed analytic model prices Megatron-LM's stack only");
  only_schedule(r, "1f1b", ": a mixed pipeline replays under 1f1b");
  const MixedAnalyticModel model(f.model, f.cluster, f.calibrations, f.devices);
  MixedCandidate priced{f.config, {}};
  try {
    priced.result = model.evaluate(f.config);
  } catch (const RuleViolation& e) {
    throw e.in_file(r.plan_path + ": /config");
  } catch (const Error& e) {
    throw Error(ErrorKind::kInput, r.plan_path + ": /config", e.what());
  }
  if (!priced.result.fits)
    throw Error(ErrorKind::kInfeasible, r.plan_path + ": /config",
                "the plan does not fit in memory: a stage's peak exceeds its device type's memory");
  const Plan plan = mixed_plan(priced);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < plan.stages.size(); ++i)
    names.push_back(fmt::format(
        "stage {} ({} × {})", i,
        f.cluster.device_types[static_cast<std::size_t>(plan.stages[i].device_type)].name,
        plan.stages[i].devices()));
  SimulateResult out;
  out.result = sim::simulate(sim::mixed_program(plan, names));
  out.kind = PlanKind::kMixedTransformer;
  out.model = f.model.name;
  out.schedule = "1f1b";
  out.iteration_time_s = out.result.makespan_s;
  out.reference_s = plan.objective;
  out.difference = out.iteration_time_s / plan.objective - 1;
  out.stages = static_cast<int>(plan.stages.size());
  out.microbatches = plan.microbatches;
  out.analytic_peak_bytes = plan.as<MixedTrainingPlan>().memory.peak_bytes;
  if (r.report)
    out.report_html =
        report::mixed_report(f.model.name, f.cluster.name, f.cluster, plan, out.result);
  return out;
}

}  // namespace

SimulateResult simulate_document(const io::Json& doc, const SimulateRequest& request) {
  // The file says what it is: its format and, for paraplan plans, the planner and cost model.
  const std::string format = doc.is_object() ? doc.value("format", "") : "";
  if (format == "paraplan-plan") {
    if (!request.stack.empty())
      throw FieldError("stack",
                       ": a training stack applies to transformer plans (plan --model "
                       "... -o FILE)");
    if (io::plan_planner(doc) == "intra-op") return intra_op_plan(request, doc);
    if (doc.value("cost_model", "") == "dapple") return dapple_plan(request, doc);
    return pipeline_plan(request, doc);
  }
  if (format == "paraplan-mixed-transformer-plan") return mixed_plan(request, doc);
  return transformer_plan(request, doc);
}

SimulateResult simulate_plan(const SimulateRequest& request) {
  return simulate_document(io::parse_json_file(request.plan_path), request);
}

io::Json pipeline_schedule(const SimulateRequest& request) {
  const io::Json doc = io::parse_json_file(request.plan_path);
  if (!doc.is_object() || doc.value("format", "") != "paraplan-plan" ||
      io::plan_planner(doc) != "pipeline" || doc.value("cost_model", "") != "piper")
    throw Error(ErrorKind::kInput, request.plan_path,
                "not a pipeline plan under Piper's cost model (write one with `paraplan plan "
                "PROFILE.json -o PLAN.json`)");
  const PipelineReplay replay = read_pipeline_plan(request, doc);
  const int n = replay.settings.microbatches;
  const Plan plan = under_schedule(request, replay.plan, n);
  io::Json stages = io::Json::array();
  for (const Stage& st : plan.stages) {
    io::Json replicas = io::Json::array();
    for (int r = 0; r < st.data_parallel; ++r) {
      io::Json passes = io::Json::array();
      for (const sim::StagedPass& p :
           sim::replica_passes(n, st.data_parallel, r, st.inflight_microbatches))
        passes.push_back({p.forward ? "F" : "B", p.microbatch});
      replicas.push_back(passes);
    }
    stages.push_back({{"replicas", st.data_parallel}, {"passes", replicas}});
  }
  return {{"format", "paraplan-schedule"},
          {"microbatches", n},
          {"schedule", request.schedule.empty() ? "1f1b" : request.schedule},
          {"stages", stages},
          {"after_passes", {"all-reduce", "optimizer"}}};
}

}  // namespace paraplan::api
