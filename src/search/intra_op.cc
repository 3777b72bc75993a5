// Variable (bucket) elimination for min-sum pairwise networks. Tables are indexed by classes of
// configurations (configurations a factor cannot tell apart share a class), so a table over a
// neighbour costs what the neighbour's distinct tensor layouts cost, not its configuration count.
#include "search/intra_op.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "ir/error.h"

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

namespace {

/// Σ over steps of Π domain sizes of the vertex and its dependent set.
double order_cost(const IntraOpNetwork& net, const std::vector<int>& order) {
  return elimination_stats(net, order).total_rows;
}

/// A table over `vars` (row-major, last variable fastest), indexed by per-variable classes.
struct Factor {
  std::vector<int> vars;
  std::vector<std::vector<int>> cls;  ///< per variable: configuration → class
  std::vector<int> ncls;
  std::vector<double> val;
  bool alive = true;
};

struct Step {
  int v = 0;
  std::vector<int> dep;               ///< D(i)
  std::vector<std::vector<int>> cls;  ///< per dependent: configuration → class of the table
  std::vector<std::int64_t> stride;
  std::vector<int> argmin;  ///< configuration of v per table entry
};

/// Refines several configuration → class maps of one variable into one, classes numbered by
/// first appearance.
std::vector<int> refine(const std::vector<const std::vector<int>*>& maps, int size, int& count) {
  std::vector<int> out(size);
  std::map<std::vector<int>, int> ids;
  std::vector<int> key(maps.size());
  for (int c = 0; c < size; ++c) {
    for (std::size_t i = 0; i < maps.size(); ++i) key[i] = (*maps[i])[c];
    auto [it, fresh] = ids.emplace(key, static_cast<int>(ids.size()));
    out[c] = it->second;
  }
  count = static_cast<int>(ids.size());
  return out;
}

}  // namespace

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

