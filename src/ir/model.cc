// Model helpers: edge indexes, degree queries and topological order.
#include "ir/model.h"

#include <algorithm>
#include <queue>

namespace paraplan {

const std::vector<LayerOption>* Layer::options_for(int degree) const {
  for (const auto& d : by_degree)
    if (d.degree == degree) return d.options.empty() ? nullptr : &d.options;
  return nullptr;
}

void Model::index() {
  in_edge_ids.assign(layers.size(), {});
  out_edge_ids.assign(layers.size(), {});
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
    out_edge_ids[edges[e].from].push_back(e);
    in_edge_ids[edges[e].to].push_back(e);
  }
}

std::vector<int> Model::common_degrees() const {
  std::vector<int> common;
  if (layers.empty()) return common;
  for (const auto& d : layers[0].by_degree)
    if (!d.options.empty()) common.push_back(d.degree);
  for (const auto& layer : layers) {
    std::erase_if(common, [&](int t) { return layer.options_for(t) == nullptr; });
  }
  return common;
}

std::vector<int> Model::topological_order() const {
  std::vector<int> indegree(layers.size(), 0);
  for (const auto& e : edges) ++indegree[e.to];
  // Smallest index first, so the order is deterministic.
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int v = 0; v < size(); ++v)
    if (indegree[v] == 0) ready.push(v);
  std::vector<std::vector<int>> succ(layers.size());
  for (const auto& e : edges) succ[e.from].push_back(e.to);
  std::vector<int> order;
  while (!ready.empty()) {
    int v = ready.top();
    ready.pop();
    order.push_back(v);
    for (int w : succ[v])
      if (--indegree[w] == 0) ready.push(w);
  }
  if (order.size() != layers.size()) order.clear();
  return order;
}

}  // namespace paraplan
