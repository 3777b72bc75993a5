// Ideal enumeration level by level (by size) with hashing for de-duplication.
#include "search/ideals.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "ir/error.h"

namespace paraplan {
namespace {

struct Key {
  std::vector<std::uint64_t> words;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::uint64_t h = 1469598103934665603ULL;
    for (auto w : k.words) h = (h ^ w) * 1099511628211ULL + (w >> 29);
    return static_cast<std::size_t>(h);
  }
};

bool has(const std::vector<std::uint64_t>& w, int v) { return (w[v / 64] >> (v % 64)) & 1U; }
void set(std::vector<std::uint64_t>& w, int v) { w[v / 64] |= 1ULL << (v % 64); }
void clear(std::vector<std::uint64_t>& w, int v) { w[v / 64] &= ~(1ULL << (v % 64)); }

}  // namespace

IdealLattice IdealLattice::build(const Model& model, std::size_t max_ideals) {
  IdealLattice lat;
  const int n = model.size();
  lat.layers_ = n;
  lat.words_ = (n + 63) / 64;
  std::vector<std::vector<int>> succ(n), pred(n);
  for (const auto& e : model.edges) succ[e.from].push_back(e.to), pred[e.to].push_back(e.from);

  std::unordered_map<Key, int, KeyHash> index;
  std::vector<Key> level{Key{std::vector<std::uint64_t>(lat.words_, 0)}};
  std::vector<Key> all;
  for (int size = 0; size <= n; ++size) {
    std::sort(level.begin(), level.end(),
              [](const Key& a, const Key& b) { return a.words < b.words; });
    for (auto& k : level) {
      index.emplace(k, static_cast<int>(all.size()));
      all.push_back(k);
      lat.sizes_.push_back(size);
    }
    if (all.size() > max_ideals)
      throw Error(ErrorKind::kLimit, "",
                  fmt::format("the model graph has more than {} successor-closed layer sets (its "
                              "branches are too wide for exact contiguous-stage search); merge "
                              "parallel branches or raise --max-ideals",
                              max_ideals));
    std::unordered_map<Key, bool, KeyHash> next;
    std::vector<Key> next_level;
    for (const auto& k : level) {
      for (int v = 0; v < n; ++v) {
        if (has(k.words, v)) continue;
        bool ok = true;
        for (int w : succ[v]) ok = ok && has(k.words, w);
        if (!ok) continue;
        Key c = k;
        set(c.words, v);
        if (next.emplace(c, true).second) next_level.push_back(std::move(c));
      }
    }
    level = std::move(next_level);
  }
  lat.bits_.reserve(all.size() * lat.words_);
  for (const auto& k : all) lat.bits_.insert(lat.bits_.end(), k.words.begin(), k.words.end());
  // Spanning tree: the parent of J is J minus its smallest layer without a predecessor in J.
  lat.children_.assign(all.size(), {});
  for (int id = 1; id < static_cast<int>(all.size()); ++id) {
    const auto& w = all[id].words;
    int removable = -1;
    for (int v = 0; v < n && removable < 0; ++v) {
      if (!has(w, v)) continue;
      bool free = true;
      for (int u : pred[v]) free = free && !has(w, u);
      if (free) removable = v;
    }
    Key parent = all[id];
    clear(parent.words, removable);
    lat.children_[index.at(parent)].push_back({removable, id});
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
