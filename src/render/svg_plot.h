// Small self-contained SVG charts (no scripts, no external resources): a scatter plot with
// series (the frontier), and horizontal bars (memory per device). The HTML report inlines them.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace paraplan::render {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (x, y), drawn as dots joined as a staircase
};

/// Axis titles carry their units. Deterministic text for the same input.
/// `marked`: one point ringed and labelled "chosen plan" (kept inside the axes' range).
std::string scatter_svg(const std::vector<PlotSeries>& series, const std::string& title,
                        const std::string& x_title, const std::string& y_title,
                        const std::optional<std::pair<double, double>>& marked = std::nullopt);

struct Bar {
  std::string label;
  double value = 0;
  double limit = 0;  ///< drawn as a mark when > 0 (e.g. device memory)
};
std::string bars_svg(const std::vector<Bar>& bars, const std::string& title,
                     const std::string& unit);

/// Escapes &, <, >, " for SVG/HTML text.
std::string xml_escape(const std::string& text);

}  // namespace paraplan::render
