#include "io/html_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace paraplan::io {
namespace {

const char* phase_colour(const std::string& phase) {
  static const std::map<std::string, const char*> colours = {
      {"forward", "#4e79a7"},      {"backward", "#59a14f"}, {"collectives", "#f28e2b"},
      {"send", "#9c755f"},         {"gradient sync", "#b07aa1"}, {"optimizer", "#e15759"}};
  auto it = colours.find(phase);
  return it == colours.end() ? "#bab0ac" : it->second;
}

}  // namespace

std::string timeline_svg(const Timeline& t) {
  double end = 0;
  for (const auto& e : t.events) end = std::max(end, e.end_s);
  if (!(end > 0)) end = 1;
  const double left = 190, right = 20, row = 16, top = 30;
  const double width = 1100, pw = width - left - right;
  const std::size_t rows = t.devices.size() * t.streams.size();
  const double height = top + row * static_cast<double>(rows) + 50;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, width, height);
  for (std::size_t d = 0; d < t.devices.size(); ++d)
    for (std::size_t s = 0; s < t.streams.size(); ++s) {
      const double y = top + row * static_cast<double>(d * t.streams.size() + s);
      svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}{}</text>",
                         left - 6, y + 11, s == 0 ? xml_escape(t.devices[d]) + " · " : "",
                         xml_escape(t.streams[s]));
      svg += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", left, y,
                         pw, row - 2, s == 0 ? "#f4f4f4" : "#fafafa");
    }
  for (const auto& e : t.events) {
    const double y = top + row * static_cast<double>(static_cast<std::size_t>(e.device) * t.streams.size() +
                                                     static_cast<std::size_t>(e.stream));
    const double x = left + e.start_s / end * pw;
    const double w = std::max(0.5, (e.end_s - e.start_s) / end * pw);
    svg += fmt::format("<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\">"
                       "<title>{} ({:.4f} – {:.4f} s)</title></rect>\n",
                       x, y, w, row - 2, phase_colour(e.phase), xml_escape(e.name), e.start_s, e.end_s);
  }
  const double axis = top + row * static_cast<double>(rows) + 14;
  for (int k = 0; k <= 10; ++k) {
    const double x = left + pw * k / 10.0;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3g}</text>", x, axis,
                       end * k / 10.0);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">time (s)</text>\n",
                     left + pw / 2, axis + 16);
  double lx = left;
  for (const char* phase : {"forward", "backward", "collectives", "send", "gradient sync", "optimizer"}) {
    svg += fmt::format("<rect x=\"{:.0f}\" y=\"8\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.0f}\" y=\"18\">{}</text>",
                       lx, phase_colour(phase), lx + 16, phase);
    lx += 120;
  }
  svg += "</svg>\n";
  return svg;
}

std::string html_report(const ReportData& d) {
  std::string h = fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<style>
body {{ font-family: sans-serif; margin: 24px; color: #222; background: #fff; }}
h1 {{ font-size: 22px; }} h2 {{ font-size: 17px; margin-top: 28px; }}
table {{ border-collapse: collapse; font-size: 13px; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; text-align: right; }}
th {{ background: #eef2f7; }} td:first-child, th:first-child {{ text-align: left; }}
.summary td {{ text-align: left; }}
</style></head><body>
<h1>{0}</h1>
)", xml_escape(d.title));
  h += "<h2>Plan</h2>\n<table class=\"summary\">\n";
  for (const auto& [k, v] : d.summary)
    h += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", xml_escape(k), xml_escape(v));
  h += "</table>\n";
  if (!d.stage_rows.empty()) {
    h += "<h2>Stages</h2>\n<table>\n<tr>";
    for (const auto& c : d.stage_header) h += "<th>" + xml_escape(c) + "</th>";
    h += "</tr>\n";
    for (const auto& row : d.stage_rows) {
      h += "<tr>";
      for (const auto& c : row) h += "<td>" + xml_escape(c) + "</td>";
      h += "</tr>\n";
    }
    h += "</table>\n";
  }
  if (d.timeline) h += "<h2>Pipeline timeline (simulated iteration)</h2>\n" + timeline_svg(*d.timeline);
  if (!d.memory.empty())
    h += "<h2>Memory per device</h2>\n" + bars_svg(d.memory, "Peak memory per device (dashed: capacity)", "GiB");
  if (!d.frontier.empty())
    h += "<h2>Time–memory frontier</h2>\n" +
         scatter_svg(d.frontier, "Non-dominated plans", "peak memory per device (GiB)", "iteration time (s)");
  if (!d.notes.empty()) h += "<p>" + xml_escape(d.notes) + "</p>\n";
  h += "</body></html>\n";
  return h;
}

}  // namespace paraplan::io
