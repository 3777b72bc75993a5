#include "render/network_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "render/svg_plot.h"

namespace paraplan::render {
namespace {

const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                          "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

}  // namespace

std::string network_svg(const Topology& t, const NetworkFigure& f) {
  const int n = t.node_count(), devices = t.device_count();
  // Rows: hop distance from the nearest device.
  std::vector<std::vector<int>> adjacent(static_cast<std::size_t>(n));
  for (const auto& e : t.edges()) {
    adjacent[static_cast<std::size_t>(e.a)].push_back(e.b);
    adjacent[static_cast<std::size_t>(e.b)].push_back(e.a);
  }
  std::vector<int> row(static_cast<std::size_t>(n), -1);
  std::deque<int> queue;
  for (int d = 0; d < devices; ++d) {
    row[static_cast<std::size_t>(d)] = 0;
    queue.push_back(d);
  }
  int rows = 1;
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    for (int v : adjacent[static_cast<std::size_t>(u)])
      if (row[static_cast<std::size_t>(v)] < 0) {
        row[static_cast<std::size_t>(v)] = row[static_cast<std::size_t>(u)] + 1;
        rows = std::max(rows, row[static_cast<std::size_t>(v)] + 1);
        queue.push_back(v);
      }
  }
  // Places: devices in id order; each switch row in the order of the mean place of its lower
  // neighbours (ties: node index), spread over the devices' span.
  std::vector<double> place(static_cast<std::size_t>(n), 0);
  std::vector<int> count(static_cast<std::size_t>(rows), 0);
  for (int d = 0; d < devices; ++d) place[static_cast<std::size_t>(d)] = d;
  count[0] = devices;
  for (int r = 1; r < rows; ++r) {
    std::vector<std::pair<double, int>> order;
    for (int v = 0; v < n; ++v) {
      if (row[static_cast<std::size_t>(v)] != r) continue;
      double sum = 0;
      int lower = 0;
      for (int u : adjacent[static_cast<std::size_t>(v)])
        if (row[static_cast<std::size_t>(u)] < r) {
          sum += place[static_cast<std::size_t>(u)];
          ++lower;
        }
      order.push_back({lower ? sum / lower : 0, v});
    }
    std::sort(order.begin(), order.end());
    for (std::size_t i = 0; i < order.size(); ++i)
      place[static_cast<std::size_t>(order[i].second)] = static_cast<double>(i);
    count[static_cast<std::size_t>(r)] = static_cast<int>(order.size());
  }
  const int widest = std::max(2, *std::max_element(count.begin(), count.end()));
  const double cell = 44, box_w = 38, box_h = 22, row_h = 90, margin = 30;
  const double width = margin * 2 + cell * widest;
  const double height = margin * 2 + row_h * (rows - 1) + box_h + 40;
  const auto x = [&](int v) {
    const int k = count[static_cast<std::size_t>(row[static_cast<std::size_t>(v)])];
    const double pitch = k <= devices ? cell * devices / k : cell;
    return width / 2 + (place[static_cast<std::size_t>(v)] - (k - 1) / 2.0) * pitch;
  };
  const auto y = [&](int v) {
    return height - margin - 40 - row_h * row[static_cast<std::size_t>(v)] + box_h / 2;
  };
  double busiest = 0;
  for (double b : f.link_busy_s) busiest = std::max(busiest, b);
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"10\">\n",
      width, height, width, height);
  for (std::size_t e = 0; e < t.edges().size(); ++e) {
    const auto& l = t.edges()[e];
    const double busy = e < f.link_busy_s.size() ? f.link_busy_s[e] : 0;
    const double share = busiest > 0 ? busy / busiest : 0;
    const int red = static_cast<int>(120 + 135 * share),
              other = static_cast<int>(160 * (1 - share));
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"rgb({},{},{})\" "
        "stroke-width=\"{:.2f}\"><title>{} – {}: {:.4g} GB/s per direction; busiest direction "
        "{:.4g} {}</title></line>\n",
        x(l.a), y(l.a), x(l.b), y(l.b), red, other, other, 1 + 6 * share,
        xml_escape(t.nodes()[static_cast<std::size_t>(l.a)].name),
        xml_escape(t.nodes()[static_cast<std::size_t>(l.b)].name), l.bandwidth_bytes_per_s / 1e9,
        busy, xml_escape(f.busy_unit));
  }
  for (int v = 0; v < n; ++v) {
    const bool device = v < devices;
    const int group = device && v < static_cast<int>(f.device_groups.size())
                          ? f.device_groups[static_cast<std::size_t>(v)]
                          : -1;
    const double w = device ? box_w : 66;
    const std::string fill = device ? (group >= 0 ? kPalette[group % 10] : "#eeeeee") : "#dddddd";
    const std::string label = device
                                  ? (v < static_cast<int>(f.device_labels.size()) &&
                                             !f.device_labels[static_cast<std::size_t>(v)].empty()
                                         ? f.device_labels[static_cast<std::size_t>(v)]
                                         : std::to_string(v))
                                  : t.nodes()[static_cast<std::size_t>(v)].name;
    s += fmt::format(
        "<g><title>{}{}</title><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\" "
        "rx=\"3\" fill=\"{}\" stroke=\"#555\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
        "text-anchor=\"middle\">{}</text></g>\n",
        xml_escape(t.nodes()[static_cast<std::size_t>(v)].name),
        device && !label.empty() ? ": " + xml_escape(label) : "", x(v) - w / 2, y(v) - box_h / 2, w,
        box_h, fill, x(v), y(v) + 3.5,
        xml_escape(device ? std::to_string(v) : label.substr(0, 11)));
    if (device && group >= 0)
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x(v),
                       y(v) + box_h / 2 + 12, xml_escape(label));
  }
  s += fmt::format(
      "<text x=\"{:.0f}\" y=\"{:.0f}\">devices coloured by stage (label: stage/replica/rank); "
      "links: width and red by how busy (busiest {:.4g} {})</text>\n",
      margin, height - 8, busiest, xml_escape(f.busy_unit));
  s += "</svg>\n";
  return s;
}

}  // namespace paraplan::render
