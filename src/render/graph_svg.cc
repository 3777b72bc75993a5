#include "render/graph_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ir/error.h"
#include "render/svg_plot.h"

namespace paraplan::render {
namespace {

// Shades of blue by log2 of the devices a layer uses (as the DOT writer colours them).
constexpr const char* kShades[] = {"#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6",
                                   "#4292c6", "#2171b5", "#08519c", "#08306b"};

std::string clipped(const std::string& text, std::size_t n) {
  return text.size() <= n ? text : text.substr(0, n - 1) + "…";
}

int shade_of(int devices) {
  int level = 0;
  for (int d = devices; d > 1; d /= 2) ++level;
  return std::min(level, 8);
}

}  // namespace

std::string operator_graph_svg(const Model& model, const Plan& plan) {
  const int n = model.size();
  // Depth = longest path from a source (Kahn's order, so any cycle is caught).
  std::vector<std::vector<int>> out(static_cast<std::size_t>(n));
  std::vector<int> indegree(static_cast<std::size_t>(n), 0), depth(static_cast<std::size_t>(n), 0);
  for (const Edge& e : model.edges) {
    out[static_cast<std::size_t>(e.from)].push_back(e.to);
    ++indegree[static_cast<std::size_t>(e.to)];
  }
  std::vector<int> ready, order;
  for (int v = 0; v < n; ++v)
    if (indegree[static_cast<std::size_t>(v)] == 0) ready.push_back(v);
  while (!ready.empty()) {
    std::sort(ready.begin(), ready.end(), std::greater<>());
    const int v = ready.back();
    ready.pop_back();
    order.push_back(v);
    for (int w : out[static_cast<std::size_t>(v)]) {
      auto& dw = depth[static_cast<std::size_t>(w)];
      dw = std::max(dw, depth[static_cast<std::size_t>(v)] + 1);
      if (--indegree[static_cast<std::size_t>(w)] == 0) ready.push_back(w);
    }
  }
  if (static_cast<int>(order.size()) != n)
    throw Error(ErrorKind::kInput, model.name,
                "the operator graph has a cycle; it cannot be drawn");
  std::map<int, std::vector<int>> rows;  // depth -> layers, in model order
  for (int v = 0; v < n; ++v) rows[depth[static_cast<std::size_t>(v)]].push_back(v);
  std::size_t widest = 1;
  for (const auto& [d, layers] : rows) widest = std::max(widest, layers.size());
  std::vector<const LayerSplit*> split_of(static_cast<std::size_t>(n), nullptr);
  for (const LayerSplit& ls : plan.as<IntraOpDetail>().layer_splits)
    if (ls.layer >= 0 && ls.layer < n) split_of[static_cast<std::size_t>(ls.layer)] = &ls;

  const double box_w = 170, box_h = 36, gap_x = 16, gap_y = 26, margin = 20, legend = 30;
  const double width = std::max(560.0, margin * 2 + static_cast<double>(widest) * (box_w + gap_x));
  const double height = margin * 2 + legend + static_cast<double>(rows.size()) * (box_h + gap_y);
  std::vector<std::pair<double, double>> at(static_cast<std::size_t>(n));
  for (const auto& [d, layers] : rows) {
    const double row_w = static_cast<double>(layers.size()) * (box_w + gap_x) - gap_x;
    for (std::size_t i = 0; i < layers.size(); ++i)
      at[static_cast<std::size_t>(layers[i])] = {
          (width - row_w) / 2 + static_cast<double>(i) * (box_w + gap_x),
          margin + legend + d * (box_h + gap_y)};
  }
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 "
      "0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      width, height);
  double lx = margin;
  svg += fmt::format("<text x=\"{}\" y=\"{}\">devices per layer:</text>", lx, margin + 8);
  lx += 110;
  for (int level = 0, devices = 1; level <= 8; ++level, devices *= 2) {
    svg += fmt::format(
        "<rect x=\"{0:.0f}\" y=\"{1}\" width=\"12\" height=\"12\" fill=\"{2}\" stroke=\"#555\"/>"
        "<text x=\"{3:.0f}\" y=\"{4}\">{5}{6}</text>",
        lx, margin - 2, kShades[level], lx + 16, margin + 8, devices, level == 8 ? "+" : "");
    lx += 48;
  }
  svg += "\n";
  for (const Edge& e : model.edges) {
    const auto [fx, fy] = at[static_cast<std::size_t>(e.from)];
    const auto [tx, ty] = at[static_cast<std::size_t>(e.to)];
    svg += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\">"
        "<title>{:.4g} bytes</title></line>\n",
        fx + box_w / 2, fy + box_h, tx + box_w / 2, ty, e.bytes);
  }
  for (int v = 0; v < n; ++v) {
    const Layer& layer = model.layers[static_cast<std::size_t>(v)];
    const LayerSplit* ls = split_of[static_cast<std::size_t>(v)];
    const int level = ls ? shade_of(ls->devices) : 0;
    const char* ink = level >= 5 ? "white" : "black";
    std::string split = ls && layer.op ? layer.op->split_text(ls->split) : "";
    if (ls) split += fmt::format(" on {}", ls->devices);
    const std::string kind = layer.op ? std::string(op_kind_name(layer.op->kind)) : "layer";
    const auto [x, y] = at[static_cast<std::size_t>(v)];
    svg += fmt::format(
        "<g><title>{}: {} ({}){}</title><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" "
        "rx=\"4\" fill=\"{}\" stroke=\"#555\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\">{}</text>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\">{}</text></g>\n",
        layer.id, xml_escape(layer.name), xml_escape(kind),
        layer.op ? xml_escape(", " + layer.op->dims_text() + "; split " + split) : "", x, y, box_w,
        box_h, kShades[level], x + 6, y + 14, ink, xml_escape(clipped(layer.name, 26)), x + 6,
        y + 29, ink, xml_escape(clipped(split, 28)));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace paraplan::render
