#include "search/intra_op_frontier.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <unordered_map>
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
  // Inputs read at slow-changing entries first (fill reuses their combinations): by the fastest
  // scope slot each depends on, then by message.
  auto last_slot = [&](int i) {
    int last = -1;
    for (int w : messages_[i].scope)
      if (w != v)
        last = std::max(last, static_cast<int>(std::lower_bound(m.scope.begin(), m.scope.end(), w) -
                                               m.scope.begin()));
    return last;
  };
  std::stable_sort(m.inputs.begin(), m.inputs.end(),
                   [&](int a, int b) { return last_slot(a) < last_slot(b); });
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

// One eliminated class's set combined with the inputs 0..k, read at entry `at` of input k.
struct Level {
  std::int64_t at = -1;
  std::vector<Point> points;
  std::vector<int> store;
};

// Recombines a class's partial sets from the first input whose entry changed (`ats`: the entry of
// each input now) and returns the last; the levels before it are reused as they are.
const Level& recombine(std::vector<Level>& levels, const std::vector<Point>& group,
                       const std::vector<int>& group_store, const std::int64_t* ats,
                       const std::vector<const Message*>& inputs, int width, double step) {
  bool stale = false;
  for (std::size_t k = 0; k < levels.size(); ++k) {
    Level& level = levels[k];
    if (!stale && level.at == ats[k]) continue;
    stale = true;
    level.at = ats[k];
    const std::vector<Point>& from = k == 0 ? group : levels[k - 1].points;
    const std::vector<int>& from_store = k == 0 ? group_store : levels[k - 1].store;
    const std::vector<Point>& set = inputs[k]->sets[ats[k]];
    level.points.clear();
    level.store.clear();
    for (const Point& a : from)
      for (std::size_t b = 0; b < set.size(); ++b) {
        const auto at_store = static_cast<std::int64_t>(level.store.size());
        level.store.insert(level.store.end(), from_store.begin() + a.prov,
                           from_store.begin() + a.prov + width);
        level.store[at_store + 1 + static_cast<std::int64_t>(k)] = static_cast<int>(b);
        level.points.push_back({a.time + set[b].time, a.memory + set[b].memory, at_store});
      }
    prune(level.points, level.store, width, step);
  }
  return levels.back();
}

// A class's set combined with every input depends on the class and the inputs' entries alone,
// and the same few recur across a table's entries (Transformer on 16 devices: 18.7 M
// combinations, 0.55 M distinct): kept by that key, up to a bound on the points held (then
// forgotten; the answer never depends on what is kept).
class CombinedCache {
 public:
  CombinedCache(int classes, const std::vector<const Message*>& inputs) {
    // The key is mixed-radix over (class, each input's entry); too wide a key: no cache.
    double span = classes;
    for (const Message* in : inputs) {
      radix_.push_back(static_cast<std::int64_t>(in->sets.size()));
      span *= static_cast<double>(in->sets.size());
    }
    enabled_ = span < 9e18;
  }
  const Level* find(int group, const std::int64_t* ats) const {
    if (!enabled_) return nullptr;
    auto it = kept_.find(key(group, ats));
    return it == kept_.end() ? nullptr : &it->second;
  }
  const Level& keep(int group, const std::int64_t* ats, const Level& combined) {
    if (!enabled_) return combined;
    if (points_ > kMaxPoints) {
      kept_.clear();
      points_ = 0;
    }
    points_ += static_cast<std::int64_t>(combined.points.size());
    return kept_.emplace(key(group, ats), combined).first->second;
  }

 private:
  static constexpr std::int64_t kMaxPoints = std::int64_t{1} << 22;
  std::int64_t key(int group, const std::int64_t* ats) const {
    std::int64_t k = group;
    for (std::size_t i = 0; i < radix_.size(); ++i) k = k * radix_[i] + ats[i];
    return k;
  }
  std::vector<std::int64_t> radix_;
  bool enabled_ = true;
  std::unordered_map<std::int64_t, Level> kept_;
  std::int64_t points_ = 0;
};

