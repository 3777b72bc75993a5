// Structural model checks shared by the readers.
#include "io/model_checks.h"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "ir/error.h"

namespace paraplan::io {

void check_edges(Model& model, const std::string& source) {
  if (model.layers.empty()) throw Error(ErrorKind::kInput, source, "the model has no layers");
  std::set<std::pair<int, int>> seen;
  for (std::size_t e = 0; e < model.edges.size(); ++e) {
    const Edge& edge = model.edges[e];
    if (edge.from == edge.to)
      throw Error(ErrorKind::kInput, source,
                  fmt::format("edge {} -> {} is a self-loop (the graph must be acyclic)",
                              model.layers[edge.from].id, model.layers[edge.to].id));
    if (!seen.insert({edge.from, edge.to}).second)
      throw Error(ErrorKind::kInput, source,
                  fmt::format("duplicate edge {} -> {}", model.layers[edge.from].id,
                              model.layers[edge.to].id));
  }
  model.index();
  if (model.topological_order().empty()) {
    // Name one layer on the cycle: repeatedly strip sources and sinks; what is left is cyclic.
    std::vector<int> indeg(model.layers.size()), outdeg(model.layers.size());
    for (const auto& e : model.edges) ++indeg[e.to], ++outdeg[e.from];
    std::vector<bool> gone(model.layers.size());
    bool changed = true;
    while (changed) {
      changed = false;
      for (int v = 0; v < model.size(); ++v) {
        if (gone[v] || (indeg[v] > 0 && outdeg[v] > 0)) continue;
        gone[v] = true;
        changed = true;
        for (int e : model.out_edge_ids[v]) --indeg[model.edges[e].to];
        for (int e : model.in_edge_ids[v]) --outdeg[model.edges[e].from];
      }
    }
    std::string members;
    for (int v = 0; v < model.size(); ++v)
      if (!gone[v]) members += (members.empty() ? "" : ", ") + std::to_string(model.layers[v].id);
    throw Error(
        ErrorKind::kInput, source,
        "the graph has a cycle (a model must be a DAG); layers on or between cycles: " + members);
  }
}

void check_model(Model& model, const std::string& source) {
  check_edges(model, source);
  for (const auto& layer : model.layers) {
    bool any = false;
    for (const auto& d : layer.by_degree) any = any || !d.options.empty();
    if (!any)
      throw Error(ErrorKind::kInput, source,
                  fmt::format("layer {} has no options for any tensor-parallel degree", layer.id));
  }
}

}  // namespace paraplan::io
