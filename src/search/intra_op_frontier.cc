#include "search/intra_op_frontier.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "ir/error.h"
#include "search/frontier.h"
#include "search/intra_op.h"

namespace paraplan {
namespace {

// One point of a table entry; `prov` is where its provenance tuple starts in the table's store:
// the eliminated variable's configuration, then the point it took from each input message.
struct Point {
  double time = 0;
  double memory = 0;
  std::int64_t prov = 0;
};

// Sorts by (time, memory, provenance tuple) and keeps the points of strictly falling memory (with
// a step ε, falling by more than the fraction ε, and the leanest): the Pareto set, the same
// whatever order the points came in. The fastest and the leanest point are always kept, so the
// frontier's two ends are exact under any step.
void prune(std::vector<Point>& points, const std::vector<int>& store, int width, double step) {
  std::sort(points.begin(), points.end(), [&](const Point& a, const Point& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.memory != b.memory) return a.memory < b.memory;
    return std::lexicographical_compare(store.begin() + a.prov, store.begin() + a.prov + width,
                                        store.begin() + b.prov, store.begin() + b.prov + width);
  });
  std::size_t kept = 0, leanest = 0;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].memory < points[leanest].memory) leanest = i;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (kept == 0 || points[i].memory < points[kept - 1].memory * (1 - step) ||
        (i == leanest && points[i].memory < points[kept - 1].memory))
      points[kept++] = points[i];
  points.resize(kept);
}

// Appends a copy of the tuple at `from` (the store may grow under it, so by value).
std::int64_t append_copy(std::vector<int>& store, std::int64_t from, int width) {
  const std::int64_t at = static_cast<std::int64_t>(store.size());
  for (int w = 0; w < width; ++w) {
    const int value = store[from + w];
    store.push_back(value);
  }
  return at;
}

// The common refinement of several partitions of one variable's configurations (each maps a
// configuration to a class); configurations not allowed get no class (-1).
struct Refinement {
  std::vector<int> of_config;
  std::vector<std::vector<int>> parts;  ///< class -> its class in each partition
  int size() const { return static_cast<int>(parts.size()); }
};

Refinement refine(const std::vector<const std::vector<int>*>& partitions,
                  const std::vector<char>& allowed) {
  Refinement r;
  r.of_config.assign(allowed.size(), -1);
  std::map<std::vector<int>, int> ids;
  for (std::size_t c = 0; c < allowed.size(); ++c) {
    if (!allowed[c]) continue;
    std::vector<int> key;
    key.reserve(partitions.size());
    for (const auto* partition : partitions) key.push_back((*partition)[c]);
    auto [it, inserted] = ids.emplace(key, r.size());
    if (inserted) r.parts.push_back(std::move(key));
    r.of_config[c] = it->second;
  }
  return r;
}

// What eliminating a variable leaves: a table over the classes of the variables it still
// depends on, each entry a Pareto set.
struct Message {
  int var = -1;
  std::vector<int> scope;                 ///< variables, ascending
  std::vector<std::vector<int>> classes;  ///< per scope variable: configuration -> class
  std::vector<std::int64_t> stride;       ///< row-major over the scope's classes
  std::vector<std::vector<Point>> sets;   ///< per entry
  std::vector<int> inputs;                ///< messages consumed, in the tuples' order
  std::vector<int> store;                 ///< provenance tuples, 1 + inputs.size() ints each
  bool consumed = false;

  std::int64_t entry(const std::vector<int>& choice) const {
    std::int64_t e = 0;
    for (std::size_t i = 0; i < scope.size(); ++i) e += classes[i][choice[scope[i]]] * stride[i];
    return e;
  }
};

// Where a factor of the eliminated variable's bucket finds one of its variables' classes: in the
// refinement of the variable `slot` (-1: the eliminated variable) at partition `part`.
struct Source {
  int slot = -1;
  int part = 0;
};

class FrontierSolve {
 public:
  FrontierSolve(const IntraOpNetwork& net, const std::vector<std::vector<double>>& memory,
                const std::vector<std::vector<char>>& allowed, std::int64_t max_points, double step,
                std::optional<std::chrono::steady_clock::time_point> deadline)
      : deadline_(deadline),
        net_(net),
        memory_(memory),
        allowed_(allowed),
        max_points_(max_points),
        step_(step) {
    pairs_of_.resize(net.size());
    for (int p = 0; p < static_cast<int>(net.pairs.size()); ++p) {
      pairs_of_[net.pairs[p].u].push_back(p);
      pairs_of_[net.pairs[p].v].push_back(p);
    }
    pair_used_.assign(net.pairs.size(), 0);
  }

