// Ideal enumeration level by level (by size), each ideal grown once from its spanning-tree parent.
#include "search/ideals.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/error.h"

namespace paraplan {
namespace {

using Words = std::vector<std::uint64_t>;

bool has(const Words& w, int v) { return (w[v / 64] >> (v % 64)) & 1U; }
void set(Words& w, int v) { w[v / 64] |= 1ULL << (v % 64); }

// An ideal of the next level: its layers, the ideal it grows (its spanning-tree parent) and the
// layer added.
struct Grown {
  Words words;
  int parent = 0;
  int layer = 0;
};

// One bit mask of `words` words per layer.
std::vector<std::uint64_t> masks(int n, int words, const std::vector<std::vector<int>>& adj) {
  std::vector<std::uint64_t> m(static_cast<std::size_t>(n) * words, 0);
  for (int v = 0; v < n; ++v)
    for (int w : adj[v]) m[static_cast<std::size_t>(v) * words + w / 64] |= 1ULL << (w % 64);
  return m;
}

}  // namespace

// Each ideal J ≠ ∅ is grown exactly once, from its spanning-tree parent: J minus its smallest
// layer without a predecessor in J. Growing I by v (every successor of v in I; v never has a
// predecessor in I ∪ {v}, as I is successor-closed) is that parent step when no layer u < v of
// I is free in I ∪ {v}: free in I (no predecessor in I) and not a successor of v. No duplicate
// is ever generated, so no set of seen ideals is kept. A level is numbered in the order of its
// bit words, as before.
IdealLattice IdealLattice::build(const Model& model, std::size_t max_ideals) {
  IdealLattice lat;
  const int n = model.size();
  const int words = (n + 63) / 64;
  lat.layers_ = n;
  lat.words_ = words;
  std::vector<std::vector<int>> succ(n), pred(n);
  for (const auto& e : model.edges) succ[e.from].push_back(e.to), pred[e.to].push_back(e.from);
  const std::vector<std::uint64_t> succ_mask = masks(n, words, succ);
  const auto row = [words](const std::vector<std::uint64_t>& m, int v) {
    return &m[static_cast<std::size_t>(v) * words];
  };
  const auto too_many = [max_ideals] {
    return Error(ErrorKind::kLimit, "",
                 fmt::format("the model graph has more than {} successor-closed layer sets (its "
                             "branches are too wide for exact contiguous-stage search); merge "
                             "parallel branches or raise --max-ideals",
                             max_ideals));
  };
  std::vector<Grown> level{Grown{Words(words, 0), -1, -1}};
  Words free(words);
  for (int size = 0; size <= n && !level.empty(); ++size) {
    std::sort(level.begin(), level.end(),
              [](const Grown& a, const Grown& b) { return a.words < b.words; });
    const int first = lat.count();
    for (const Grown& g : level) {
      if (g.parent >= 0) lat.children_[g.parent].push_back({g.layer, lat.count()});
      lat.bits_.insert(lat.bits_.end(), g.words.begin(), g.words.end());
      lat.sizes_.push_back(size);
      lat.children_.emplace_back();
    }
    if (static_cast<std::size_t>(lat.count()) > max_ideals) throw too_many();
    std::vector<Grown> next;
    for (std::size_t i = 0; i < level.size(); ++i) {
      const Words& k = level[i].words;
      for (int u = 0; u < n; ++u) {  // the layers of I without a predecessor in I
        if (!has(k, u)) continue;
        bool is_free = true;
        for (int p : pred[u]) is_free = is_free && !has(k, p);
        if (is_free) set(free, u);
      }
      for (int v = 0; v < n; ++v) {
        if (has(k, v)) continue;
        bool ok = true;  // v's successors all in I
        for (int w : succ[v]) ok = ok && has(k, w);
        // v is the smallest layer free in I ∪ {v}: no free layer of I below it but v's successors
        for (int q = 0; q <= v / 64 && ok; ++q) {
          const std::uint64_t below = q < v / 64 ? ~0ULL : (1ULL << (v % 64)) - 1;
          ok = (free[q] & ~row(succ_mask, v)[q] & below) == 0;
        }
        if (!ok) continue;
        Grown g{k, first + static_cast<int>(i), v};
        set(g.words, v);
        next.push_back(std::move(g));
        // Stop as soon as the count is exceeded, not after a whole (possibly huge) level.
        if (static_cast<std::size_t>(lat.count()) + next.size() > max_ideals) throw too_many();
      }
      std::fill(free.begin(), free.end(), 0);
    }
    level = std::move(next);
  }
  for (auto& c : lat.children_) std::sort(c.begin(), c.end());
  return lat;
}

std::vector<int> IdealLattice::members(int id) const {
  std::vector<int> out;
  for (int v = 0; v < layers_; ++v)
    if (contains(id, v)) out.push_back(v);
  return out;
}

std::uint64_t IdealLattice::pair_count(std::uint64_t limit) const {
  // Σ over I of (number of ideals J ⊊ I), counted by walking the tree under each I.
  std::uint64_t total = 0;
  std::vector<int> stack;
  for (int i = 0; i < count(); ++i) {
    stack.assign(1, 0);
    while (!stack.empty()) {
      int j = stack.back();
      stack.pop_back();
      if (j != i && ++total > limit) return limit + 1;
      for (auto [v, c] : children_[j])
        if (contains(i, v)) stack.push_back(c);
    }
  }
  return total;
}

}  // namespace paraplan
