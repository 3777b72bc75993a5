// The plan job, one request and one result per planner: the pipeline planner under Piper's or
// DAPPLE's cost model, the intra-operator planner under PaSE's, and the transformer search
// under the analytic model. Every front end (the CLI, the Python module) calls these; they
// neither parse flags nor print. Each result carries the planner's `Plan` (or, for the
// transformer search, its ranked training configurations), optionally the simulated iteration
// of the best plan and its HTML report.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/inputs.h"
#include "cost/analytic.h"
#include "cost/dapple_cost.h"
#include "cost/pase_cost.h"
#include "cost/piper_cost.h"
#include "ir/error.h"
#include "ir/knobs.h"
#include "ir/model.h"
#include "ir/plan.h"
#include "ir/progress.h"
#include "search/intra_op.h"
#include "search/llm.h"
#include "search/pipeline.h"
#include "sim/pipeline_program.h"
#include "sim/simulator.h"
#include "sim/transformer_program.h"

namespace paraplan::api {

/// What to produce beside the plan: its simulated iteration (a timeline for a Chrome trace) and
/// the self-contained HTML report (which includes the simulation).
struct Products {
  bool simulation = false;
  bool report = false;
};

// --- the pipeline planner under Piper's cost model ----------------------------------------------

struct PipelinePlanRequest {
  Model model;
  PiperSettings settings;
  Products products;
  ProgressSink* progress = nullptr;
  /// The cluster to place the plan on (search/placement.h), by its network (links, or tiers as
  /// a graph). None, or one machine of identical links (where every placement prices the same):
  /// stages on devices 0, 1, 2, ... in order.
  std::optional<Cluster> cluster;
  std::string cluster_name;  ///< as the plan file and report name it
  /// The model's times were scaled by the ratio of peak FLOP/s (a GPU profile, or
  /// --model-device), not by the profile's measured matmul rate (how the output words it).
  bool scaled_by_peaks = false;
  bool rank_order = false;  ///< keep rank order on the cluster (priced, not searched)
  /// Coarsen the layer graph to this many super-nodes first (search/coarsen.h); 0: the exact
  /// search, falling back to 64 super-nodes when the graph is too large for it or the exact
  /// search passes `time_limit_s` (0: no limit).
  int coarsen = 0;
  double time_limit_s = kDefaultPlanTimeLimitS;
  /// What the plan minimises: the simulated iteration (search/pipeline_iteration.h), or Piper's
  /// steady state (the bottleneck stage's time per micro-batch; its published numbers).
  bool steady_state = false;
  int stages = 0;  ///< exactly this many stages (iteration objective only); 0: any
  /// Each stage's data-parallel width, first stage first (iteration objective only; its size is
  /// the stage count); empty: searched.
  std::vector<int> stage_widths;
};

struct PipelinePlanResult {
  Plan plan;  ///< plan.feasible is false when no plan fits the memory
  /// When nothing fits: the smallest memory per device any plan needs (whole bytes), found by
  /// the same search under the memory objective.
  std::optional<double> smallest_memory_per_device_bytes;
  std::optional<sim::PipelineSimulation> simulation;  ///< feasible plans, if asked
  std::string report_html;                            ///< feasible plans, if asked
  /// Placed plans: the simulated iteration (seconds) on the cluster's links, as placed and in
  /// rank order.
  std::optional<double> placed_simulated_s, rank_order_simulated_s;
  /// Mixed clusters (several device groups): what the plan is up against. A plan made as if
  /// every device were the model's (one group, factor 1) — its objective as planned and on this
  /// cluster (each stage at the slowest group its rank-order devices touch) —, and the best plan
  /// on the fastest group alone.
  struct MixedBaselines {
    double blind_planned = 0, blind_on_cluster = 0;
    std::string fastest_group;
    double fastest_alone = 0;
  };
  std::optional<MixedBaselines> mixed;
  /// When the graph was coarsened: super-nodes, the coarse optimum, layers refinement moved.
  struct Coarsening {
    int super_nodes = 0;
    double coarse_objective = 0, uncoarsened_objective = 0;
    int moves = 0;
    std::string reason;   ///< asked for, or why the exact search could not run
    int nodes_asked = 0;  ///< the super-nodes asked for (super_nodes: at most that many)
  };
  std::optional<Coarsening> coarsening;
  /// Under the iteration objective: the plan's simulated iteration (seconds; the profile's time
  /// unit), the steady-state optimum's, whether the search proved it, and its work.
  struct Iteration {
    double iteration_s = 0, steady_state_plan_iteration_s = 0;
    bool exact = true;
    std::uint64_t stage_prices = 0, plans_replayed = 0;
  };
  std::optional<Iteration> iteration;
  /// On a cluster of several machines (iteration objective, stages not fixed): the best plan of
  /// each stage count dividing the machine count was placed and simulated too; the flat model's
  /// choice (its stages and placed simulation) against which the answer was picked.
  struct NetworkChoice {
    int candidates = 0;  ///< plans placed besides the flat model's choice
    int flat_stages = 0;
    double flat_placed_simulated_s = 0;
  };
  std::optional<NetworkChoice> network_choice;
};

/// Piper's settings for a workload: its devices, memory and bandwidth unless given (0: not
/// given), its micro-batches unless `microbatches` > 0. On a cluster of several device types
/// (or when `model_device` names a device other than the cluster's), one device group per type
/// among the first K devices, each with its memory (unless given) and the time factor
/// peak(model_device) / peak(type): the model's times are taken as measured on `model_device`
/// (default: the first machine's device type). FieldError("model_device") for a name that is
/// neither in the cluster nor a known GPU (A100, H100, H200).
PiperSettings piper_settings(const Workload& workload, int devices, double memory_bytes,
                             double bandwidth_bytes_per_s, int microbatches,
                             const std::string& model_device = "");

PipelinePlanResult plan_pipeline(const PipelinePlanRequest& request);
/// Error(kInfeasible) saying that nothing fits in the request's memory and what would.
Error no_pipeline_plan(const PipelinePlanRequest& request, const PipelinePlanResult& result,
                       const std::string& source);

// --- the pipeline planner under DAPPLE's cost model ---------------------------------------------

struct DapplePlanRequest {
  Model model;  ///< a DAPPLE/PipeDream profile (every layer has a tp = 1 option)
  DappleSettings settings;
  std::string machines;  ///< the machines as the user wrote them (the report's summary)
  Products products;
};

struct DapplePlanResult {
  Plan plan;
  double data_parallel_speedup = 0;  ///< one device on the whole batch / data parallelism alone
  std::size_t states = 0;            ///< DAPPLE's preprocessing: antichain states
  bool states_linearised = false;
  std::optional<sim::Result> simulation;
  std::string report_html;
};

/// DAPPLE's settings: `machines` as MxD ("2x8") or devices per machine ("4,8,4"), at most 128
/// devices; the global batch (0: the profile's batch per device) and micro-batch (0: 1).
/// FieldError("machines" or "microbatch_size") for values the cost model cannot take.
DappleSettings dapple_settings(const Workload& workload, const std::string& machines,
                               int global_batch, int microbatch_size);

/// Error(kInput, `source`) for a layer without a tp = 1 option.
DapplePlanResult plan_dapple(const DapplePlanRequest& request, const std::string& source);

// --- the intra-operator planner under PaSE's cost model -----------------------------------------

struct IntraOpPlanRequest {
  Model model;  ///< an operator graph
  int batch = 0;
  PaseSettings settings;
  Products products;
  ProgressSink* progress = nullptr;
};

struct IntraOpPlanResult {
  Plan plan;
  MemoryBreakdown memory;  ///< per device (PaseCostModel::layer_memory summed over layers)
  IntraOpResult solve;     ///< the elimination's structure (induced width, largest table, work)
  std::optional<sim::Result> simulation;
  std::string report_html;
};

IntraOpPlanResult plan_intra_op(const IntraOpPlanRequest& request);

// --- the transformer search under the analytic model --------------------------------------------

struct TransformerPlanRequest {
  TransformerConfig model;
  Cluster cluster;
  std::string cluster_name;  ///< the preset or file, as reports and plan files name it
  Calibration calibration;
  LlmSearchSettings settings;
  int resimulate = 0;  ///< replay the first K plans in the simulator and rank by its time
  /// Only plans this engine runs (an export's or a launch's; ir/engine_rules.h) — besides the
  /// settings' own engine, the stack's, which search_settings keeps to.
  std::optional<Engine> engine;
  Products products;
};

/// When nothing fits: what would.
struct TransformerInfeasible {
  std::optional<LlmCandidate> leanest;  ///< on the devices asked: the least memory per device
  /// The fewest devices of the cluster's kind on which a plan fits, and that plan (the cluster
  /// preset grown; none for a cluster file, a fixed dp, or past 64 times the devices asked).
  int fewest_devices = 0;
  std::optional<LlmCandidate> at_fewest;
};

struct TransformerPlanResult {
  LlmSearchResult search;  ///< top: fastest first (re-ranked by the simulator, if asked)
  std::optional<TransformerInfeasible> infeasible;  ///< set when nothing fits (top is empty)
  /// The stack's time band (kTimeBand*) and how many of the top plans were within it of the
  /// fastest: ties, of which the leanest (the least peak memory) leads `top`; 1 = no tie.
  double time_band = 0;
  int ties = 1;
  bool leaner_chosen = false;  ///< the leanest tie is not the fastest plan
  std::vector<Plan> plans;     ///< the same top as Plans (llm_plan: stages, schedule, training)
  std::vector<double> simulated_s;  ///< per top plan: its simulated iteration, or -1
  std::optional<sim::TransformerSimulation> simulation;  ///< of the best plan, if asked
  std::string report_html;
};

/// When no configuration fits: `infeasible` set (top empty), with the leanest configuration and,
/// when `grow` gives the cluster on more devices (nullopt: it cannot), the fewest devices that fit.
TransformerPlanResult plan_transformer(
    const TransformerPlanRequest& request,
    const std::function<std::optional<Cluster>(int devices)>& grow = nullptr);

}  // namespace paraplan::api
