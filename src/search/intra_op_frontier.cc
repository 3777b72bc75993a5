#include "search/intra_op_frontier.h"

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "ir/error.h"
#include "search/intra_op.h"
#include "search/intra_op_frontier_points.h"
#include "search/pareto_sets.h"

namespace paraplan {
namespace {

using pareto::CombinedCache;
using pareto::Point;
using pareto::prune;
using pareto::sum_pruned;

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

Refinement refine_partitions(const std::vector<const std::vector<int>*>& partitions,
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
  std::vector<double> fastest, leanest;   ///< per entry: its set's least time and memory
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

struct FillTable;
struct FillChunk;
struct FillScratch;
// Workers a table's entries are split for (chunks of at least 32 entries, eight per worker).
constexpr std::int64_t kFillWorkers = 16;

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
  void fill_entries(const FillTable& t, Message& m, FillChunk& chunk, FillScratch& scratch);
  std::vector<IntraOpFrontierPoint> finish();
  // Called from several workers at once.
  void count(std::size_t points) {
    if (deadline_ && std::chrono::steady_clock::now() > *deadline_)
      throw Error(ErrorKind::kLimit, "",
                  "the frontier's search ran out of its time; ask for a coarser frontier (a "
                  "larger memory step), fewer devices or splits by powers of two");
    const auto n = static_cast<std::int64_t>(points);
    const std::int64_t stored = stored_ += n;
    std::int64_t largest = largest_.load();
    while (n > largest && !largest_.compare_exchange_weak(largest, n)) {
    }
    if (stored > max_points_)
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
  std::atomic<std::int64_t> stored_{0}, largest_{0};
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
    slots.push_back(refine_partitions(partitions[s], allowed_[m.scope[s]]));
    entries *= slots.back().size();
    if (entries > max_points_) count(static_cast<std::size_t>(entries));
  }
  m.stride.assign(m.scope.size(), 1);
  for (int s = static_cast<int>(m.scope.size()) - 2; s >= 0; --s)
    m.stride[s] = m.stride[s + 1] * slots[s + 1].size();
  for (const Refinement& r : slots) m.classes.push_back(r.of_config);
  const Refinement own = refine_partitions(own_partitions, allowed_[v]);
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
    sum_pruned(from, from_store, inputs[k]->sets[ats[k]], static_cast<int>(k), width, step,
               level.points, level.store);
  }
  return levels.back();
}

// Room the combined-set cache makes before each entry, per class (a set that does not fit is used
// uncached).
constexpr std::size_t kRoomPerClass = 64;

// What filling one table needs, read-only: the eliminated variable's classes and their sets, the
// inputs, and what each class adds to a pair factor's row or column and to an input's entry (the
// rest depends on the entry alone).
struct FillTable {
  const IntraOpNetwork* net = nullptr;
  const std::vector<int>* bucket_pairs = nullptr;
  const std::vector<Refinement>* slots = nullptr;
  const std::vector<std::vector<Source>>* pair_sources = nullptr;
  const std::vector<std::vector<Source>>* message_sources = nullptr;
  std::vector<const Message*> inputs;
  std::vector<std::vector<Point>> groups;  ///< per class, its configurations' Pareto set
  std::vector<int> own_store;
  std::vector<std::int64_t> own_pair, own_at;
  std::vector<const double*> pair_cost;  ///< per bucket pair, its cost table
  int width = 1, n_inputs = 0, n_pairs = 0;
  std::int64_t entries = 0;
  double step = 0;
  int classes() const { return static_cast<int>(groups.size()); }
};

// One worker's share of a table: entries [begin, end), their tuples in its own store.
struct FillChunk {
  std::int64_t begin = 0, end = 0;
  std::vector<int> store;
};

std::vector<std::int64_t> entries_of(const std::vector<const Message*>& inputs) {
  std::vector<std::int64_t> sizes;
  for (const Message* in : inputs) sizes.push_back(static_cast<std::int64_t>(in->sets.size()));
  return sizes;
}

// What one worker keeps while filling a table: the classes' partial sets, the cache of combined
// sets, and the buffers of one entry.
struct FillScratch {
  explicit FillScratch(const FillTable& t)
      : levels(t.classes(), std::vector<Level>(t.n_inputs)),
        cache(t.classes(), entries_of(t.inputs), static_cast<double>(t.entries) * t.classes()),
        ats(static_cast<std::size_t>(t.classes()) * t.n_inputs),
        offers(t.classes()) {}
  std::vector<std::vector<Level>> levels;
  CombinedCache cache;
  std::vector<std::int64_t> ats;
  std::vector<pareto::Offer> offers;  ///< per class at the entry: its corner and the pairs' cost
  pareto::UnionPruned merge;
  std::vector<Point> kept;  ///< the entry's set, `prov` indexing `tuples`
  std::vector<const int*> tuples;
};

void FrontierSolve::fill(Message& m, int v, const std::vector<int>& bucket_pairs,
                         const std::vector<Refinement>& slots, const Refinement& own,
                         const std::vector<std::vector<Source>>& pair_sources,
                         const std::vector<std::vector<Source>>& message_sources) {
  FillTable t;
  t.net = &net_;
  t.bucket_pairs = &bucket_pairs;
  t.slots = &slots;
  t.pair_sources = &pair_sources;
  t.message_sources = &message_sources;
  t.width = 1 + static_cast<int>(m.inputs.size());
  t.n_inputs = static_cast<int>(m.inputs.size());
  t.n_pairs = static_cast<int>(bucket_pairs.size());
  t.step = step_;
  t.entries = static_cast<std::int64_t>(m.sets.size());
  for (int i : m.inputs) t.inputs.push_back(&messages_[i]);
  t.groups.resize(own.size());
  for (int c = 0; c < static_cast<int>(own.of_config.size()); ++c) {
    if (own.of_config[c] < 0) continue;
    t.groups[own.of_config[c]].push_back(
        {net_.unary[v][c], memory_[v][c], static_cast<std::int64_t>(t.own_store.size())});
    t.own_store.push_back(c);
    t.own_store.insert(t.own_store.end(), t.width - 1, -1);
  }
  for (auto& g : t.groups) prune(g, t.own_store, t.width, step_);
  for (int p : bucket_pairs) t.pair_cost.push_back(net_.pairs[p].cost->data());
  t.own_pair.assign(static_cast<std::size_t>(own.size()) * t.n_pairs, 0);
  t.own_at.assign(static_cast<std::size_t>(own.size()) * t.n_inputs, 0);
  for (int g = 0; g < own.size(); ++g) {
    for (int j = 0; j < t.n_pairs; ++j) {
      const PairFactor& f = net_.pairs[bucket_pairs[j]];
      const Source& u = pair_sources[j][0];
      const Source& w = pair_sources[j][1];
      if (u.slot < 0) t.own_pair[g * t.n_pairs + j] += own.parts[g][u.part] * f.v_classes;
      if (w.slot < 0) t.own_pair[g * t.n_pairs + j] += own.parts[g][w.part];
    }
    for (int k = 0; k < t.n_inputs; ++k)
      for (std::size_t i = 0; i < t.inputs[k]->scope.size(); ++i)
        if (message_sources[k][i].slot < 0)
          t.own_at[g * t.n_inputs + k] +=
              own.parts[g][message_sources[k][i].part] * t.inputs[k]->stride[i];
  }

  // Entries are independent: contiguous chunks on the workers (each with its own caches, which
  // never change an answer), their tuples joined in entry order.
  const auto entries = static_cast<std::int64_t>(m.sets.size());
  const std::int64_t chunk_size =
      std::max<std::int64_t>(32, (entries + 8 * kFillWorkers - 1) / (8 * kFillWorkers));
  std::vector<FillChunk> chunks;
  for (std::int64_t b = 0; b < entries; b += chunk_size)
    chunks.push_back({b, std::min(entries, b + chunk_size), {}});
  tbb::enumerable_thread_specific<FillScratch> scratch([&] { return FillScratch(t); });
  tbb::parallel_for(std::size_t{0}, chunks.size(),
                    [&](std::size_t i) { fill_entries(t, m, chunks[i], scratch.local()); });
  m.fastest.assign(m.sets.size(), 0);
  m.leanest.assign(m.sets.size(), 0);
  for (std::size_t e = 0; e < m.sets.size(); ++e)
    if (!m.sets[e].empty()) {
      m.fastest[e] = m.sets[e].front().time;
      m.leanest[e] = m.sets[e].back().memory;
    }
  for (FillChunk& chunk : chunks) {
    const auto offset = static_cast<std::int64_t>(m.store.size());
    m.store.insert(m.store.end(), chunk.store.begin(), chunk.store.end());
    for (std::int64_t e = chunk.begin; e < chunk.end; ++e)
      for (Point& p : m.sets[e]) p.prov += offset;
  }
}

// The set class g offers at the entry (its configurations' set combined with each input at the
// entry it reads): kept by that key, and the earlier inputs' partial sets reused while their
// entries stay (inputs depending on slow-changing slots come first).
pareto::View combined(const FillTable& t, FillScratch& x, int g) {
  pareto::View set{t.groups[g].data(), t.groups[g].data() + t.groups[g].size(), t.own_store.data()};
  if (t.n_inputs == 0) return set;
  const std::int64_t* at = &x.ats[static_cast<std::size_t>(g) * t.n_inputs];
  if (x.cache.find(g, at, set)) return set;
  const Level& level =
      recombine(x.levels[g], t.groups[g], t.own_store, at, t.inputs, t.width, t.step);
  return x.cache.keep(g, at, level.points, level.store, t.width);
}

// Fills entries [chunk.begin, chunk.end) of m: per entry, each class's corner (fastest time, least
// memory of all its points) and the pair factors' cost (one constant per class and entry, added
// last), then the pruned union of the classes' sets, a class combined with its inputs only where
// it can contribute.
void FrontierSolve::fill_entries(const FillTable& t, Message& m, FillChunk& chunk, FillScratch& x) {
  const int n_inputs = t.n_inputs, n_pairs = t.n_pairs, width = t.width;
  const std::vector<Refinement>& slots = *t.slots;
  const int n_slots = static_cast<int>(slots.size());
  std::vector<int> digit(n_slots, 0);
  auto class_at = [&](const Source& s) { return slots[s.slot].parts[digit[s.slot]][s.part]; };
  std::vector<std::int64_t> entry_pair(n_pairs), entry_at(n_inputs);
  const std::function<pareto::View(int)> fetch = [&](int g) { return combined(t, x, g); };
  for (std::int64_t e = chunk.begin; e < chunk.end; ++e) {
    std::int64_t rest = e;
    for (int s = n_slots - 1; s >= 0; --s) {
      digit[s] = static_cast<int>(rest % slots[s].size());
      rest /= slots[s].size();
    }
    for (int j = 0; j < n_pairs; ++j) {
      const Source& u = (*t.pair_sources)[j][0];
      const Source& w = (*t.pair_sources)[j][1];
      entry_pair[j] =
          (u.slot < 0 ? 0 : class_at(u) * t.net->pairs[(*t.bucket_pairs)[j]].v_classes) +
          (w.slot < 0 ? 0 : class_at(w));
    }
    for (int k = 0; k < n_inputs; ++k) {
      entry_at[k] = 0;
      for (std::size_t i = 0; i < t.inputs[k]->scope.size(); ++i)
        if ((*t.message_sources)[k][i].slot >= 0)
          entry_at[k] += class_at((*t.message_sources)[k][i]) * t.inputs[k]->stride[i];
    }
    x.cache.make_room(static_cast<std::size_t>(t.classes()) * kRoomPerClass, width);
    for (int g = 0; g < t.classes(); ++g) {
      double base = 0;
      for (int j = 0; j < n_pairs; ++j)
        base += t.pair_cost[j][entry_pair[j] + t.own_pair[g * n_pairs + j]];
      // Summed in the order the points are, so the corner bounds their rounded sums too.
      double time = t.groups[g].front().time, memory = t.groups[g].back().memory;
      for (int k = 0; k < n_inputs; ++k) {
        const std::int64_t at = entry_at[k] + t.own_at[g * n_inputs + k];
        x.ats[static_cast<std::size_t>(g) * n_inputs + k] = at;
        time += t.inputs[k]->fastest[at];
        memory += t.inputs[k]->leanest[at];
      }
      x.offers[g] = {time + base, memory, base};
    }
    x.merge.run(x.offers, fetch, width, t.step, x.kept, x.tuples);
    std::vector<Point>& set = m.sets[e];
    set.assign(x.kept.begin(), x.kept.end());
    for (Point& p : set) {
      const int* tuple = x.tuples[p.prov];
      p.prov = static_cast<std::int64_t>(chunk.store.size());
      chunk.store.insert(chunk.store.end(), tuple, tuple + width);
    }
    count(set.size());
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

}  // namespace

IntraOpFrontierResult intra_op_frontier(const IntraOpNetwork& net,
                                        const IntraOpResources& resources,
                                        const IntraOpFrontierOptions& options) {
  intra_op_frontier_detail::check(net, resources);
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

  // One solve per device bound, side by side (the largest bound, the longest, first); their
  // points joined in bound order.
  struct Solved {
    bool feasible = false;
    std::vector<IntraOpFrontierPoint> points;
    std::int64_t stored = 0, largest = 0;
  };
  std::vector<Solved> solved(bounds.size());
  tbb::parallel_for(std::size_t{0}, bounds.size(), [&](std::size_t i) {
    const int bound = bounds[bounds.size() - 1 - i];
    Solved& out = solved[bounds.size() - 1 - i];
    std::vector<std::vector<char>> allowed(net.size());
    for (int v = 0; v < net.size(); ++v) {
      for (int d : resources.devices[v]) allowed[v].push_back(d <= bound);
      if (std::count(allowed[v].begin(), allowed[v].end(), 1) == 0) return;
    }
    FrontierSolve solve(net, resources.memory_bytes, allowed, options.max_points,
                        options.memory_step, deadline);
    out.points = solve.run(order);
    out.stored = solve.stored();
    out.largest = solve.largest();
    out.feasible = true;
  });
  std::vector<IntraOpFrontierPoint> found;
  std::int64_t stored = 0, largest = 0;
  int solves = 0;
  for (Solved& s : solved) {
    if (!s.feasible) continue;
    found.insert(found.end(), s.points.begin(), s.points.end());
    stored += s.stored;
    largest = std::max(largest, s.largest);
    ++solves;
  }
  IntraOpFrontierResult out = intra_op_frontier_detail::collect(net, resources, std::move(found));
  out.solves = solves;
  out.stored_points = stored;
  out.largest_set = largest;
  return out;
}

}  // namespace paraplan
