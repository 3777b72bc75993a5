// The plan job as every front end asks for it: one request of named fields (what `paraplan
// plan`'s flags and `paraplan.plan()`'s keywords both become), one dispatch to the planner the
// input calls for, its defaults, and every product of the answer — the document `--json` prints,
// the plan file, the answer in words, the engine export, the report, the trace, the graph. The
// CLI and the Python module only fill the request and hand back what comes out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/knobs.h"
#include "io/json_fields.h"
#include "ir/error.h"
#include "ir/progress.h"
#include "ir/timeline.h"

namespace paraplan::api {

/// A plan request by field (0, empty: not given; the planner's default applies). Field names are
/// the Python keywords; the CLI's flags are the same with dashes ("cost_model": --cost-model,
/// "input": INPUT).
struct PlanOptions {
  std::string input;                ///< a layer model, profile or ONNX file
  std::string format = "auto";      ///< auto | piper | dapple | native | onnx
  std::string cost_model = "auto";  ///< auto | piper | dapple | pase
  std::string planner = "auto";     ///< auto | pipeline | intra-op | llm
  std::string model;                ///< a transformer (built-in or config.json) or operator graph
  std::string cluster;              ///< a preset or a cluster file
  int devices = 0;
  std::string memory;     ///< memory per device with its unit ("16GiB") or bytes
  std::string bandwidth;  ///< with its unit ("25GB/s")
  int microbatches = 0;
  std::string machines;              ///< DAPPLE: "2x8" or "4,8,4"
  std::string placement = "search";  ///< search | rank-order
  /// The pipeline planner's objective: iteration (the simulated iteration) | steady-state
  /// (Piper's: the bottleneck stage's time per micro-batch).
  std::string objective = "iteration";
  /// Each stage's data-parallel width, first stage first ("2,1,1"; the pipeline planner under
  /// the iteration objective; its length is the stage count); empty: searched.
  std::string stage_dp;
  int coarsen = 0;
  std::string model_device;
  std::int64_t batch = 0;
  int microbatch_size = 0, profile_batch = 0;
  // The intra-op planner.
  std::string flops;  ///< with its unit ("312TFLOP/s")
  int min_block = 0;
  bool keep_all_flows = false, powers_of_two = false, all_devices = false;
  // The transformer planner.
  TransformerKnobs knobs;
  bool uniform_stages = false;
  int top = 5;
  int resimulate = 0;
  double time_limit_s = -1;  ///< < 0: not given (kDefaultPlanTimeLimitS); 0: no limit
  std::string export_to;     ///< megatron | deepspeed
  /// The question before buying: the fewest devices of the preset's kind whose best plan trains
  /// `train_tokens` tokens ("15T", "300B" or a count) within `days`; the cost at
  /// `gpu_hour_price` per device-hour (0: not given).
  std::string train_tokens;
  double days = 0, gpu_hour_price = 0;
  /// The job as the user launches it (api::launch_job): the best plan with the launch's sequence
  /// length, global batch, precision and devices, and the diff; format and file ("-":
  /// `from_text`).
  std::string from_format, from_file, from_text;
  bool explain = false;
  // What to produce beside the document.
  bool words = false;              ///< the answer in words (the CLI's table)
  bool plan_file = false;          ///< the plan file `simulate` replays (-o)
  bool trace = false;              ///< the simulated iteration's timeline
  bool report = false;             ///< the HTML report
  bool dot = false;                ///< the intra-op plan's graph for Graphviz
  std::vector<std::string> given;  ///< the fields the user set, by name
  ProgressSink* progress = nullptr;
};

/// The field names of PlanOptions that each planner takes (others given are refused by name).
extern const std::vector<std::string> kTransformerPlanFields, kPiperPlanFields, kDapplePlanFields,
    kIntraOpPlanFields, kKnobFields;

struct PlanOutcome {
  io::Json document;     ///< what `--json` prints and paraplan.plan() returns
  io::Json file;         ///< the plan file (plan_file)
  std::string words;     ///< the answer in words (words)
  std::string exported;  ///< the engine's configuration (export_to)
  std::string report_html, dot;
  std::optional<Timeline> timeline;  ///< trace
  /// Nothing fits: the front end emits the document if asked, then raises this.
  std::optional<Error> failure;
};

/// NotApplicable naming every field of `given` that `takes` does not hold ("WHAT takes ...",
/// listing `takes` once each, in order). Every job refuses with it.
void refuse_fields(const std::vector<std::string>& given, const std::vector<std::string>& takes,
                   const std::string& what);

/// Plans as the request asks. Errors: FieldError naming the field; NotApplicable for fields the
/// chosen planner does not take; the planners' own.
PlanOutcome plan(const PlanOptions& options);

}  // namespace paraplan::api
