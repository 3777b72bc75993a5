// The evaluate and frontier jobs as every front end asks for them: one request of named fields
// (the CLI's flags and the Python keywords both become it), the defaults, the dispatch and every
// product — the document `--json` prints, the answer in words, the engine export, the plot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/knobs.h"
#include "io/json_fields.h"
#include "ir/progress.h"

namespace paraplan::api {

/// What a job gives back; empty parts were not asked for.
struct JobOutcome {
  io::Json document;     ///< what `--json` prints and the Python call returns
  std::string words;     ///< the answer in words
  std::string exported;  ///< evaluate: the engine's configuration
  std::string svg;       ///< frontier: the plot
};

struct EvaluateOptions {
  std::string model;
  std::string cluster = std::string(kDefaultCluster);
  int devices = 0;  ///< 0: tp × cp × pp × dp
  std::int64_t batch = 0;
  TransformerKnobs knobs;
  std::string export_to;  ///< megatron | deepspeed
  bool words = false;
  /// The job as the user launches it (api::launch_job): format and file ("-": `from_text`).
  std::string from_format, from_file, from_text;
  bool explain = false;            ///< with a launch: what was read and ignored
  std::vector<std::string> given;  ///< the fields the user set, by name
};

/// One configuration priced by the analytic model (RuleViolation for one that breaks a rule).
JobOutcome evaluate_job(const EvaluateOptions& options);

struct FrontierOptions {
  std::string input;  ///< a layer model: the pipeline planner's frontier; ONNX: the intra-op one
  std::string format = "auto";
  std::string model;    ///< a transformer, or one of PaSE's operator graphs: its frontier
  std::string planner;  ///< pipeline, intra-op or llm; empty: by the input or model
  std::string cluster;  ///< empty: the input's (pipeline) or dgx-a100 (transformer)
  int devices = 0;      ///< the most devices; 0: the input's (pipeline) or 8 (transformer)
  std::string memory, bandwidth;
  int microbatches = 0;
  double memory_step = 0.01;  ///< pipeline: each next point at least this much leaner
  double time_limit_s = 30;   ///< pipeline
  std::int64_t batch = kDefaultGlobalBatch;  ///< transformer
  TransformerKnobs knobs;
  bool uniform_stages = false;
  // The intra-op frontier (PaSE's settings; plan's flags of the same names):
  std::string flops;  ///< peak compute per device; empty: 10TFLOP/s
  int min_block = 0;  ///< 0: the graph's
  bool powers_of_two = false, keep_all_flows = false;
  bool words = false, svg = false;
  std::vector<std::string> given;  ///< the fields the user set, by name
  ProgressSink* progress = nullptr;
};

/// Every non-dominated plan over (time, peak memory per device, devices used); NotApplicable for
/// fields the chosen frontier does not take.
JobOutcome frontier_job(const FrontierOptions& options);

/// What paraplan reads from a model (built-in, config.json or ONNX; operator graphs at `batch`,
/// 0: 128 or the file's): its document and, if asked, in words. FieldError("model") otherwise.
JobOutcome inspect_job(const std::string& model, int batch, bool words);

}  // namespace paraplan::api
