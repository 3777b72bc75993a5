// The simulate job: read the plan file by what it says it is, rebuild its program, replay it.
#include "api/simulate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "api/frontier.h"
#include "api/knobs.h"
#include "api/plan_file.h"
#include "cost/analytic.h"
#include "cost/analytic_mixed.h"
#include "cost/piper_cost.h"
#include "io/json_fields.h"
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

// A pipeline plan priced again on its model (which refuses layers, options or degrees the model
// lacks, and a plan that does not fit), with the topology of the cluster it was placed on.
struct PricedPipeline {
  Plan plan;
  std::optional<Topology> topology;
};

PricedPipeline price_pipeline(const std::string& path, const Plan& read, const PipelineReplay& r) {
  PricedPipeline out;
  if (r.cluster) out.topology.emplace(cluster_topology(*r.cluster, path + " (cluster_config)"));
  PiperCostModel cost(r.model, r.settings);
  out.plan = cost.evaluate(read);
  if (!out.plan.feasible)
    throw Error(ErrorKind::kInfeasible, path,
                fmt::format("the plan does not fit in {} per device",
                            format_bytes(r.settings.memory_per_device_bytes)));
  return out;
}

// The schedule a pipeline plan runs under: 1f1b (each stage's in-flight count, the plan's own)
// or gpipe (every forward first); FieldError("schedule") otherwise.
Plan under_schedule(const SimulateRequest& r, Plan plan, int microbatches) {
  if (r.schedule.empty() || r.schedule == "1f1b") return plan;
  if (r.schedule != "gpipe")
    throw FieldError("schedule", " " + r.schedule + ": pipeline plans replay under 1f1b or gpipe");
  plan.schedule = Schedule::kGpipe;
  for (Stage& st : plan.stages) st.inflight_microbatches = microbatches / st.data_parallel;
  return plan;
}

// Each kind of plan replayed: one overload per kind (a kind without one does not compile).
struct Replayer {
  const SimulateRequest& r;
  const PlanFile& file;

