// The HTML report of every planner's plan (`plan --report`, `simulate --report`): the planner's
// own figures, one simulated iteration as a timeline, memory per device and, where the cost model
// prices memory, the time–memory frontier; for intra-operator plans, each layer's sharding and the
// operator graph as a figure. Self-contained: inline SVG, nothing fetched.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cost/analytic.h"
#include "cost/piper_cost.h"
#include "ir/model.h"
#include "ir/plan.h"
#include "ir/topology.h"
#include "render/svg_plot.h"
#include "search/llm.h"
#include "search/llm_frontier.h"
#include "search/pipeline_frontier.h"
#include "sim/pipeline_program.h"
#include "sim/simulator.h"
#include "sim/transformer_program.h"

namespace paraplan::report {

using SummaryRows = std::vector<std::pair<std::string, std::string>>;  ///< label, value with units

/// Peak memory (GiB) against iteration time (s), one series per device count (most first).
std::vector<render::PlotSeries> frontier_series(const std::vector<LlmCandidate>& points);
std::string frontier_svg(const std::vector<LlmCandidate>& points, const std::string& title);

/// What a transformer plan's report shows beside the plan, when the caller has it: the plans the
/// search ranked after it (their deltas against the stack's time band) and how to run it.
struct TransformerReportExtras {
  std::vector<LlmCandidate> runners_up;
  double time_band = 0;  ///< the stack's measured time error (ties within it)
  std::string launch;    ///< the engine's launch, as `plan` prints it
};

/// A transformer plan, with the frontier the caller found on up to `frontier_devices` devices
/// (api/ runs the searches; the report only draws what it is given): the summary, each stage's
/// time and memory (analytic and simulated, and the analytic peak's parts), the runners-up, the
/// launch, the timeline, memory per device and the frontier with the plan marked on it.
std::string transformer_report(const AnalyticCostModel& cost, const TrainingConfig& config,
                               const sim::TransformerSimulation& simulation,
                               const std::string& cluster_label, const LlmFrontierResult& frontier,
                               int frontier_devices, const TransformerReportExtras& extras = {});

/// A pipeline planner's plan under Piper's cost model (as `PiperCostModel::evaluate` fills it).
/// With the topology it was placed on: its placement drawn on the network, links by load.
/// `frontier`: the time–memory frontier to plot (none on a cluster of several device types).
std::string pipeline_report(const Model& model, const Plan& plan, const PiperSettings& settings,
                            const sim::PipelineSimulation& simulation,
                            const PipelineFrontierResult* frontier, const SummaryRows& extra = {},
                            const Topology* topology = nullptr);

/// A DAPPLE plan from its stage figures; `title` names the model.
std::string dapple_report(const std::string& title, const Plan& plan, const sim::Result& simulation,
                          const SummaryRows& extra = {});

/// A mixed transformer plan (PlanKind::kMixedTransformer) on `cluster` (its device types name the
/// stages' and give their memory), with the simulation of sim::mixed_program.
std::string mixed_report(const std::string& model_name, const std::string& cluster_label,
                         const Cluster& cluster, const Plan& plan, const sim::Result& simulation);

/// One layer of an intra-operator plan as the report's table shows it.
struct IntraOpRow {
  std::string name, type, split;
  int devices = 1;
  double compute = 0, collectives = 0;  ///< FLOP-equivalents per device (collectives + re-layout)
};
/// An intra-operator plan; `graph_svg` (the operator graph, render::operator_graph_svg) may be
/// empty; `frontier`: the intra-op frontier's step time against memory per device, by devices used
/// (empty: beyond the frontier's limits, said in the notes).
std::string intra_op_report(const std::string& model_name, int devices, double flops_per_s,
                            double objective, const std::vector<IntraOpRow>& rows,
                            const sim::Result& simulation, const std::string& graph_svg,
                            const std::vector<render::PlotSeries>& frontier,
                            const SummaryRows& extra = {});
/// The rows of `plan` on `model` (its layers carry operators).
std::vector<IntraOpRow> intra_op_rows(const Model& model, const Plan& plan);

}  // namespace paraplan::report