  std::vector<IntraOpFrontierPoint> run(const std::vector<int>& order) {
    for (int v : order) eliminate(v);
    return finish();
  }
  std::int64_t stored() const { return stored_; }
  std::int64_t largest() const { return largest_; }

 private:
  void eliminate(int v);
  void fill(Message& m, int v, const std::vector<int>& bucket_pairs,
            const std::vector<Refinement>& slots, const Refinement& own,
            const std::vector<std::vector<Source>>& pair_sources,
            const std::vector<std::vector<Source>>& message_sources);
  std::vector<IntraOpFrontierPoint> finish();
  void count(std::size_t points) {
    if (deadline_ && std::chrono::steady_clock::now() > *deadline_)
      throw Error(ErrorKind::kLimit, "",
                  "the frontier's search ran out of its time; ask for a coarser frontier (a "
                  "larger memory step), fewer devices or splits by powers of two");
    stored_ += static_cast<std::int64_t>(points);
    largest_ = std::max(largest_, static_cast<std::int64_t>(points));
    if (stored_ > max_points_)
      throw Error(
          ErrorKind::kLimit, "",
          fmt::format("the frontier's tables would hold more than {} points at once; "
                      "ask for a coarser frontier (a memory step{}), fewer devices or "
                      "splits by powers of two",
                      max_points_, step_ > 0 ? fmt::format(" above {:g}", step_) : ", e.g. 0.01"));
  }

  std::optional<std::chrono::steady_clock::time_point> deadline_;
  const IntraOpNetwork& net_;
  const std::vector<std::vector<double>>& memory_;
  const std::vector<std::vector<char>>& allowed_;
  std::int64_t max_points_;
  std::vector<std::vector<int>> pairs_of_;
  std::vector<char> pair_used_;
  std::vector<Message> messages_;
  std::int64_t stored_ = 0, largest_ = 0;
  double step_ = 0;
};

void FrontierSolve::eliminate(int v) {
  Message m;
  m.var = v;
  std::vector<int> bucket_pairs;
  for (int p : pairs_of_[v])
    if (!pair_used_[p]) {
      pair_used_[p] = 1;
      bucket_pairs.push_back(p);
    }
  for (int i = 0; i < static_cast<int>(messages_.size()); ++i) {
    Message& in = messages_[i];
    if (in.consumed || !std::binary_search(in.scope.begin(), in.scope.end(), v)) continue;
    in.consumed = true;
    m.inputs.push_back(i);
  }
  for (int p : bucket_pairs)
    m.scope.push_back(net_.pairs[p].u == v ? net_.pairs[p].v : net_.pairs[p].u);
  for (int i : m.inputs)
    for (int w : messages_[i].scope)
      if (w != v) m.scope.push_back(w);
  std::sort(m.scope.begin(), m.scope.end());
  m.scope.erase(std::unique(m.scope.begin(), m.scope.end()), m.scope.end());
  auto slot_of = [&](int w) {
    if (w == v) return -1;
    return static_cast<int>(std::lower_bound(m.scope.begin(), m.scope.end(), w) - m.scope.begin());
  };

  // Every partition each variable is seen through, and where each factor finds its classes.
  std::vector<std::vector<const std::vector<int>*>> partitions(m.scope.size());
  std::vector<const std::vector<int>*> own_partitions;
  auto add = [&](int w, const std::vector<int>* partition) {
    const int slot = slot_of(w);
    auto& list = slot < 0 ? own_partitions : partitions[slot];
    list.push_back(partition);
    return Source{slot, static_cast<int>(list.size()) - 1};
  };
  std::vector<std::vector<Source>> pair_sources, message_sources;
  for (int p : bucket_pairs) {
    const PairFactor& f = net_.pairs[p];
    pair_sources.push_back({add(f.u, &f.u_class), add(f.v, &f.v_class)});
  }
  for (int i : m.inputs) {
    const Message& in = messages_[i];
    std::vector<Source> sources;
    for (std::size_t k = 0; k < in.scope.size(); ++k)
      sources.push_back(add(in.scope[k], &in.classes[k]));
    message_sources.push_back(std::move(sources));
  }
  std::vector<Refinement> slots;
  std::int64_t entries = 1;
  for (std::size_t s = 0; s < m.scope.size(); ++s) {
    slots.push_back(refine(partitions[s], allowed_[m.scope[s]]));
    entries *= slots.back().size();
    if (entries > max_points_) count(static_cast<std::size_t>(entries));
  }
  m.stride.assign(m.scope.size(), 1);
  for (int s = static_cast<int>(m.scope.size()) - 2; s >= 0; --s)
    m.stride[s] = m.stride[s + 1] * slots[s + 1].size();
  for (const Refinement& r : slots) m.classes.push_back(r.of_config);
  const Refinement own = refine(own_partitions, allowed_[v]);
  m.sets.resize(entries);
  fill(m, v, bucket_pairs, slots, own, pair_sources, message_sources);
  messages_.push_back(std::move(m));
}