  SimulateResult operator()(const PipelineReplay& replay) const {
    const PricedPipeline priced = price_pipeline(r.plan_path, file.plan, replay);
    const Model& model = replay.model;
    const PiperSettings& settings = replay.settings;
    const std::optional<Topology>& topology = priced.topology;
    const Plan plan = under_schedule(r, priced.plan, settings.microbatches);
    const sim::PipelineSimulation s = sim::simulate_pipeline_plan(
        model, plan, settings.microbatches, topology ? &*topology : nullptr);
    SimulateResult out = common(plan);
    out.iteration_time_s = s.makespan_s;
    out.reference_s = s.bound_s;
    out.difference = s.difference;
    out.on_network = topology.has_value();
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

  // DAPPLE's plan: its stage figures are all the replay needs.
  SimulateResult operator()(const DappleReplay&) const {
    only_schedule(r, "1f1b", ": DAPPLE plans replay under its early-backward (1F1B) schedule");
    const Plan& plan = file.plan;
    SimulateResult out = common(plan);
    out.result = sim::simulate(sim::dapple_program(plan));
    out.iteration_time_s = out.result.makespan_s;
    out.reference_s = plan.objective;
    out.difference = out.iteration_time_s / plan.objective - 1;
    if (r.report) out.report_html = report::dapple_report(out.model, plan, out.result);
    return out;
  }

  // An intra-operator plan: its layers run one after the other on all devices, each its sharded
  // computation, then its collectives and the re-layout of its inputs.
  SimulateResult operator()(const IntraOpReplay& replay) const {
    if (!r.schedule.empty())
      throw FieldError("schedule", ": an intra-operator plan runs its layers one after the other");
    const std::vector<LayerSplit>& layers = file.plan.as<IntraOpDetail>().layer_splits;
    SimulateResult out = common(file.plan);
    out.result = sim::simulate(
        sim::intra_op_program(layers, replay.layer_names, replay.flops_per_s, replay.devices));
    out.iteration_time_s = out.result.makespan_s;
    out.reference_s = file.plan.objective / replay.flops_per_s;
    out.difference = out.iteration_time_s / out.reference_s - 1;
    out.stages = 1;
    out.microbatches = 0;
    out.layers = layers.size();
    out.devices = replay.devices;
    if (r.report) {
      std::vector<report::IntraOpRow> rows;
      for (std::size_t i = 0; i < layers.size(); ++i)
        rows.push_back({replay.layer_names[i], replay.layer_types[i], replay.layer_cuts[i],
                        layers[i].devices, layers[i].compute,
                        layers[i].communication + layers[i].redistribution});
      out.report_html = report::intra_op_report(
          out.model, replay.devices, replay.flops_per_s, file.plan.objective, rows, out.result, "",
          {}, {{"operator graph", "in the report of `plan --report`"}});
    }
    return out;
  }

  // A transformer plan under the analytic model.
  SimulateResult operator()(const TransformerReplay& replay) const {
    TrainingConfig config = file.plan.as<TrainingPlan>().config;
    if (!r.stack.empty()) {  // the same knobs on another engine: its kernels, its overlaps
      config.stack = stack(r.stack);
      StackChoices keep;
      keep.overlap_grad_reduce = config.overlap_grad_reduce;
      keep.bf16_gradient_reduction = config.bf16_gradient_reduction;
      keep.optimizer_moments = config.optimizer_moments;
      keep.precision_aware_optimizer = config.precision_aware_optimizer;
      keep.moe_shared_expert_overlap = config.moe_shared_expert_overlap;
      apply_stack_defaults(config, keep);
    }
    AnalyticCostModel cost(replay.model, replay.cluster, replay.calibration);
    AnalyticResult analytic;
    try {
      analytic = cost.evaluate(config);
    } catch (const RuleViolation& e) {  // a knob rule: the file, not the request, is wrong
      throw e.in_file(r.plan_path + ": /config");
    }
    if (!analytic.fits)
      throw Error(ErrorKind::kInfeasible, r.plan_path + ": /config",
                  fmt::format("the plan does not fit in memory: {} per device on the busiest "
                              "stage, {} available",
                              format_bytes(analytic.memory.peak_bytes),
                              format_bytes(cost.device_memory_bytes())));
    const Schedule schedule = r.schedule.empty() ? file.plan.schedule : parse_schedule(r.schedule);
    const sim::TransformerSimulation s = sim::simulate_transformer(cost, config, schedule);
    SimulateResult out = common(file.plan);
    out.schedule = schedule;
    out.iteration_time_s = s.iteration_time_s;
    out.reference_s = s.analytic_time_s;
    out.difference = s.difference;
    out.stages = config.pp;
    out.microbatches = static_cast<int>(config.microbatches());
    out.analytic_peak_bytes = s.analytic_peak_bytes;
    out.device_memory_bytes = cost.device_memory_bytes();
    for (const auto& d : s.result.devices)
      if (d.peak_bytes > out.device_memory_bytes) out.fits = false;
    if (r.report) {
      LlmSearchSettings fs;  // the frontier of the plan's own setting
      fs.devices = config.devices();
      fs.global_batch = config.global_batch;
      fs.seq_len = config.seq_len;
      out.report_html = report::transformer_report(cost, config, s, replay.cluster.name,
                                                   report_frontier(cost, fs), fs.devices);
    }
    out.result = s.result;
    return out;
  }

  // A mixed transformer plan: priced again by the mixed analytic model (which checks its
  // segments against the cluster's devices of each type), replayed as lockstep stages.
  SimulateResult operator()(const MixedReplay& replay) const {
    if (!r.stack.empty())
      throw FieldError("stack", ": the mixed analytic model prices Megatron-LM's stack only");
    only_schedule(r, "1f1b", ": a mixed pipeline replays under 1f1b");
    const MixedConfig& config = file.plan.as<MixedTrainingPlan>().config;
    const MixedAnalyticModel model(replay.model, replay.cluster, replay.calibrations,
                                   replay.devices);
    MixedCandidate priced{config, {}};
    try {
      priced.result = model.evaluate(config);
    } catch (const RuleViolation& e) {
      throw e.in_file(r.plan_path + ": /config");
    } catch (const Error& e) {
      throw Error(ErrorKind::kInput, r.plan_path + ": /config", e.what());
    }
    if (!priced.result.fits)
      throw Error(ErrorKind::kInfeasible, r.plan_path + ": /config",
                  "the plan does not fit in memory: a stage's peak exceeds its device type's "
                  "memory");
    const Plan plan = mixed_plan(priced);
    std::vector<std::string> names;
    for (std::size_t i = 0; i < plan.stages.size(); ++i)
      names.push_back(fmt::format(
          "stage {} ({} × {})", i,
          replay.cluster.device_types[static_cast<std::size_t>(plan.stages[i].device_type)].name,
          plan.stages[i].devices()));
    SimulateResult out = common(plan);
    out.result = sim::simulate(sim::mixed_program(plan, names));
    out.iteration_time_s = out.result.makespan_s;
    out.reference_s = plan.objective;
    out.difference = out.iteration_time_s / plan.objective - 1;
    out.analytic_peak_bytes = plan.as<MixedTrainingPlan>().memory.peak_bytes;
    if (r.report)
      out.report_html = report::mixed_report(replay.model.name, replay.cluster.name, replay.cluster,
                                             plan, out.result);
    return out;
  }

  // What every kind reports alike: the kind, model, schedule, stages and micro-batches.
  SimulateResult common(const Plan& plan) const {
    SimulateResult out;
    out.kind = plan.kind();
    out.model = file.model;
    out.schedule = plan.schedule;
    out.stages = static_cast<int>(plan.stages.size());
    out.microbatches = plan.microbatches;
    return out;
  }
};

}  // namespace

