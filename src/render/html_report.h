// One self-contained HTML file (inline SVG and CSS, no scripts, nothing fetched): a plan's
// summary, its per-stage table, the pipeline timeline of a simulated iteration, memory per
// device and the time–memory frontier.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/timeline.h"
#include "render/svg_plot.h"

namespace paraplan::render {

struct ReportData {
  std::string title;
  std::vector<std::pair<std::string, std::string>> summary;  ///< label, value (units included)
  std::string stage_title = "Stages";
  std::vector<std::string> stage_header;
  std::vector<std::vector<std::string>> stage_rows;
  const Timeline* timeline = nullptr;  ///< optional
  std::vector<Bar> memory;             ///< per device, GiB, with the device's capacity
  std::vector<PlotSeries> frontier;    ///< optional
  std::string frontier_y_title = "iteration time (s)";
  std::string graph_svg;    ///< optional: the operator graph (render::operator_graph_svg)
  std::string network_svg;  ///< optional: the placement on the network (render::network_svg)
  std::string notes;        ///< a closing paragraph
  /// Tables after the stages' (the memory per stage, the runners-up), each with a note under it.
  struct Table {
    std::string title;
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::string note;
  };
  std::vector<Table> tables;
  /// The chosen plan's point on the frontier (x, y), marked and labelled "chosen plan".
  std::optional<std::pair<double, double>> frontier_chosen;
  std::string launch;  ///< optional: how to run the plan (a command line), shown as it is
};

std::string html_report(const ReportData& data);
/// The timeline alone: one row per device and stream, events coloured by phase.
std::string timeline_svg(const Timeline& timeline);

}  // namespace paraplan::render