void FrontierSolve::fill(Message& m, int v, const std::vector<int>& bucket_pairs,
                         const std::vector<Refinement>& slots, const Refinement& own,
                         const std::vector<std::vector<Source>>& pair_sources,
                         const std::vector<std::vector<Source>>& message_sources) {
  const int width = 1 + static_cast<int>(m.inputs.size());
  // The eliminated variable's configurations by class, each class's (time, memory) Pareto set.
  std::vector<std::vector<Point>> groups(own.size());
  std::vector<int> own_store;
  for (int c = 0; c < static_cast<int>(own.of_config.size()); ++c) {
    if (own.of_config[c] < 0) continue;
    groups[own.of_config[c]].push_back(
        {net_.unary[v][c], memory_[v][c], static_cast<std::int64_t>(own_store.size())});
    own_store.push_back(c);
    own_store.insert(own_store.end(), width - 1, -1);
  }
  for (auto& g : groups) prune(g, own_store, width, step_);

  const int n_slots = static_cast<int>(slots.size());
  std::vector<int> digit(n_slots, 0);
  auto class_at = [&](const Source& s, int group) {
    return s.slot < 0 ? own.parts[group][s.part] : slots[s.slot].parts[digit[s.slot]][s.part];
  };
  std::vector<Point> candidates, current, next;
  std::vector<int> store;
  for (std::int64_t e = 0; e < static_cast<std::int64_t>(m.sets.size()); ++e) {
    std::int64_t rest = e;
    for (int s = n_slots - 1; s >= 0; --s) {
      digit[s] = static_cast<int>(rest % slots[s].size());
      rest /= slots[s].size();
    }
    candidates.clear();
    store.clear();
    for (int g = 0; g < own.size(); ++g) {
      double base = 0;
      for (std::size_t j = 0; j < bucket_pairs.size(); ++j) {
        const PairFactor& f = net_.pairs[bucket_pairs[j]];
        base += (*f.cost)[class_at(pair_sources[j][0], g) * f.v_classes +
                          class_at(pair_sources[j][1], g)];
      }
      current.clear();
      for (const Point& p : groups[g]) {
        current.push_back({p.time + base, p.memory, static_cast<std::int64_t>(store.size())});
        store.insert(store.end(), own_store.begin() + p.prov, own_store.begin() + p.prov + width);
      }
      for (std::size_t k = 0; k < m.inputs.size(); ++k) {
        const Message& in = messages_[m.inputs[k]];
        std::int64_t at = 0;
        for (std::size_t i = 0; i < in.scope.size(); ++i)
          at += class_at(message_sources[k][i], g) * in.stride[i];
        const std::vector<Point>& set = in.sets[at];
        next.clear();
        for (const Point& a : current)
          for (std::size_t b = 0; b < set.size(); ++b) {
            next.push_back({a.time + set[b].time, a.memory + set[b].memory,
                            append_copy(store, a.prov, width)});
            store[next.back().prov + 1 + k] = static_cast<int>(b);
          }
        prune(next, store, width, step_);
        current.swap(next);
      }
      candidates.insert(candidates.end(), current.begin(), current.end());
    }
    prune(candidates, store, width, step_);
    for (Point& p : candidates) {
      const std::int64_t at = static_cast<std::int64_t>(m.store.size());
      m.store.insert(m.store.end(), store.begin() + p.prov, store.begin() + p.prov + width);
      p.prov = at;
    }
    count(candidates.size());
    m.sets[e] = candidates;
  }
}

std::vector<IntraOpFrontierPoint> FrontierSolve::finish() {
  std::vector<int> roots;
  for (int i = 0; i < static_cast<int>(messages_.size()); ++i)
    if (!messages_[i].consumed) roots.push_back(i);
  const int width = static_cast<int>(roots.size());
  std::vector<Point> current{{0, 0, 0}}, next;
  std::vector<int> store(width, -1);
  for (int k = 0; k < width; ++k) {
    const std::vector<Point>& set = messages_[roots[k]].sets[0];
    next.clear();
    for (const Point& a : current)
      for (std::size_t b = 0; b < set.size(); ++b) {
        next.push_back(
            {a.time + set[b].time, a.memory + set[b].memory, append_copy(store, a.prov, width)});
        store[next.back().prov + k] = static_cast<int>(b);
      }
    prune(next, store, width, step_);
    current.swap(next);
  }
  std::vector<IntraOpFrontierPoint> out;
  for (const Point& p : current) {
    std::vector<int> selected(messages_.size(), -1);
    for (int k = 0; k < width; ++k) selected[roots[k]] = store[p.prov + k];
    std::vector<int> choice(net_.size(), -1);
    for (int i = static_cast<int>(messages_.size()) - 1; i >= 0; --i) {
      const Message& m = messages_[i];
      const Point& q = m.sets[m.entry(choice)][selected[i]];
      choice[m.var] = m.store[q.prov];
      for (std::size_t k = 0; k < m.inputs.size(); ++k)
        selected[m.inputs[k]] = m.store[q.prov + 1 + k];
    }
    out.push_back({p.time, p.memory, 0, std::move(choice)});
  }
  return out;
}