SimulateResult simulate_file(const PlanFile& file, const SimulateRequest& request) {
  const PlanKind kind = file.plan.kind();
  if (!request.stack.empty() && kind != PlanKind::kTransformer &&
      kind != PlanKind::kMixedTransformer)
    throw FieldError("stack",
                     ": a training stack applies to transformer plans (plan --model ... -o FILE)");
  return std::visit(Replayer{request, file}, file.replay);
}

SimulateResult simulate_document(const io::Json& doc, const SimulateRequest& request) {
  return simulate_file(read_plan_file(doc, request.plan_path), request);
}

SimulateResult simulate_plan(const SimulateRequest& request) {
  return simulate_document(io::parse_json_file(request.plan_path), request);
}

io::Json pipeline_schedule(const SimulateRequest& request) {
  const PlanFile file = read_plan_file(request.plan_path);
  const auto* replay = std::get_if<PipelineReplay>(&file.replay);
  if (!replay)
    throw Error(ErrorKind::kInput, request.plan_path,
                std::string("not a pipeline plan under Piper's cost model but a ") +
                    file.plan.planner() + " plan under " + file.plan.cost_model() +
                    "'s (write one with `paraplan plan PROFILE.json -o PLAN.json`)");
  const int n = replay->settings.microbatches;
  const Plan plan =
      under_schedule(request, price_pipeline(request.plan_path, file.plan, *replay).plan, n);
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
  io::Json ranks = io::Json::array();
  for (const RankPlace& place : rank_layout(plan, request.plan_path))
    ranks.push_back({{"stage", place.stage},
                     {"replica", place.replica},
                     {"tensor_index", place.tensor_index},
                     {"device", place.device}});
  return {{"format", "paraplan-schedule"},
          {"microbatches", n},
          {"schedule", schedule_name(plan.schedule)},
          {"stages", stages},
          {"ranks", ranks},
          {"after_passes", {"all-reduce", "optimizer"}}};
}

}  // namespace paraplan::api
