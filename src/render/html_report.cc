#include "render/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace paraplan::render {
namespace {

const char* phase_colour(const std::string& phase) {
  static const std::map<std::string, const char*> colours = {
      {"forward", "#4e79a7"}, {"backward", "#59a14f"},      {"collectives", "#f28e2b"},
      {"send", "#9c755f"},    {"gradient sync", "#b07aa1"}, {"optimizer", "#e15759"}};
  auto it = colours.find(phase);
  return it == colours.end() ? "#bab0ac" : it->second;
}

constexpr std::size_t kMaxTimelineDevices = 48;

}  // namespace

std::string timeline_svg(const Timeline& t) {
  double end = 0;
  for (const auto& e : t.events) end = std::max(end, e.end_s);
  if (!(end > 0)) end = 1;
  const double left = 250, right = 20, row = 16, top = 30;
  const double width = 1100, pw = width - left - right;
  // Large plans: the first kMaxDevices devices are drawn, and a row's events of one phase that
  // lie within half a pixel of each other are drawn as one bar (the tooltip counts them).
  const std::size_t devices = std::min(t.devices.size(), kMaxTimelineDevices);
  const std::size_t rows = devices * t.streams.size();
  const double height =
      top + row * static_cast<double>(rows) + 50 + (devices < t.devices.size() ? 16 : 0);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      width, height, width, height);
  for (std::size_t d = 0; d < devices; ++d)
    for (std::size_t s = 0; s < t.streams.size(); ++s) {
      const double y = top + row * static_cast<double>(d * t.streams.size() + s);
      svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}{}</text>", left - 6,
                         y + 11, s == 0 ? xml_escape(t.devices[d]) + " · " : "",
                         xml_escape(t.streams[s]));
      svg += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
                         left, y, pw, row - 2, s == 0 ? "#f4f4f4" : "#fafafa");
    }
  std::vector<std::vector<const TimelineEvent*>> by_row(rows);
  for (const auto& e : t.events)
    if (static_cast<std::size_t>(e.device) < devices)
      by_row[static_cast<std::size_t>(e.device) * t.streams.size() +
             static_cast<std::size_t>(e.stream)]
          .push_back(&e);
  const double pixel = end / pw;
  auto bar = [&](std::size_t r, const std::string& name, const std::string& phase, double start,
                 double stop) {
    const double x = left + start / end * pw, w = std::max(0.5, (stop - start) / end * pw);
    svg += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\">"
        "<title>{} ({:.4f} – {:.4f} s)</title></rect>\n",
        x, top + row * static_cast<double>(r), w, row - 2, phase_colour(phase), xml_escape(name),
        start, stop);
  };
  for (std::size_t r = 0; r < rows; ++r) {
    auto& events = by_row[r];
    std::stable_sort(
        events.begin(), events.end(),
        [](const TimelineEvent* a, const TimelineEvent* b) { return a->start_s < b->start_s; });
    for (std::size_t i = 0; i < events.size();) {
      // Join the events that follow within half a pixel while the bar is narrower than two
      // pixels or they share its phase; colour it by the phase that fills most of it.
      const TimelineEvent& first = *events[i];
      double stop = first.end_s;
      std::map<std::string, double> share{{first.phase, first.end_s - first.start_s}};
      std::size_t j = i + 1;
      while (j < events.size() && events[j]->start_s - stop < pixel / 2 &&
             (stop - first.start_s < 2 * pixel || events[j]->phase == first.phase)) {
        share[events[j]->phase] += events[j]->end_s - events[j]->start_s;
        stop = std::max(stop, events[j++]->end_s);
      }
      std::string phase = first.phase;
      for (const auto& [p, time] : share)
        if (time > share[phase]) phase = p;
      bar(r, j - i == 1 ? first.name : fmt::format("{} events", j - i), phase, first.start_s, stop);
      i = j;
    }
  }
  const double axis = top + row * static_cast<double>(rows) + 14;
  for (int k = 0; k <= 10; ++k) {
    const double x = left + pw * k / 10.0;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3g}</text>", x,
                       axis, end * k / 10.0);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">time (s)</text>\n",
                     left + pw / 2, axis + 16);
  if (devices < t.devices.size())
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\">… and {} more devices (all of them are in the Chrome "
        "trace)</text>\n",
        left, axis + 32, t.devices.size() - devices);
  double lx = left;
  for (const char* phase :
       {"forward", "backward", "collectives", "send", "gradient sync", "optimizer"}) {
    svg += fmt::format(
        "<rect x=\"{:.0f}\" y=\"8\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.0f}\" "
        "y=\"18\">{}</text>",
        lx, phase_colour(phase), lx + 16, phase);
    lx += 120;
  }
  svg += "</svg>\n";
  return svg;
}

namespace {

// A titled table (scrolling when long) and its note.
std::string table_html(const ReportData::Table& t) {
  std::string h = "<h2>" + xml_escape(t.title) + "</h2>\n<div class=\"rows\"><table>\n<tr>";
  for (const auto& c : t.header) h += "<th>" + xml_escape(c) + "</th>";
  h += "</tr>\n";
  for (const auto& row : t.rows) {
    h += "<tr>";
    for (const auto& c : row) h += "<td>" + xml_escape(c) + "</td>";
    h += "</tr>\n";
  }
  h += "</table></div>\n";
  if (!t.note.empty()) h += "<p>" + xml_escape(t.note) + "</p>\n";
  return h;
}

}  // namespace

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
.figure {{ max-height: 900px; overflow: auto; border: 1px solid #ddd; }}
.rows {{ max-height: 520px; overflow: auto; display: inline-block; }}
pre.launch {{ background: #f6f8fa; border: 1px solid #ddd; padding: 8px; font-size: 12px; overflow: auto; }}
</style></head><body>
<h1>{0}</h1>
)",
                              xml_escape(d.title));
  h += "<h2>Plan</h2>\n<table class=\"summary\">\n";
  for (const auto& [k, v] : d.summary)
    h += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", xml_escape(k), xml_escape(v));
  h += "</table>\n";
  if (!d.stage_rows.empty()) h += table_html({d.stage_title, d.stage_header, d.stage_rows, ""});
  for (const ReportData::Table& t : d.tables) h += table_html(t);
  if (!d.launch.empty())
    h += "<h2>Run it</h2>\n<pre class=\"launch\">" + xml_escape(d.launch) + "</pre>\n";
  if (d.timeline) h += "<h2>Timeline (simulated iteration)</h2>\n" + timeline_svg(*d.timeline);
  if (!d.network_svg.empty())
    h += "<h2>Placement on the network (which device runs which stage, how busy each link "
         "is)</h2>\n<div class=\"figure\">" +
         d.network_svg + "</div>\n";
  if (!d.graph_svg.empty())
    h += "<h2>Operator graph (each layer's split)</h2>\n<div class=\"figure\">" + d.graph_svg +
         "</div>\n";
  if (!d.memory.empty())
    h += "<h2>Memory per device</h2>\n" +
         bars_svg(d.memory, "Peak memory per device (dashed: capacity)", "GiB");
  if (!d.frontier.empty())
    h += "<h2>Time–memory frontier</h2>\n" + scatter_svg(d.frontier, "Non-dominated plans",
                                                         "peak memory per device (GiB)",
                                                         d.frontier_y_title, d.frontier_chosen);
  if (!d.notes.empty()) h += "<p>" + xml_escape(d.notes) + "</p>\n";
  h += "</body></html>\n";
  return h;
}

}  // namespace paraplan::render