namespace {

// A factor's view of the table being built: its values, and the offset of each new class of a
// dependent and of each group of the eliminated variable.
struct Part {
  const double* val;
  std::vector<std::vector<std::int64_t>> dep_off;  // per dependent i: new class → offset
  std::vector<std::int64_t> group_off;             // per group of v
};

// What eliminating one variable takes: its step (dependents, their classes, strides, argmins),
// its groups (configurations no factor tells apart) with the cheapest configuration of each,
// and each factor's offsets.
struct Elimination {
  Step st;
  std::vector<int> ncls;  ///< classes per dependent
  int ngroups = 0;
  std::vector<double> gcost;
  std::vector<int> gconf;
  std::int64_t entries = 1;
  std::vector<Part> parts;
};

std::vector<int> elimination_order(const IntraOpNetwork& net, const IntraOpOptions& options) {
  switch (options.order) {
    case IntraOpOptions::Order::kMinDegree:
      return min_degree_order(net);
    case IntraOpOptions::Order::kMinWeight:
      return min_weight_order(net);
    case IntraOpOptions::Order::kBest:
      break;
  }
  auto a = min_degree_order(net), b = min_weight_order(net);
  return order_cost(net, b) < order_cost(net, a) ? b : a;
}

// The classes, groups, strides and offsets of eliminating `v` from the live factors `fs`;
// Error(kLimit) when its table would exceed the options' limit.
Elimination prepare(const IntraOpNetwork& net, const std::vector<Factor>& factors,
                    const std::vector<int>& fs, int v, const IntraOpOptions& options) {
  Elimination e;
  e.st.v = v;
  std::set<int> dep;
  for (int f : fs)
    for (int w : factors[f].vars)
      if (w != v) dep.insert(w);
  e.st.dep.assign(dep.begin(), dep.end());
  const int nd = static_cast<int>(e.st.dep.size());
  // Classes of the new table's axes.
  e.ncls.assign(nd, 0);
  e.st.cls.resize(nd);
  for (int i = 0; i < nd; ++i) {
    int w = e.st.dep[i];
    std::vector<const std::vector<int>*> maps;
    for (int f : fs)
      for (std::size_t j = 0; j < factors[f].vars.size(); ++j)
        if (factors[f].vars[j] == w) maps.push_back(&factors[f].cls[j]);
    e.st.cls[i] = refine(maps, static_cast<int>(net.unary[w].size()), e.ncls[i]);
  }
  // Groups of v: configurations the factors cannot tell apart; keep the cheapest of each.
  std::vector<const std::vector<int>*> vmaps;
  std::vector<int> vpos(fs.size());
  for (std::size_t k = 0; k < fs.size(); ++k)
    for (std::size_t j = 0; j < factors[fs[k]].vars.size(); ++j)
      if (factors[fs[k]].vars[j] == v) {
        vmaps.push_back(&factors[fs[k]].cls[j]);
        vpos[k] = static_cast<int>(j);
      }
  const int kv = static_cast<int>(net.unary[v].size());
  std::vector<int> group = refine(vmaps, kv, e.ngroups);
  e.gcost.assign(e.ngroups, std::numeric_limits<double>::infinity());
  e.gconf.assign(e.ngroups, -1);
  for (int c = 0; c < kv; ++c) {
    int g = group[c];
    if (net.unary[v][c] < e.gcost[g]) {
      e.gcost[g] = net.unary[v][c];
      e.gconf[g] = c;
    }
  }
  // Strides of the new table and, per factor, the offset of each dependent class and group.
  e.st.stride.assign(nd, 1);
  for (int i = nd - 1; i >= 0; --i) {
    e.st.stride[i] = e.entries;
    e.entries *= e.ncls[i];
    if (e.entries > options.max_table_entries) {
      std::ostringstream s;
      s << "eliminating a layer needs a table of more than " << options.max_table_entries
        << " entries; the graph is too densely connected for the exact search at this device "
           "count";
      throw Error(ErrorKind::kLimit, "", s.str());
    }
  }
  for (std::size_t k = 0; k < fs.size(); ++k) {
    const Factor& f = factors[fs[k]];
    Part part;
    part.val = f.val.data();
    const int nf = static_cast<int>(f.vars.size());
    std::vector<std::int64_t> fstride(nf, 1);
    for (int j = nf - 2; j >= 0; --j) fstride[j] = fstride[j + 1] * f.ncls[j + 1];
    part.dep_off.assign(nd, {});
    for (int i = 0; i < nd; ++i) {
      auto it = std::find(f.vars.begin(), f.vars.end(), e.st.dep[i]);
      part.dep_off[i].assign(e.ncls[i], 0);
      if (it == f.vars.end()) continue;
      int j = static_cast<int>(it - f.vars.begin());
      const int w = e.st.dep[i];
      for (int c = 0; c < static_cast<int>(net.unary[w].size()); ++c)
        part.dep_off[i][e.st.cls[i][c]] = f.cls[j][c] * fstride[j];
    }
    part.group_off.assign(e.ngroups, 0);
    for (int c = 0; c < kv; ++c) part.group_off[group[c]] = f.cls[vpos[k]][c] * fstride[vpos[k]];
    e.parts.push_back(std::move(part));
  }
  return e;
}

// Fills the new table's entries whose dependents but the last form the prefixes [lo, hi): parts
// that do not involve the last dependent are summed once per prefix, and the last part's sum is
// fused with the minimum (ties: the smallest configuration index).
void fill_prefixes(Elimination& e, const std::vector<const Part*>& inner,
                   const std::vector<const Part*>& outer, Factor& out, std::int64_t lo,
                   std::int64_t hi) {
  Step& st = e.st;
  const int nd = static_cast<int>(st.dep.size());
  const int last = nd - 1;
  const std::int64_t n_last = nd > 0 ? e.ncls[last] : 1;
  const int ngroups = e.ngroups;
  const std::vector<double>& gcost = e.gcost;
  const std::vector<int>& gconf = e.gconf;
  std::vector<int> digit(std::max(nd, 1));
  std::vector<double> base(ngroups), acc(ngroups);
  for (std::int64_t pre = lo; pre < hi; ++pre) {
    std::int64_t rest = pre * n_last;
    for (int i = 0; i < last; ++i) {
      digit[i] = static_cast<int>(rest / st.stride[i]);
      rest %= st.stride[i];
    }
    auto prefix_offset = [&](const Part* part) {
      std::int64_t b = 0;
      for (int i = 0; i < last; ++i) b += part->dep_off[i][digit[i]];
      return b;
    };
    for (int g = 0; g < ngroups; ++g) base[g] = gcost[g];
    for (const Part* part : outer) {
      const double* val = part->val + prefix_offset(part);
      const std::int64_t* off = part->group_off.data();
      for (int g = 0; g < ngroups; ++g) base[g] += val[off[g]];
    }
    for (std::int64_t d = 0; d < n_last; ++d) {
      const double* src = base.data();
      if (inner.size() > 1) {
        for (int g = 0; g < ngroups; ++g) acc[g] = base[g];
        for (std::size_t k = 0; k + 1 < inner.size(); ++k) {
          const double* val = inner[k]->val + prefix_offset(inner[k]) + inner[k]->dep_off[last][d];
          const std::int64_t* off = inner[k]->group_off.data();
          for (int g = 0; g < ngroups; ++g) acc[g] += val[off[g]];
        }
        src = acc.data();
      }
      double best_value = std::numeric_limits<double>::infinity();
      int best = -1;
      if (inner.empty()) {
        for (int g = 0; g < ngroups; ++g)
          if (best < 0 || src[g] < best_value || (src[g] == best_value && gconf[g] < gconf[best])) {
            best_value = src[g];
            best = g;
          }
      } else {
        const Part* lp = inner.back();
        const double* val = lp->val + prefix_offset(lp) + lp->dep_off[last][d];
        const std::int64_t* off = lp->group_off.data();
        for (int g = 0; g < ngroups; ++g) {
          double x = src[g] + val[off[g]];
          if (best < 0 || x < best_value || (x == best_value && gconf[g] < gconf[best])) {
            best_value = x;
            best = g;
          }
        }
      }
      out.val[pre * n_last + d] = best_value;
      st.argmin[pre * n_last + d] = gconf[best];
    }
  }
}

}  // namespace

