// The pipeline path of `paraplan plan`: a layer model or profile, Piper's or DAPPLE's cost model.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "api/inputs.h"
#include "api/plan.h"
#include "api/results_json.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "cli/plan_args.h"
#include "io/chrome_trace.h"
#include "io/native_json.h"
#include "ir/error.h"

namespace paraplan::cli {
namespace {

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::kUsage, "", message); }

// The plan on stdout (table or JSON) and, with -o, in its file.
void emit(const PlanArgs& args, const Plan& plan, const Model& model, const std::string& unit,
          const io::Json& json, const io::Json& file) {
  if (!args.output.empty()) io::write_text_file(args.output, file.dump(2) + "\n");
  if (args.json)
    std::cout << json.dump(2) << "\n";
  else
    std::cout << plan_table(plan, model, unit);
}

// Where each stage runs and, on a cluster's network, what the placement gains.
std::string placement_lines(const Plan& plan, const api::PipelinePlanResult& result,
                            const PiperSettings& settings) {
  std::string out = "devices:";
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const Stage& st = plan.stages[s];
    const std::string group =
        settings.device_groups.empty()
            ? ""
            : " " + settings.device_groups[static_cast<std::size_t>(st.device_type)].name;
    out += fmt::format("{} stage {}{} [{}]", s ? ";" : "", s, group, fmt::join(st.device_ids, " "));
  }
  out += "\n";
  if (result.mixed)
    out += fmt::format(
        "mixed devices: {:.9g} per micro-batch; planned as if all were the model's device: "
        "{:.9g} as planned, {:.9g} on this cluster ({:+.1f} % against this plan); {} alone: "
        "{:.9g} ({:+.1f} %)\n",
        plan.objective, result.mixed->blind_planned, result.mixed->blind_on_cluster,
        100 * (result.mixed->blind_on_cluster / plan.objective - 1), result.mixed->fastest_group,
        result.mixed->fastest_alone, 100 * (result.mixed->fastest_alone / plan.objective - 1));
  if (!plan.placement) return out;
  const PlacementFigures& p = *plan.placement;
  out += fmt::format(
      "placement on {}: {:.6g} s per micro-batch on its links (rank order {:.6g} s, {:+.1f} %); "
      "{}\n",
      p.cluster, p.cost_s, p.rank_order_cost_s, 100 * (p.cost_s / p.rank_order_cost_s - 1),
      p.exact ? "optimal"
              : fmt::format("within {:.1f} % of a lower bound",
                            100 * (p.cost_s / p.lower_bound_s - 1)));
  if (result.placed_simulated_s && result.rank_order_simulated_s)
    out += fmt::format("simulated iteration: {:.6g} s placed, {:.6g} s in rank order ({:+.1f} %)\n",
                       *result.placed_simulated_s, *result.rank_order_simulated_s,
                       100 * (*result.placed_simulated_s / *result.rank_order_simulated_s - 1));
  return out;
}

int run_piper(const PlanArgs& args, api::Workload& w) {
  api::PipelinePlanRequest request;
  request.settings = api::piper_settings(
      w, args.devices, args.memory.empty() ? 0 : bytes_flag("--memory", args.memory),
      args.bandwidth.empty() ? 0 : bandwidth_flag("--bandwidth", args.bandwidth), args.microbatches,
      args.model_device);
  request.model = w.model;
  request.products = {!args.trace.empty(), !args.report.empty()};
  request.progress = args.progress;
  request.cluster = w.cluster;
  request.cluster_name = args.cluster_file.empty() ? w.cluster.name : args.cluster_file;
  request.rank_order = args.placement == "rank-order";
  request.coarsen = args.coarsen;
  const api::PipelinePlanResult result = api::plan_pipeline(request);
  const io::Json json = api::pipeline_plan_json(request, result, false);
  if (result.plan.feasible) {
    emit(args, result.plan, w.model, "(time per micro-batch of the bottleneck stage)", json,
         api::pipeline_plan_json(request, result, true));
    if (!args.json) {
      if (result.coarsening)
        std::cout << fmt::format(
            "coarsened to {} super-nodes ({}): coarse optimum {:.9g}, uncoarsened {:.9g}, refined "
            "by {} moves\n",
            result.coarsening->super_nodes, result.coarsening->reason,
            result.coarsening->coarse_objective, result.coarsening->uncoarsened_objective,
            result.coarsening->moves);
      std::cout << placement_lines(result.plan, result, request.settings);
    }
    if (!args.trace.empty()) io::write_chrome_trace(args.trace, result.simulation->result.timeline);
    if (!args.report.empty()) io::write_text_file(args.report, result.report_html);
    return 0;
  }
  if (args.json || !args.output.empty()) emit(args, result.plan, w.model, "", json, json);
  throw api::no_pipeline_plan(request, result,
                              args.input.empty() ? "default workload" : args.input);
}

int run_dapple(const PlanArgs& args, api::Workload& w) {
  if (w.format == "piper" || w.format == "builtin")
    usage(
        "--cost-model dapple needs a DAPPLE/PipeDream profile (or a model converted from one) "
        "as input");
  refuse_other_flags(args.given, joined(kDappleFlags, kOutputFlags), "the dapple cost model");
  const std::string machines = args.machines.empty() ? "2x8" : args.machines;
  const DappleSettings settings =
      api::dapple_settings(w, machines, args.batch, args.microbatch_size);
  const api::DapplePlanRequest request{
      w.model, settings, machines, {!args.trace.empty(), !args.report.empty()}};
  const api::DapplePlanResult result = api::plan_dapple(request, args.input);
  const io::Json json = api::dapple_plan_json(request, result);
  emit(args, result.plan, w.model, "s per iteration (DAPPLE's estimate)", json, json);
  if (!args.trace.empty()) io::write_chrome_trace(args.trace, result.simulation->timeline);
  if (!args.report.empty()) io::write_text_file(args.report, result.report_html);
  if (!args.json)
    std::cout << fmt::format("data parallelism alone: speedup {:.12g}\n",
                             result.data_parallel_speedup);
  return 0;
}

}  // namespace

int run_pipeline_path(const PlanArgs& args) {
  if (args.cost_model != "auto" && args.cost_model != "piper" && args.cost_model != "dapple")
    usage("--cost-model must be piper or dapple (got \"" + args.cost_model + "\")");
  // The cost model follows the input (a profile: dapple) unless given; check the flags against
  // it before reading the input, so a wrong flag is named even when the input is bad too.
  refuse_other_flags(args.given, joined(joined(kPiperFlags, kDappleFlags), kOutputFlags),
                     "the pipeline planner");
  api::Workload w = api::load_workload({args.input, args.format, args.cluster_file,
                                        args.profile_batch, args.devices > 0 ? args.devices : 8});
  std::string cost_model = args.cost_model;
  if (cost_model == "auto") cost_model = w.format == "dapple" ? "dapple" : "piper";
  if (cost_model == "piper") {
    refuse_other_flags(args.given, joined(kPiperFlags, kOutputFlags), "the piper cost model");
    return run_piper(args, w);
  }
  return run_dapple(args, w);
}

}  // namespace paraplan::cli
