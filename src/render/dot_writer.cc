// DOT output (https://graphviz.org/doc/info/lang.html).
#include "render/dot_writer.h"

#include <fmt/format.h>

#include <map>
#include <sstream>

namespace paraplan::render {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string model_to_dot(const Model& model, const Plan* plan) {
  static const char* palette[] = {"#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6",
                                  "#4292c6", "#2171b5", "#08519c", "#08306b"};
  std::map<int, const LayerSplit*> split_of;
  if (const auto* detail = plan ? plan->get_if<IntraOpDetail>() : nullptr)
    for (const auto& ls : detail->layer_splits) split_of[ls.layer] = &ls;
  std::ostringstream s;
  s << "digraph \"" << escape(model.name) << "\" {\n";
  s << "  node [shape=box, style=filled, fontname=\"Helvetica\"];\n";
  for (int v = 0; v < model.size(); ++v) {
    const Layer& layer = model.layers[v];
    std::string label = escape(fmt::format("{}: {}", layer.id, layer.name));
    if (layer.op)
      label += "\\n" +
               escape(fmt::format("{} ({})", op_kind_name(layer.op->kind), layer.op->dims_text()));
    std::string fill = palette[0];
    auto it = split_of.find(v);
    if (it != split_of.end() && layer.op) {
      label += "\\n" + escape(layer.op->split_text(it->second->split) +
                              fmt::format(" on {} device{}", it->second->devices,
                                          it->second->devices == 1 ? "" : "s"));
      int level = 0;
      for (int d = it->second->devices; d > 1; d /= 2) ++level;
      fill = palette[std::min(level, 8)];
    }
    std::string font = fill[1] == '0' || fill[1] == '2' || fill[1] == '4' ? "white" : "black";
    s << fmt::format("  n{} [label=\"{}\", fillcolor=\"{}\", fontcolor=\"{}\"];\n", v, label, fill,
                     font);
  }
  for (const auto& e : model.edges)
    s << fmt::format("  n{} -> n{} [label=\"{:.4g} B\"];\n", e.from, e.to, e.bytes);
  s << "}\n";
  return s.str();
}

}  // namespace paraplan::render
