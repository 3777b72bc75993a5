#include "render/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace paraplan::render {
namespace {

constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

/// Round tick step for a range.
double tick_step(double range) {
  if (!(range > 0)) return 1;
  const double raw = range / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * magnitude) return m * magnitude;
  return 10 * magnitude;
}

/// A plot axis: linear with round ticks, or logarithmic (ticks at 1, 2, 5 × 10^k) when the values
/// are positive and span more than kLogSpan, so that points far apart in magnitude stay readable.
struct Axis {
  bool log = false;
  double lo = 0, hi = 1;
  std::vector<double> ticks;
  double fraction(double v) const {
    return log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
               : (v - lo) / (hi - lo);
  }
};

constexpr double kLogSpan = 20;

/// 10000 rather than 1e+04; round values rather than accumulated float noise.
std::string tick_label(double v) {
  const double a = std::abs(v);
  return a == 0 || (a >= 1e-3 && a < 1e7) ? fmt::format("{:.6g}", v) : fmt::format("{:.3g}", v);
}

Axis make_axis(double lo, double hi) {
  Axis a;
  if (lo > 0 && hi / lo > kLogSpan) {
    a.log = true;
    a.lo = std::pow(10.0, std::floor(std::log10(lo)));
    a.hi = std::pow(10.0, std::ceil(std::log10(hi)));
    const bool many_decades = a.hi / a.lo > 1e3;
    for (double decade = a.lo; decade <= a.hi * 1.0001; decade *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if ((m == 1.0 || !many_decades) && decade * m <= a.hi * 1.0001)
          a.ticks.push_back(decade * m);
    return a;
  }
  const double step = tick_step(hi - lo > 0 ? hi - lo : std::max(1e-9, std::abs(hi)));
  a.lo = std::floor(lo / step) * step;
  a.hi = std::ceil(hi / step) * step + (hi == lo ? step : 0);
  if (a.hi <= a.lo) a.hi = a.lo + step;
  for (double v = a.lo; v <= a.hi + step / 2; v += step) a.ticks.push_back(v);
  return a;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string scatter_svg(const std::vector<PlotSeries>& series, const std::string& title,
                        const std::string& x_title, const std::string& y_title,
                        const std::optional<std::pair<double, double>>& marked) {
  const double width = 640, height = 400, left = 70, right = 160, top = 40, bottom = 50;
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  auto extend = [&](double x, double y) {
    x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  };
  for (const auto& s : series)
    for (auto [x, y] : s.points) extend(x, y);
  if (marked) extend(marked->first, marked->second);
  if (x0 > x1) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  const Axis xa = make_axis(x0, x1), ya = make_axis(y0, y1);
  const double pw = width - left - right, ph = height - top - bottom;
  auto px = [&](double x) { return left + xa.fraction(x) * pw; };
  auto py = [&](double y) { return top + ph - ya.fraction(y) * ph; };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
      width, height, width, height, left, xml_escape(title));
  for (double x : xa.ticks)
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px(x), top, top + ph, top + ph + 16, tick_label(x));
  for (double y : ya.ticks)
    svg += fmt::format(
        "<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        py(y), left, left + pw, left - 6, py(y) + 4, tick_label(y));
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", left,
      top, pw, ph);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2,
                     height - 10, xml_escape(xa.log ? x_title + ", log scale" : x_title));
  svg += fmt::format(
      "<text transform=\"translate(16,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      top + ph / 2, xml_escape(ya.log ? y_title + ", log scale" : y_title));
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColours[i % std::size(kColours)];
    auto pts = series[i].points;
    std::sort(pts.begin(), pts.end());
    std::string path;
    for (std::size_t k = 0; k < pts.size(); ++k) {
      if (k == 0)
        path += fmt::format("M{:.1f},{:.1f}", px(pts[k].first), py(pts[k].second));
      else
        path += fmt::format(" H{:.1f} V{:.1f}", px(pts[k].first), py(pts[k].second));
    }
    if (pts.size() > 1)
      svg += fmt::format(
          "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" opacity=\"0.6\"/>\n",
          path, colour);
    for (auto [x, y] : pts)
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{:.4g}, "
          "{:.4g}</title></circle>\n",
          px(x), py(y), colour, x, y);
    svg += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
        left + pw + 16, top + 10 + 18 * static_cast<double>(i), colour, left + pw + 26,
        top + 14 + 18 * static_cast<double>(i), xml_escape(series[i].name));
  }
  if (marked) {
    const double mx = px(marked->first), my = py(marked->second);
    const double legend_y = top + 14 + 18 * static_cast<double>(series.size());
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"9\" fill=\"none\" stroke=\"#000\" "
        "stroke-width=\"2\"><title>chosen plan: {:.4g}, {:.4g}</title></circle>\n"
        "<circle cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"none\" stroke=\"#000\" stroke-width=\"2\"/>"
        "<text x=\"{}\" y=\"{}\">chosen plan</text>\n",
        mx, my, marked->first, marked->second, left + pw + 16, legend_y - 4, left + pw + 26,
        legend_y);
  }
  svg += "</svg>\n";
  return svg;
}

std::string bars_svg(const std::vector<Bar>& bars, const std::string& title,
                     const std::string& unit) {
  const double width = 640, left = 170, right = 90, row = 22, top = 36;
  const double height = top + row * static_cast<double>(bars.size()) + 20;
  double max = 0;
  for (const auto& b : bars) max = std::max({max, b.value, b.limit});
  if (!(max > 0)) max = 1;
  const double pw = width - left - right;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n"
      "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
      width, height, width, height, xml_escape(title));
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = top + row * static_cast<double>(i);
    const Bar& b = bars[i];
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>"
        "<rect x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{:.3g} {}</text>\n",
        left - 6, y + 14, xml_escape(b.label), left, y + 3, b.value / max * pw, row - 6,
        b.limit > 0 && b.value > b.limit ? "#d62728" : "#1f77b4",
        left + std::max(b.value, b.limit) / max * pw + 4,  // past the capacity line, never on it
        y + 14, b.value, xml_escape(unit));
    if (b.limit > 0)
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\" "
          "stroke-dasharray=\"3,2\"/>\n",
          left + b.limit / max * pw, y + 1, y + row - 1);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace paraplan::render
