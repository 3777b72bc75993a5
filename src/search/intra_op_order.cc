// The elimination orders of the intra-operator planner: greedy orders on the elimination graph
// (PaSE's minimum degree, and minimum table size) and the size of an order's tables.
#include <algorithm>
#include <set>
#include <vector>

#include "search/intra_op.h"

namespace paraplan {
namespace {

std::vector<std::set<int>> adjacency(const IntraOpNetwork& net) {
  std::vector<std::set<int>> adj(net.size());
  for (const auto& p : net.pairs) {
    if (p.u == p.v) continue;
    adj[p.u].insert(p.v);
    adj[p.v].insert(p.u);
  }
  return adj;
}

/// Removes v from the elimination graph, joining its neighbours into a clique.
void eliminate_vertex(std::vector<std::set<int>>& adj, int v) {
  const std::set<int> nb = adj[v];
  for (int w : nb) {
    adj[w].erase(v);
    for (int x : nb)
      if (x != w) adj[w].insert(x);
  }
  adj[v].clear();
}

template <typename Score>
std::vector<int> greedy_order(const IntraOpNetwork& net, Score score) {
  auto adj = adjacency(net);
  const int n = net.size();
  std::vector<bool> done(n, false);
  std::vector<int> order;
  for (int step = 0; step < n; ++step) {
    int best = -1;
    double best_score = 0;
    for (int v = 0; v < n; ++v) {
      if (done[v]) continue;
      double s = score(v, adj[v]);
      if (best < 0 || s < best_score) {
        best = v;
        best_score = s;
      }
    }
    done[best] = true;
    order.push_back(best);
    eliminate_vertex(adj, best);
  }
  return order;
}

double domain(const IntraOpNetwork& net, int v) { return static_cast<double>(net.unary[v].size()); }

}  // namespace

EliminationStats elimination_stats(const IntraOpNetwork& net, const std::vector<int>& order) {
  auto adj = adjacency(net);
  EliminationStats st;
  for (int v : order) {
    double t = domain(net, v);
    for (int w : adj[v]) t *= domain(net, w);
    st.total_rows += t;
    st.largest_table = std::max(st.largest_table, t);
    st.max_dependent = std::max(st.max_dependent, static_cast<int>(adj[v].size()));
    eliminate_vertex(adj, v);
  }
  return st;
}

std::vector<int> min_degree_order(const IntraOpNetwork& net) {
  return greedy_order(net,
                      [](int, const std::set<int>& nb) { return static_cast<double>(nb.size()); });
}

std::vector<int> min_weight_order(const IntraOpNetwork& net) {
  return greedy_order(net, [&](int v, const std::set<int>& nb) {
    double t = domain(net, v);
    for (int w : nb) t *= domain(net, w);
    return t;
  });
}

}  // namespace paraplan