void check(const IntraOpNetwork& net, const IntraOpResources& r) {
  const bool ok = static_cast<int>(r.memory_bytes.size()) == net.size() &&
                  static_cast<int>(r.devices.size()) == net.size();
  for (int v = 0; ok && v < net.size(); ++v)
    if (r.memory_bytes[v].size() != net.unary[v].size() ||
        r.devices[v].size() != net.unary[v].size())
      throw Error(ErrorKind::kInput, "", fmt::format("variable {}: resources do not match", v));
  if (!ok) throw Error(ErrorKind::kInput, "", "the resources do not match the network");
}

struct ChoiceBefore {
  bool operator()(const std::vector<int>& a, const std::vector<int>& b) const { return a < b; }
};

IntraOpFrontierResult collect(const IntraOpNetwork& net, const IntraOpResources& r,
                              std::vector<IntraOpFrontierPoint> found) {
  ParetoSet<std::vector<int>, ChoiceBefore> set;
  std::vector<std::pair<Objectives, IntraOpFrontierPoint>> by_objectives;
  for (auto& p : found) {
    p.devices = 0;
    for (int v = 0; v < net.size(); ++v) p.devices = std::max(p.devices, r.devices[v][p.choice[v]]);
    set.offer({p.objective, p.memory_bytes, p.devices}, p.choice);
  }
  IntraOpFrontierResult out;
  for (auto& [o, choice] : set.sorted())
    out.points.push_back({net.evaluate(choice), o.peak_bytes, o.devices, choice});
  return out;
}

}  // namespace

IntraOpFrontierResult intra_op_frontier(const IntraOpNetwork& net,
                                        const IntraOpResources& resources,
                                        const IntraOpFrontierOptions& options) {
  check(net, resources);
  if (!(options.memory_step >= 0 && options.memory_step < 1))
    throw Error(ErrorKind::kInput, "", "the memory step must be in [0, 1)");
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options.time_limit_s > 0)
    deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(options.time_limit_s));
  std::vector<int> bounds;
  for (const auto& per_config : resources.devices)
    bounds.insert(bounds.end(), per_config.begin(), per_config.end());
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  const std::vector<int> by_degree = min_degree_order(net), by_weight = min_weight_order(net);
  const std::vector<int>& order =
      elimination_stats(net, by_weight).total_rows < elimination_stats(net, by_degree).total_rows
          ? by_weight
          : by_degree;

  std::vector<IntraOpFrontierPoint> found;
  std::int64_t stored = 0, largest = 0;
  int solves = 0;
  for (int bound : bounds) {
    std::vector<std::vector<char>> allowed(net.size());
    bool feasible = true;
    for (int v = 0; v < net.size(); ++v) {
      for (int d : resources.devices[v]) allowed[v].push_back(d <= bound);
      feasible = feasible && std::count(allowed[v].begin(), allowed[v].end(), 1) > 0;
    }
    if (!feasible) continue;
    FrontierSolve solve(net, resources.memory_bytes, allowed, options.max_points,
                        options.memory_step, deadline);
    std::vector<IntraOpFrontierPoint> points = solve.run(order);
    found.insert(found.end(), points.begin(), points.end());
    stored += solve.stored();
    largest = std::max(largest, solve.largest());
    ++solves;
  }
  IntraOpFrontierResult out = collect(net, resources, std::move(found));
  out.solves = solves;
  out.stored_points = stored;
  out.largest_set = largest;
  return out;
}

IntraOpFrontierResult brute_force_intra_op_frontier(const IntraOpNetwork& net,
                                                    const IntraOpResources& resources,
                                                    const IntraOpFrontierOptions&) {
  check(net, resources);
  std::vector<IntraOpFrontierPoint> found;
  std::vector<int> c(net.size(), 0);
  while (true) {
    double memory = 0;
    for (int v = 0; v < net.size(); ++v) memory += resources.memory_bytes[v][c[v]];
    found.push_back({net.evaluate(c), memory, 0, c});
    int i = net.size() - 1;
    while (i >= 0 && ++c[i] == static_cast<int>(net.unary[i].size())) c[i--] = 0;
    if (i < 0) break;
  }
  return collect(net, resources, std::move(found));
}

}  // namespace paraplan
