// The frontier job: every non-dominated plan over (time, peak memory per device, devices used),
// for a layer model under Piper's cost model (device budgets 1, 2, 4, ... up to the most given),
// for an operator graph under PaSE's (every device count a sharding uses) and for a transformer
// under the analytic model (device counts halving down to 1).
#pragma once

#include <optional>
#include <string>

#include "cost/pase_cost.h"
#include "cost/piper_cost.h"
#include "ir/model.h"
#include "ir/progress.h"
#include "render/svg_plot.h"
#include "search/intra_op_frontier.h"
#include "search/llm_frontier.h"
#include "search/pipeline_frontier.h"

namespace paraplan::api {

struct PipelineFrontierRequest {
  Model model;
  PiperSettings settings;  ///< max_devices is the largest budget, the memory the first limit
  PipelineFrontierOptions options;
};

struct PipelineFrontierPlan {
  PipelineFrontierResult frontier;
  double seconds = 0;  ///< wall time of the search
};

/// Error(kInfeasible, `source`) when no plan fits.
PipelineFrontierPlan pipeline_frontier(const PipelineFrontierRequest& request,
                                       const std::string& source);

struct TransformerFrontierRequest {
  TransformerConfig model;
  Cluster cluster;
  Calibration calibration;
  LlmSearchSettings settings;  ///< settings.devices: the most devices
};

/// Error(kInfeasible) when no configuration fits.
LlmFrontierResult transformer_frontier(const TransformerFrontierRequest& request);

struct IntraOpFrontierRequest {
  Model model;  ///< an operator graph
  int batch = 0;
  PaseSettings settings;          ///< devices: the most a layer may use
  double memory_limit_bytes = 0;  ///< 0: none; else points above it are left out
  IntraOpFrontierOptions options;
};

struct IntraOpFrontierPlan {
  IntraOpFrontierResult frontier;
  std::vector<Plan> plans;              ///< per point, its per-layer splits
  std::vector<MemoryBreakdown> memory;  ///< per point, per device (device 0, the fullest)
  double seconds = 0;
};

/// TensorOpt's frontier on an operator graph under PaSE's cost model and paraplan's memory model
/// (PaseCostModel::layer_memory): every sharding no other beats in (step time, memory per device,
/// devices used). Error(kInfeasible, `source`) when none fits the memory limit.
IntraOpFrontierPlan intra_op_frontier(const IntraOpFrontierRequest& request,
                                      const std::string& source);

/// The frontier's step time against memory per device (GiB), one series per device count, most
/// devices first: what `--svg` and the intra-op report plot.
std::vector<render::PlotSeries> intra_op_frontier_series(const IntraOpFrontierPlan& frontier);

/// What a report plots beside a pipeline plan: the frontier of its settings (device budget and
/// memory; 5 % memory steps, 20 s at most); none on a cluster of several device groups, whose
/// memories differ.
std::optional<PipelineFrontierResult> report_frontier(const Model& model,
                                                      const PiperSettings& settings,
                                                      ProgressSink* progress);
/// ... and beside a transformer plan: the frontier of its search (`settings`: its fixed knobs,
/// devices, batch), without a time limit.
LlmFrontierResult report_frontier(const AnalyticCostModel& cost, LlmSearchSettings settings);

}  // namespace paraplan::api
