// Published training throughputs (docs/formats.md, "Published runs"; data/moe/): what was
// trained, on which cluster preset, with which knobs, and the throughput its source reports.
// validate/ prices each with the analytic model; none of them is used to fit a calibration.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/json_fields.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan::io {

struct PublishedRun {
  std::string place;   ///< file and JSON pointer of the entry, for messages
  std::string name;    ///< what ran, in a few words
  std::string source;  ///< who published it, where, and how the figure below was derived
  std::string url;
  std::string model_name;                  ///< a built-in transformer (zoo/llm_models), or
  std::optional<TransformerConfig> model;  ///< one read from the Hugging Face config given inline
  std::string cluster;                     ///< a cluster preset (zoo/cluster_presets)
  TrainingConfig config;
  double tokens_per_s_per_device = 0;  ///< the published throughput
};

/// Reads `"format": "paraplan-published-runs"`, version 1; Error(kInput) naming the field.
std::vector<PublishedRun> read_published_runs(const std::string& path);
std::vector<PublishedRun> published_runs_from_json(const Json& doc, const std::string& path);

}  // namespace paraplan::io