// The exact (time, memory) staircase of the points an entry has so far: time ascending, memory
// strictly falling. A point it dominates strictly (as fast and as lean, better in one) is never
// kept by prune under any step, so leaving it out changes nothing.
class Staircase {
 public:
  void clear() { steps_.clear(); }
  bool dominates(double time, double memory) const {
    auto it = std::upper_bound(steps_.begin(), steps_.end(), time,
                               [](double t, const Step& s) { return t < s.time; });
    if (it == steps_.begin()) return false;
    --it;
    return it->memory <= memory && !(it->time == time && it->memory == memory);
  }
  void insert(double time, double memory) {
    auto after = std::upper_bound(steps_.begin(), steps_.end(), time,
                                  [](double t, const Step& s) { return t < s.time; });
    if (after != steps_.begin() && std::prev(after)->memory <= memory) return;
    auto from = std::lower_bound(steps_.begin(), steps_.end(), time,
                                 [](const Step& s, double t) { return s.time < t; });
    auto to = from;
    while (to != steps_.end() && to->memory >= memory) ++to;
    steps_.insert(steps_.erase(from, to), Step{time, memory});
  }

 private:
  struct Step {
    double time, memory;
  };
  std::vector<Step> steps_;
};

void FrontierSolve::fill(Message& m, int v, const std::vector<int>& bucket_pairs,
                         const std::vector<Refinement>& slots, const Refinement& own,
                         const std::vector<std::vector<Source>>& pair_sources,
                         const std::vector<std::vector<Source>>& message_sources) {
  const int width = 1 + static_cast<int>(m.inputs.size());
  const int n_inputs = static_cast<int>(m.inputs.size());
  std::vector<const Message*> inputs;
  for (int i : m.inputs) inputs.push_back(&messages_[i]);
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

  // A class's set combined with inputs 0..k depends only on the entries those inputs are read at:
  // each class keeps its partial sets (inputs depending on slow-changing slots come first, so most
  // entries reuse most levels). The pair factors' cost is one constant per class and entry, added
  // last. Classes go fastest corner first, and a class whose corner (fastest time, least memory
  // of all its points) the entry's staircase dominates is not combined at all.
  std::vector<std::vector<Level>> levels(own.size(), std::vector<Level>(n_inputs));
  CombinedCache cache(own.size(), inputs);
  const int n_slots = static_cast<int>(slots.size());
  std::vector<int> digit(n_slots, 0);
  auto class_at = [&](const Source& s, int group) {
    return s.slot < 0 ? own.parts[group][s.part] : slots[s.slot].parts[digit[s.slot]][s.part];
  };
  // What each class adds to a pair factor's row or column and to an input's entry is fixed; the
  // rest depends on the entry alone.
  const int n_pairs = static_cast<int>(bucket_pairs.size());
  std::vector<std::int64_t> own_pair(static_cast<std::size_t>(own.size()) * n_pairs, 0),
      own_at(static_cast<std::size_t>(own.size()) * n_inputs, 0);
  for (int g = 0; g < own.size(); ++g) {
    for (int j = 0; j < n_pairs; ++j) {
      const PairFactor& f = net_.pairs[bucket_pairs[j]];
      const Source& u = pair_sources[j][0];
      const Source& w = pair_sources[j][1];
      if (u.slot < 0) own_pair[g * n_pairs + j] += own.parts[g][u.part] * f.v_classes;
      if (w.slot < 0) own_pair[g * n_pairs + j] += own.parts[g][w.part];
    }
    for (int k = 0; k < n_inputs; ++k)
      for (std::size_t i = 0; i < inputs[k]->scope.size(); ++i)
        if (message_sources[k][i].slot < 0)
          own_at[g * n_inputs + k] +=
              own.parts[g][message_sources[k][i].part] * inputs[k]->stride[i];
  }
  std::vector<std::int64_t> entry_pair(n_pairs), entry_at(n_inputs);
  std::vector<Point> candidates;
  std::vector<int> store;
  std::vector<std::int64_t> ats(static_cast<std::size_t>(own.size()) * n_inputs);
  std::vector<double> base(own.size()), corner_time(own.size()), corner_memory(own.size());
  std::vector<int> order(own.size());
  Staircase staircase;
  for (std::int64_t e = 0; e < static_cast<std::int64_t>(m.sets.size()); ++e) {
    std::int64_t rest = e;
    for (int s = n_slots - 1; s >= 0; --s) {
      digit[s] = static_cast<int>(rest % slots[s].size());
      rest /= slots[s].size();
    }
    for (int j = 0; j < n_pairs; ++j) {
      const PairFactor& f = net_.pairs[bucket_pairs[j]];
      const Source& u = pair_sources[j][0];
      const Source& w = pair_sources[j][1];
      entry_pair[j] =
          (u.slot < 0 ? 0 : class_at(u, 0) * f.v_classes) + (w.slot < 0 ? 0 : class_at(w, 0));
    }
    for (int k = 0; k < n_inputs; ++k) {
      entry_at[k] = 0;
      for (std::size_t i = 0; i < inputs[k]->scope.size(); ++i)
        if (message_sources[k][i].slot >= 0)
          entry_at[k] += class_at(message_sources[k][i], 0) * inputs[k]->stride[i];
    }
    candidates.clear();
    store.clear();
    staircase.clear();
    for (int g = 0; g < own.size(); ++g) {
      base[g] = 0;
      for (int j = 0; j < n_pairs; ++j)
        base[g] += (*net_.pairs[bucket_pairs[j]].cost)[entry_pair[j] + own_pair[g * n_pairs + j]];
      // Summed in the order the points are, so the corner bounds their rounded sums too.
      double time = groups[g].front().time, memory = groups[g].back().memory;
      for (int k = 0; k < n_inputs; ++k) {
        const std::int64_t at = entry_at[k] + own_at[g * n_inputs + k];
        ats[static_cast<std::size_t>(g) * n_inputs + k] = at;
        const std::vector<Point>& set = inputs[k]->sets[at];
        time += set.empty() ? 0 : set.front().time;
        memory += set.empty() ? 0 : set.back().memory;
      }
      corner_time[g] = time + base[g];
      corner_memory[g] = memory;
      order[g] = g;
    }
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return corner_time[a] != corner_time[b] ? corner_time[a] < corner_time[b] : a < b;
    });
    for (int g : order) {
      if (staircase.dominates(corner_time[g], corner_memory[g])) continue;
      const Level* combined = nullptr;
      if (n_inputs > 0) {
        const std::int64_t* at = &ats[static_cast<std::size_t>(g) * n_inputs];
        combined = cache.find(g, at);
        if (!combined)
          combined = &cache.keep(
              g, at, recombine(levels[g], groups[g], own_store, at, inputs, width, step_));
      }
      const std::vector<Point>& final_set = combined ? combined->points : groups[g];
      const std::vector<int>& final_store = combined ? combined->store : own_store;
      const std::size_t first = candidates.size();
      for (const Point& p : final_set) {
        if (staircase.dominates(p.time + base[g], p.memory)) continue;
        candidates.push_back({p.time + base[g], p.memory, static_cast<std::int64_t>(store.size())});
        store.insert(store.end(), final_store.begin() + p.prov,
                     final_store.begin() + p.prov + width);
      }
      for (std::size_t i = first; i < candidates.size(); ++i)
        staircase.insert(candidates[i].time, candidates[i].memory);
    }
    // The staircase is now the candidates' exact Pareto set: only the points it does not strictly
    // dominate (it and its ties) can be kept by prune.
    candidates.erase(
        std::remove_if(candidates.begin(), candidates.end(),
                       [&](const Point& p) { return staircase.dominates(p.time, p.memory); }),
        candidates.end());
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
