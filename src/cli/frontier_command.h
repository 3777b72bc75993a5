// `paraplan frontier`: every non-dominated transformer plan over (iteration time, peak memory
// per device, devices used), as a table, JSON and an SVG plot.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/transformer_common.h"
#include "io/svg_plot.h"
#include "search/llm.h"

namespace paraplan::cli {

void add_frontier_command(CLI::App& app, int& exit_code);

struct FrontierRun {
  std::vector<LlmCandidate> points;  ///< non-dominated, fastest first
  std::int64_t evaluated = 0;
  double seconds = 0;
};
/// The frontier over device counts devices, devices/2, ... (while the knobs allow them).
FrontierRun llm_frontier(const AnalyticCostModel& cost, const LlmSearchSettings& settings);
/// Peak memory (GiB) against iteration time (s), one series per device count (most first).
std::vector<io::PlotSeries> frontier_series(const std::vector<LlmCandidate>& points);
/// The SVG plot of those series.
std::string frontier_svg(const std::vector<LlmCandidate>& points, const std::string& title);

}  // namespace paraplan::cli
