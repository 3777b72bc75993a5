// Variable (bucket) elimination for min-sum pairwise networks. Tables are indexed by classes of
// configurations (configurations a factor cannot tell apart share a class), so a table over a
// neighbour costs what the neighbour's distinct tensor layouts cost, not its configuration count.
// The elimination orders are in intra_op_order.cc.
#include "search/intra_op.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "ir/error.h"

namespace paraplan {
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
  std::shared_ptr<const std::vector<double>> val;
  int content = 0;  ///< factors of equal content share an id (not every equal pair is found)
  bool alive = true;
};

struct Step {
  int v = 0;
  std::vector<int> dep;               ///< D(i)
  std::vector<std::vector<int>> cls;  ///< per dependent: configuration → class of the table
  std::vector<std::int64_t> stride;
  std::shared_ptr<const std::vector<int>> argmin;  ///< configuration of v per table entry
};

/// Refines several configuration → class maps of one variable into one, classes numbered by
/// first appearance (of their tuple of classes). One map at a time: the pairs (classes so far,
/// next map's class) are renumbered through a dense table.
std::vector<int> refine(const std::vector<const std::vector<int>*>& maps, int size, int& count) {
  std::vector<int> out(size, 0);
  count = size > 0 ? 1 : 0;
  std::vector<int> id;
  for (const std::vector<int>* map : maps) {
    const int width = size > 0 ? *std::max_element(map->begin(), map->end()) + 1 : 0;
    id.assign(static_cast<std::size_t>(count) * width, -1);
    int next = 0;
    for (int c = 0; c < size; ++c) {
      int& slot = id[static_cast<std::size_t>(out[c]) * width + (*map)[c]];
      if (slot < 0) slot = next++;
      out[c] = slot;
    }
    count = next;
  }
  return out;
}

