// Antichain states, following PipeDream's graph.py as embedded in DAPPLE (HPGO 0.9.1).
#include "cost/dapple_states.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <numeric>

namespace paraplan {
namespace {

using Bits = std::vector<bool>;

struct Graph {
  int n = 0;
  std::vector<int> node;               // graph index -> model layer
  std::vector<std::vector<int>> succ;  // direct, in edge order
  std::vector<Bits> preds, succs;      // transitive
};

Graph preprocess(const Model& model) {
  const int n = model.size();
  std::vector<bool> keep(n, true);
  std::vector<int> indeg(n, 0), outdeg(n, 0);
  for (const auto& e : model.edges) ++indeg[e.to], ++outdeg[e.from];
  for (int v = 0; v < n; ++v)
    if (indeg[v] == 0 && model.layers[v].name.rfind("Input", 0) == 0) keep[v] = false;
  // Sinks named __getitem__*, one pass over the graph without the dropped sources.
  std::vector<int> out_kept(n, 0);
  for (const auto& e : model.edges)
    if (keep[e.from] && keep[e.to]) ++out_kept[e.from];
  std::vector<bool> drop_sink(n, false);
  for (int v = 0; v < n; ++v)
    if (keep[v] && out_kept[v] == 0 && model.layers[v].name.rfind("__getitem__", 0) == 0)
      drop_sink[v] = true;
  Graph g;
  std::vector<int> index(n, -1);
  for (int v = 0; v < n; ++v)
    if (keep[v] && !drop_sink[v]) index[v] = g.n++, g.node.push_back(v);
  g.succ.assign(g.n, {});
  for (const auto& e : model.edges)
    if (index[e.from] >= 0 && index[e.to] >= 0) g.succ[index[e.from]].push_back(index[e.to]);
  // Transitive closure via a topological order of the kept graph.
  std::vector<int> deg(g.n, 0), order;
  for (int v = 0; v < g.n; ++v)
    for (int w : g.succ[v]) ++deg[w];
  for (int v = 0; v < g.n; ++v)
    if (deg[v] == 0) order.push_back(v);
  for (std::size_t i = 0; i < order.size(); ++i)
    for (int w : g.succ[order[i]])
      if (--deg[w] == 0) order.push_back(w);
  g.preds.assign(g.n, Bits(g.n, false));
  g.succs.assign(g.n, Bits(g.n, false));
  for (int v : order)
    for (int w : g.succ[v]) {
      g.preds[w][v] = true;
      for (int u = 0; u < g.n; ++u)
        if (g.preds[v][u]) g.preds[w][u] = true;
    }
  for (int w = 0; w < g.n; ++w)
    for (int u = 0; u < g.n; ++u)
      if (g.preds[w][u]) g.succs[u][w] = true;
  return g;
}

std::vector<int> augment(const Graph& g, const std::vector<int>& antichain) {
  std::vector<bool> extra(g.n, false);
  for (int a : antichain)
    for (int p = 0; p < g.n; ++p) {
      if (!g.preds[a][p]) continue;
      for (int out : g.succ[p])
        if (!g.preds[a][out] && out != a) extra[p] = true;
    }
  std::vector<int> result;
  for (int p = 0; p < g.n; ++p)
    if (extra[p]) result.push_back(p);
  result.insert(result.end(), antichain.begin(), antichain.end());
  return result;
}

std::vector<int> deaugment(const Graph& g, const std::vector<int>& augmented) {
  std::vector<int> result;
  for (int x : augmented) {
    bool has_successor = false;
    for (int y : augmented) has_successor = has_successor || g.succs[x][y];
    if (!has_successor && std::find(result.begin(), result.end(), x) == result.end())
      result.push_back(x);
  }
  return result;
}

std::vector<int> sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// The antichain DAG of PipeDream's states, by breadth-first search from the first source;
// `too_many` when it has more than `max_states` states.
struct AntichainDag {
  std::vector<std::vector<int>> antichain_of, augmented_of, dag_succ;
  bool too_many = false;
};

AntichainDag explore(const Graph& g, int max_states) {
  AntichainDag d;
  std::map<std::vector<int>, int> id_of;
  int source = -1;
  for (int v = 0; v < g.n && source < 0; ++v) {
    bool has_pred = false;
    for (int u = 0; u < g.n; ++u) has_pred = has_pred || g.preds[v][u];
    if (!has_pred) source = v;
  }
  std::deque<std::vector<int>> queue{{source}};
  id_of[{source}] = 0;
  d.antichain_of.push_back({source});
  d.augmented_of.push_back(augment(g, {source}));
  d.dag_succ.push_back({});
  std::vector<bool> expanded(1, false);
  while (!queue.empty() && !d.too_many) {
    std::vector<int> a = queue.front();
    queue.pop_front();
    int id = id_of.at(sorted(a));
    if (expanded[id]) continue;
    expanded[id] = true;
    const std::vector<int> aug = d.augmented_of[id];
    for (int x : aug) {
      for (int y : g.succ[x]) {
        if (std::find(a.begin(), a.end(), y) != a.end()) continue;
        bool ok = true;
        for (int z : aug) ok = ok && !g.succs[y][z];
        if (!ok) continue;
        std::vector<int> next = aug;
        std::replace(next.begin(), next.end(), x, y);
        next = deaugment(g, next);
        auto key = sorted(next);
        auto it = id_of.find(key);
        int nid;
        if (it == id_of.end()) {
          nid = static_cast<int>(d.antichain_of.size());
          if (nid >= max_states) {
            d.too_many = true;
            break;
          }
          id_of[key] = nid;
          d.antichain_of.push_back(next);
          d.augmented_of.push_back(augment(g, next));
          d.dag_succ.push_back({});
          expanded.push_back(false);
        } else {
          nid = it->second;
        }
        d.dag_succ[id].push_back(nid);
        queue.push_back(next);
      }
      if (d.too_many) break;
    }
  }

  return d;
}

// The states of the antichain DAG in PipeDream's topological order (a DFS from nodes sorted by
// description, children sorted by description, reverse post-order), with the layers each covers
// and its transitive predecessors.
void order_states(const Model& model, const Graph& g, const AntichainDag& d, DappleStates& st,
                  std::vector<std::vector<int>>& covered,
                  std::vector<std::vector<int>>& state_preds) {
  const int count = static_cast<int>(d.antichain_of.size());
  auto desc = [&](int id) { return model.layers[g.node[d.antichain_of[id][0]]].name; };
  // PipeDream's topological sort: DFS from nodes sorted by description, children sorted by
  // description (stable), reverse post-order.
  std::vector<int> roots(count);
  std::iota(roots.begin(), roots.end(), 0);
  std::stable_sort(roots.begin(), roots.end(), [&](int a, int b) { return desc(a) < desc(b); });
  std::vector<char> mark(count, 0);
  std::vector<int> post;
  std::function<void(int)> dfs = [&](int v) {
    if (mark[v]) return;
    mark[v] = 1;
    std::vector<int> kids = d.dag_succ[v];
    std::stable_sort(kids.begin(), kids.end(), [&](int a, int b) { return desc(a) < desc(b); });
    for (int k : kids) dfs(k);
    post.push_back(v);
  };
  for (int r : roots) dfs(r);
  const std::vector<int> order(post.rbegin(), post.rend());  // DAG ids
  std::vector<int> position(count);
  for (int i = 0; i < count; ++i) position[order[i]] = i;
  // Transitive predecessors in the antichain DAG.
  std::vector<std::vector<bool>> reach(count, std::vector<bool>(count, false));
  for (int i = 0; i < count; ++i) {
    int v = order[i];
    for (int w : d.dag_succ[v]) {
      int j = position[w];
      reach[j][i] = true;
      for (int k = 0; k < count; ++k)
        if (reach[i][k]) reach[j][k] = true;
    }
  }
  state_preds.assign(count, {});
  for (int j = 0; j < count; ++j)
    for (int k = 0; k < count; ++k)
      if (reach[j][k]) state_preds[j].push_back(k);
  for (int i = 0; i < count; ++i) {
    int id = order[i];
    st.description.push_back(desc(id));
    std::vector<int> aug = d.augmented_of[id];
    std::vector<bool> in(g.n, false);
    for (int x : aug) {
      in[x] = true;
      for (int u = 0; u < g.n; ++u)
        if (g.preds[x][u]) in[u] = true;
    }
    std::vector<int> cov;
    for (int u = 0; u < g.n; ++u)
      if (in[u]) cov.push_back(u);
    covered.push_back(cov);
    st.augmented_antichain.push_back(sorted(aug));
  }
}

// More states than the limit: one state per layer of a topological order of the layers (file
// order when it is one).
void linear_states(const Model& model, const Graph& g, DappleStates& st,
                   std::vector<std::vector<int>>& covered,
                   std::vector<std::vector<int>>& state_preds) {
  st.linearised = true;
  std::vector<int> deg(g.n, 0), lin;
  for (int v = 0; v < g.n; ++v)
    for (int w : g.succ[v]) ++deg[w];
  std::vector<int> ready;
  for (int v = g.n - 1; v >= 0; --v)
    if (deg[v] == 0) ready.push_back(v);
  while (!ready.empty()) {
    std::sort(ready.rbegin(), ready.rend());
    int v = ready.back();
    ready.pop_back();
    lin.push_back(v);
    for (int w : g.succ[v])
      if (--deg[w] == 0) ready.push_back(w);
  }
  std::vector<bool> in(g.n, false);
  for (int i = 0; i < g.n; ++i) {
    in[lin[i]] = true;
    std::vector<int> cov, crossing;
    for (int u = 0; u < g.n; ++u)
      if (in[u]) {
        cov.push_back(u);
        bool leaves = false;
        for (int w : g.succ[u]) leaves = leaves || !in[w];
        if (leaves) crossing.push_back(u);
      }
    covered.push_back(cov);
    st.augmented_antichain.push_back(crossing);
    st.description.push_back(model.layers[g.node[lin[i]]].name);
    std::vector<int> preds(i);
    std::iota(preds.begin(), preds.end(), 0);
    state_preds.push_back(preds);
  }
}

// Each state's prefix sums (compute, activations, parameters), the activation it sends on, and
// its layers as model layer ids.
void add_prefix_sums(const Model& model, const Graph& g,
                     const std::vector<std::vector<int>>& covered, DappleStates& st) {
  for (std::size_t i = 0; i < covered.size(); ++i) {
    double c = 0, a = 0, p = 0, out = 0;
    for (int u : covered[i]) {
      const Layer& layer = model.layers[g.node[u]];
      const LayerOption& o = layer.options_for(1)->front();
      c += o.compute_time_s;
      a += layer.output_bytes;
      p += o.parameter_bytes;
    }
    for (int u : st.augmented_antichain[i]) out += model.layers[g.node[u]].output_bytes;
    st.prefix_compute_s.push_back(c);
    st.prefix_activation_bytes.push_back(a);
    st.prefix_parameter_bytes.push_back(p);
    st.output_activation_bytes.push_back(out);
    std::vector<int> layers;
    for (int u : covered[i]) layers.push_back(g.node[u]);
    st.covered_layers.push_back(layers);
    std::vector<int> aug_layers;
    for (int u : st.augmented_antichain[i]) aug_layers.push_back(g.node[u]);
    st.augmented_antichain[i] = aug_layers;
  }
}

}  // namespace

DappleStates dapple_states(const Model& model, int max_states) {
  const Graph g = preprocess(model);
  DappleStates st;
  const AntichainDag d = explore(g, max_states);
  std::vector<std::vector<int>> covered;  // graph indices per state
  std::vector<std::vector<int>> state_preds;
  if (!d.too_many)
    order_states(model, g, d, st, covered, state_preds);
  else
    linear_states(model, g, st, covered, state_preds);
  add_prefix_sums(model, g, covered, st);
  st.predecessors = state_preds;
  return st;
}

}  // namespace paraplan