IntraOpResult solve_intra_op(const IntraOpNetwork& net, const IntraOpOptions& options) {
  const int n = net.size();
  IntraOpResult result;
  for (int v = 0; v < n; ++v)
    if (net.unary[v].empty())
      throw Error(ErrorKind::kInfeasible, "", "a layer has no configuration");
  result.order = elimination_order(net, options);
  std::vector<Factor> factors;
  std::vector<std::vector<int>> bucket(n);  // factor ids touching each variable
  for (const auto& p : net.pairs) {
    Factor f;
    if (p.u == p.v) throw Error(ErrorKind::kInput, "", "a layer is paired with itself");
    f.vars = {p.u, p.v};
    f.cls = {p.u_class, p.v_class};
    f.ncls = {p.u_classes, p.v_classes};
    f.val = p.cost;
    bucket[p.u].push_back(static_cast<int>(factors.size()));
    bucket[p.v].push_back(static_cast<int>(factors.size()));
    factors.push_back(std::move(f));
  }
  std::vector<Step> steps;
  for (int v : result.order) {
    if (options.progress)
      options.progress->report({"per-layer shardings", double(steps.size()),
                                double(result.order.size()), "layers eliminated", NAN, ""});
    std::vector<int> fs;
    for (int f : bucket[v])
      if (factors[f].alive) fs.push_back(f);
    std::sort(fs.begin(), fs.end());
    fs.erase(std::unique(fs.begin(), fs.end()), fs.end());
    Elimination e = prepare(net, factors, fs, v, options);
    const int nd = static_cast<int>(e.st.dep.size());
    result.max_dependent = std::max(result.max_dependent, nd);
    result.largest_table = std::max(result.largest_table, e.entries);
    result.work += static_cast<double>(e.entries) * e.ngroups;
    Factor out;
    out.vars = e.st.dep;
    out.cls = e.st.cls;
    out.ncls = e.ncls;
    out.val.assign(e.entries, 0);
    e.st.argmin.assign(e.entries, -1);
    const std::int64_t n_last = nd > 0 ? e.ncls[nd - 1] : 1;
    const std::int64_t prefixes = e.entries / n_last;
    std::vector<const Part*> inner, outer;  // involve the last dependent or not
    for (const auto& part : e.parts) {
      bool uses_last = false;
      if (nd > 0)
        for (auto o : part.dep_off[nd - 1]) uses_last = uses_last || o != 0;
      (uses_last ? inner : outer).push_back(&part);
    }
    const double work = static_cast<double>(e.entries) * e.ngroups * (1 + e.parts.size());
    if (work > 2e5 && prefixes > 1)
      tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, prefixes, 4),
                        [&](const tbb::blocked_range<std::int64_t>& r) {
                          fill_prefixes(e, inner, outer, out, r.begin(), r.end());
                        });
    else
      fill_prefixes(e, inner, outer, out, 0, prefixes);
    for (int f : fs) {
      factors[f].alive = false;
      factors[f].val = {};
    }
    if (nd == 0) {
      result.table_minimum += out.val[0];  // a connected component is done
    } else {
      int id = static_cast<int>(factors.size());
      for (int w : e.st.dep) bucket[w].push_back(id);
      factors.push_back(std::move(out));
    }
    steps.push_back(std::move(e.st));
  }
  // Back-substitution in reverse elimination order.
  result.choice.assign(n, -1);
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    std::int64_t idx = 0;
    for (std::size_t i = 0; i < it->dep.size(); ++i)
      idx += it->cls[i][result.choice[it->dep[i]]] * it->stride[i];
    result.choice[it->v] = it->argmin[idx];
  }
  result.objective = net.evaluate(result.choice);
  return result;
}

IntraOpResult brute_force_intra_op(const IntraOpNetwork& net) {
  const int n = net.size();
  IntraOpResult best;
  std::vector<int> c(n, 0);
  best.objective = std::numeric_limits<double>::infinity();
  while (true) {
    double cost = net.evaluate(c);
    if (cost < best.objective) {
      best.objective = cost;
      best.choice = c;
    }
    int i = n - 1;
    while (i >= 0 && ++c[i] == static_cast<int>(net.unary[i].size())) c[i--] = 0;
    if (i < 0) break;
  }
  return best;
}

}  // namespace paraplan