// A factor's view of the table being built: its values, and the offset of each new class of a
// dependent and of each group of the eliminated variable.
struct Part {
  const double* val;
  std::vector<std::vector<std::int64_t>> dep_off;  // per dependent i: new class → offset
  std::vector<std::int64_t> group_off;             // per group of v
  bool uses_last = false;                          ///< the factor involves the last dependent
  /// Per class of the last dependent: no value of the factor at that class is below it (when
  /// uses_last and the elimination does not use LastSums).
  std::vector<double> last_floor;
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
  bool last_pairwise = false;  ///< every factor of the last dependent is over it and v only
  /// fill_prefixes visits groups by their sums over the last dependent's factors too (when
  /// last_pairwise and enough prefixes share those sums); else by floors (Part::last_floor).
  bool use_last_sums = false;
  /// Dependents a < b (neither the last) the table is symmetric in: each is read by one table
  /// over it and v only, the two of equal content and read alike, and nothing else reads them
  /// (a layer's output feeding two consumers alike, as a residual does). Entries with a's class
  /// above b's are copied from their mirror image. -1: none.
  int mirror_a = -1, mirror_b = -1;
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

// What eliminating e.st.v reads of factor `f` (v at its position `vpos`): the offset of each
// dependent class and of each group of v, and the floors over the last dependent.
Part make_part(const IntraOpNetwork& net, const Factor& f, const Elimination& e,
               const std::vector<int>& group, int vpos) {
  const int nd = static_cast<int>(e.st.dep.size());
  Part part;
  part.val = f.val->data();
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
  for (int c = 0; c < static_cast<int>(group.size()); ++c)
    part.group_off[group[c]] = f.cls[vpos][c] * fstride[vpos];
  if (nd > 0) {
    auto it = std::find(f.vars.begin(), f.vars.end(), e.st.dep[nd - 1]);
    part.uses_last = it != f.vars.end();
    if (part.uses_last && !e.use_last_sums) {
      const int j = static_cast<int>(it - f.vars.begin());
      std::vector<double> floor(f.ncls[j], std::numeric_limits<double>::infinity());
      const std::vector<double>& val = *f.val;
      for (std::size_t x = 0; x < val.size(); ++x) {
        double& m = floor[(static_cast<std::int64_t>(x) / fstride[j]) % f.ncls[j]];
        m = std::min(m, val[x]);
      }
      const int w = e.st.dep[nd - 1];
      part.last_floor.assign(e.ncls[nd - 1], 0);
      for (int c = 0; c < static_cast<int>(net.unary[w].size()); ++c)
        part.last_floor[e.st.cls[nd - 1][c]] = floor[f.cls[j][c]];
    }
  }
  return part;
}

// A symmetric pair of dependents (see Elimination::mirror_a).
void find_mirror(Elimination& e, const std::vector<Factor>& factors, const std::vector<int>& fs) {
  const int nd = static_cast<int>(e.st.dep.size());
  auto sole_reader = [&](int i) {  // the one part reading dependent i, if it is over i and v only
    int found = -1;
    for (std::size_t k = 0; k < fs.size(); ++k)
      if (std::find(factors[fs[k]].vars.begin(), factors[fs[k]].vars.end(), e.st.dep[i]) !=
          factors[fs[k]].vars.end()) {
        if (found >= 0 || factors[fs[k]].vars.size() != 2) return -1;
        found = static_cast<int>(k);
      }
    return found;
  };
  for (int a = 0; a + 1 < nd - 1 && e.mirror_a < 0; ++a) {
    const int pa = sole_reader(a);
    if (pa < 0) continue;
    for (int b = a + 1; b < nd - 1; ++b) {
      const int pb = sole_reader(b);
      if (pb < 0 || e.ncls[a] != e.ncls[b] || factors[fs[pa]].content != factors[fs[pb]].content ||
          e.parts[pa].group_off != e.parts[pb].group_off ||
          e.parts[pa].dep_off[a] != e.parts[pb].dep_off[b])
        continue;
      e.mirror_a = a;
      e.mirror_b = b;
      break;
    }
  }
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
  // The last dependent varies fastest. Best is one whose factors involve only it and v: their
  // sum is then the same for every prefix (fill_prefixes sorts it once); among those, the fewest
  // classes (ties: the smallest variable): sorting the sums costs classes × groups, once.
  int last = nd - 1;
  for (int i = 0; i < nd; ++i) {
    bool pairwise = true;
    for (int f : fs) {
      const auto& vars = factors[f].vars;
      if (std::find(vars.begin(), vars.end(), e.st.dep[i]) != vars.end() && vars.size() != 2)
        pairwise = false;
    }
    if (!pairwise) continue;
    if (!e.last_pairwise || e.ncls[i] < e.ncls[last]) last = i;
    e.last_pairwise = true;
  }
  if (nd > 0 && last != nd - 1) {
    std::rotate(e.st.dep.begin() + last, e.st.dep.begin() + last + 1, e.st.dep.end());
    std::rotate(e.st.cls.begin() + last, e.st.cls.begin() + last + 1, e.st.cls.end());
    std::rotate(e.ncls.begin() + last, e.ncls.begin() + last + 1, e.ncls.end());
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
    if (e.gconf[g] < 0 || net.unary[v][c] < e.gcost[g]) {
      e.gcost[g] = net.unary[v][c];
      e.gconf[g] = c;
    }
  }
  // Groups numbered by their configuration, so that ties go to the smaller group number.
  {
    std::vector<int> by_conf(e.ngroups), rank(e.ngroups);
    for (int g = 0; g < e.ngroups; ++g) by_conf[g] = g;
    std::sort(by_conf.begin(), by_conf.end(),
              [&](int a, int b) { return e.gconf[a] < e.gconf[b]; });
    std::vector<double> gcost(e.ngroups);
    std::vector<int> gconf(e.ngroups);
    for (int r = 0; r < e.ngroups; ++r) {
      rank[by_conf[r]] = r;
      gcost[r] = e.gcost[by_conf[r]];
      gconf[r] = e.gconf[by_conf[r]];
    }
    for (int& g : group) g = rank[g];
    e.gcost = std::move(gcost);
    e.gconf = std::move(gconf);
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
  e.use_last_sums = e.last_pairwise && e.entries / e.ncls[nd - 1] >= options.threshold_min_prefixes;
  for (std::size_t k = 0; k < fs.size(); ++k)
    e.parts.push_back(make_part(net, factors[fs[k]], e, group, vpos[k]));
  find_mirror(e, factors, fs);
  return e;
}

// When every factor of the last dependent d is over d and v only, their sum S(d, g) is the same
// for every prefix: computed once, with each row's `top` smallest groups in ascending order.
struct LastSums {
  int top = 0;
  std::vector<double> sum;     ///< S, row-major (class of d, group)
  std::vector<int> order;      ///< per row: its `top` smallest groups (ties: configuration index)
  std::vector<double> sorted;  ///< per row: their S
};

LastSums last_sums(const Elimination& e, const std::vector<const Part*>& inner) {
  const int last = static_cast<int>(e.ncls.size()) - 1;
  const int n_last = e.ncls[last], ngroups = e.ngroups;
  LastSums ls;
  ls.top = std::min(ngroups, 16);
  ls.sum.assign(static_cast<std::size_t>(n_last) * ngroups, 0.0);
  ls.order.resize(static_cast<std::size_t>(n_last) * ls.top);
  ls.sorted.resize(ls.order.size());
  std::vector<int> ord(ngroups);
  for (int d = 0; d < n_last; ++d) {
    double* row = &ls.sum[static_cast<std::size_t>(d) * ngroups];
    for (const Part* part : inner) {
      const double* val = part->val + part->dep_off[last][d];
      for (int g = 0; g < ngroups; ++g) row[g] += val[part->group_off[g]];
    }
    for (int g = 0; g < ngroups; ++g) ord[g] = g;
    std::partial_sort(ord.begin(), ord.begin() + ls.top, ord.end(),
                      [&](int a, int b) { return row[a] < row[b] || (row[a] == row[b] && a < b); });
    for (int i = 0; i < ls.top; ++i) {
      ls.order[static_cast<std::size_t>(d) * ls.top + i] = ord[i];
      ls.sorted[static_cast<std::size_t>(d) * ls.top + i] = row[ord[i]];
    }
  }
  return ls;
}

// Fills the new table's entries whose dependents but the last form the prefixes [lo, hi). The
// parts that do not involve the last dependent give each group a base per prefix; the groups are
// visited by ascending base, and the visit stops once no unvisited group can reach the best sum
// (ties: the smaller group, i.e. configuration). With `ls`, the groups are visited by ascending S
// too, the bound being the sum of the two orders' current values (Fagin's threshold algorithm).
void fill_prefixes(const Elimination& e, const std::vector<const Part*>& inner,
                   const std::vector<const Part*>& outer, const LastSums* ls, double* out_val,
                   int* out_argmin, std::int64_t lo, std::int64_t hi) {
  const Step& st = e.st;
  const int nd = static_cast<int>(st.dep.size());
  const int last = nd - 1;
  const std::int64_t n_last = nd > 0 ? e.ncls[last] : 1;
  const int ngroups = e.ngroups;
  struct Cand {
    double base;
    int g;
    bool operator<(const Cand& o) const { return base < o.base || (base == o.base && g < o.g); }
  };
  std::vector<int> digit(std::max(nd, 1));
  std::vector<double> base(ngroups);
  std::vector<Cand> heap(ngroups), by_base(ngroups);
  auto later = [](const Cand& a, const Cand& b) { return b < a; };  // a min-heap
  std::vector<const double*> inner_val(inner.size());
  for (std::int64_t pre = lo; pre < hi; ++pre) {
    std::int64_t rest = pre * n_last;
    for (int i = 0; i < last; ++i) {
      digit[i] = static_cast<int>(rest / st.stride[i]);
      rest %= st.stride[i];
    }
    if (e.mirror_a >= 0 && digit[e.mirror_a] > digit[e.mirror_b]) continue;  // mirrored later
    auto prefix_offset = [&](const Part* part) {
      std::int64_t b = 0;
      for (int i = 0; i < last; ++i) b += part->dep_off[i][digit[i]];
      return b;
    };
    for (int g = 0; g < ngroups; ++g) base[g] = e.gcost[g];
    for (const Part* part : outer) {
      const double* val = part->val + prefix_offset(part);
      const std::int64_t* off = part->group_off.data();
      for (int g = 0; g < ngroups; ++g) base[g] += val[off[g]];
    }
    // Sorted lazily, popped off a heap: most visits stop after a few groups.
    for (int g = 0; g < ngroups; ++g) heap[g] = {base[g], g};
    std::make_heap(heap.begin(), heap.end(), later);
    int sorted_len = 0;
    auto sorted_to = [&](int i) {
      while (sorted_len <= i) {
        std::pop_heap(heap.begin(), heap.end() - sorted_len, later);
        by_base[sorted_len] = heap[ngroups - 1 - sorted_len];
        ++sorted_len;
      }
    };
    for (std::int64_t d = 0; d < n_last; ++d) {
      double best_value = std::numeric_limits<double>::infinity();
      int best = ngroups;
      auto consider = [&](int g, double x) {
        if (x < best_value || (x == best_value && g < best)) {
          best_value = x;
          best = g;
        }
      };
      if (ls) {
        const double* sum = &ls->sum[static_cast<std::size_t>(d) * ngroups];
        const int* ord = &ls->order[static_cast<std::size_t>(d) * ls->top];
        const double* sorted = &ls->sorted[static_cast<std::size_t>(d) * ls->top];
        const int top = ls->top;
        for (int i = 0; i < ngroups; ++i) {
          sorted_to(i);
          // Every group not yet seen has base >= by_base[i].base and S >= sorted[i] (past the
          // top: S >= the top's largest, the top all seen); rounding is monotone, so its sum is
          // at least theirs.
          const double b = by_base[i].base;
          if (i < top) {
            if (b + sorted[i] > best_value) break;
            consider(by_base[i].g, b + sum[by_base[i].g]);
            consider(ord[i], base[ord[i]] + sorted[i]);
          } else {
            if (b + sorted[top - 1] > best_value) break;
            consider(by_base[i].g, b + sum[by_base[i].g]);
          }
        }
      } else {
        for (std::size_t k = 0; k < inner.size(); ++k)
          inner_val[k] = inner[k]->val + prefix_offset(inner[k]) + inner[k]->dep_off[last][d];
        for (int i = 0; i < ngroups; ++i) {
          sorted_to(i);
          const int g = by_base[i].g;
          // Summed in the order of the value below, from floors no value is under.
          double bound = by_base[i].base;
          for (const Part* part : inner) bound += part->last_floor[d];
          if (bound > best_value) break;
          double x = by_base[i].base;
          for (std::size_t k = 0; k < inner.size(); ++k) x += inner_val[k][inner[k]->group_off[g]];
          consider(g, x);
        }
      }
      out_val[pre * n_last + d] = best_value;
      out_argmin[pre * n_last + d] = e.gconf[best];
    }
  }
}

// Copies the entries fill_prefixes skipped (class of mirror_a above that of mirror_b) from
// their mirror images.
void mirror(const Elimination& e, std::vector<double>& val, std::vector<int>& argmin) {
  const std::int64_t sa = e.st.stride[e.mirror_a], sb = e.st.stride[e.mirror_b];
  const std::int64_t n_last = e.ncls.back();
  for (std::int64_t at = 0; at < e.entries; at += n_last) {
    const std::int64_t da = at / sa % e.ncls[e.mirror_a], db = at / sb % e.ncls[e.mirror_b];
    if (da <= db) continue;
    const std::int64_t from = at + (db - da) * sa + (da - db) * sb;
    std::copy_n(val.begin() + from, n_last, val.begin() + at);
    std::copy_n(argmin.begin() + from, n_last, argmin.begin() + at);
  }
}

std::uint64_t mix(std::uint64_t h, std::uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

std::uint64_t hash_of(const std::vector<int>& ncls, const std::vector<double>& val) {
  std::uint64_t h = ncls.size();
  for (int c : ncls) h = mix(h, static_cast<std::uint64_t>(c));
  for (double x : val) h = mix(h, bits(x));
  return h;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// Everything an elimination's table and argmins are computed from: the groups' costs and
// configurations, the new table's shape, and per part (in order) the content of its table and
// where each new class and group reads it.
struct StepKey {
  std::vector<std::uint64_t> gcost;
  std::vector<int> gconf;
  std::vector<int> ncls;
  std::vector<int> contents;
  std::vector<std::int64_t> offsets;
  bool operator==(const StepKey&) const = default;
};

struct StepKeyHash {
  std::size_t operator()(const StepKey& k) const {
    std::uint64_t h = 0;
    for (auto x : k.gcost) h = mix(h, x);
    for (int x : k.gconf) h = mix(h, static_cast<std::uint64_t>(x));
    for (int x : k.ncls) h = mix(h, static_cast<std::uint64_t>(x));
    for (int x : k.contents) h = mix(h, static_cast<std::uint64_t>(x));
    for (auto x : k.offsets) h = mix(h, static_cast<std::uint64_t>(x));
    return static_cast<std::size_t>(h);
  }
};

struct Reused {
  std::shared_ptr<const std::vector<double>> val;
  std::shared_ptr<const std::vector<int>> argmin;
  int content = 0;
};

StepKey step_key(const Elimination& e, const std::vector<Factor>& factors,
                 const std::vector<int>& fs) {
  StepKey k;
  for (double x : e.gcost) k.gcost.push_back(bits(x));
  k.gconf = e.gconf;
  k.ncls = e.ncls;
  for (std::size_t i = 0; i < fs.size(); ++i) {
    k.contents.push_back(factors[fs[i]].content);
    const Part& part = e.parts[i];
    for (const auto& off : part.dep_off) k.offsets.insert(k.offsets.end(), off.begin(), off.end());
    k.offsets.insert(k.offsets.end(), part.group_off.begin(), part.group_off.end());
  }
  return k;
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
  // The network's tables of equal content share a content id (a model repeats its blocks).
  std::map<std::tuple<const std::vector<double>*, int, int>, int> content_of;
  std::unordered_map<std::uint64_t, std::vector<int>> by_hash;
  int contents = 0;
  for (const auto& p : net.pairs) {
    Factor f;
    if (p.u == p.v) throw Error(ErrorKind::kInput, "", "a layer is paired with itself");
    if (!p.cost || p.cost->size() != static_cast<std::size_t>(p.u_classes) * p.v_classes)
      throw Error(ErrorKind::kInput, "",
                  "the table of a layer pair does not have classes(u) x classes(v) entries");
    f.vars = {p.u, p.v};
    f.cls = {p.u_class, p.v_class};
    f.ncls = {p.u_classes, p.v_classes};
    f.val = p.cost;  // shared, not copied
    auto [known, fresh] = content_of.try_emplace({p.cost.get(), p.u_classes, p.v_classes}, 0);
    if (fresh) {
      auto& same = by_hash[hash_of(f.ncls, *f.val)];
      auto it = std::find_if(same.begin(), same.end(), [&](int g) {
        return factors[g].ncls == f.ncls && same_bits(*factors[g].val, *f.val);
      });
      known->second = it == same.end() ? contents++ : factors[*it].content;
      if (it == same.end()) same.push_back(static_cast<int>(factors.size()));
    }
    f.content = known->second;
    bucket[p.u].push_back(static_cast<int>(factors.size()));
    bucket[p.v].push_back(static_cast<int>(factors.size()));
    factors.push_back(std::move(f));
  }
  // Eliminations already done, by everything their table depends on: a repeated block's step
  // reuses the table and argmins of its first occurrence.
  std::unordered_map<StepKey, Reused, StepKeyHash> done;
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
    StepKey key = step_key(e, factors, fs);
    auto [memo, fresh] = done.try_emplace(std::move(key));
    if (fresh) {
      auto val = std::make_shared<std::vector<double>>(e.entries, 0.0);
      auto argmin = std::make_shared<std::vector<int>>(e.entries, -1);
      const std::int64_t n_last = nd > 0 ? e.ncls[nd - 1] : 1;
      const std::int64_t prefixes = e.entries / n_last;
      std::vector<const Part*> inner, outer;  // involve the last dependent or not
      for (const auto& part : e.parts) (part.uses_last ? inner : outer).push_back(&part);
      const double work = static_cast<double>(e.entries) * e.ngroups * (1 + e.parts.size());
      LastSums sums;
      if (e.use_last_sums) {
        sums = last_sums(e, inner);
        ++result.threshold_steps;
      }
      const LastSums* ls = e.use_last_sums ? &sums : nullptr;
      if (work > 2e6 && prefixes > 1)
        tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, prefixes, 4),
                          [&](const tbb::blocked_range<std::int64_t>& r) {
                            fill_prefixes(e, inner, outer, ls, val->data(), argmin->data(),
                                          r.begin(), r.end());
                          });
      else
        fill_prefixes(e, inner, outer, ls, val->data(), argmin->data(), 0, prefixes);
      if (e.mirror_a >= 0) {
        mirror(e, *val, *argmin);
        ++result.mirrored_steps;
      }
      memo->second = {std::move(val), std::move(argmin), contents++};
    } else {
      ++result.reused_steps;
    }
    out.val = memo->second.val;
    out.content = memo->second.content;
    e.st.argmin = memo->second.argmin;
    for (int f : fs) {
      factors[f].alive = false;
      factors[f].val = {};
    }
    if (nd == 0) {
      result.table_minimum += (*out.val)[0];  // a connected component is done
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
    result.choice[it->v] = (*it->argmin)[idx];
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
