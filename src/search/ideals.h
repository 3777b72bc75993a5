// The lattice of successor-closed layer sets ("ideals" in Piper, really down-sets of the reversed
// order): every contiguous pipeline stage is I \ J for ideals J ⊊ I. Ideals are numbered by size,
// and a spanning tree over them lets a planner visit the sub-ideals of any ideal one layer at a
// time.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/model.h"

namespace paraplan {

class IdealLattice {
 public:
  /// Enumerates all ideals of `model`; Error(kLimit) past `max_ideals`.
  static IdealLattice build(const Model& model, std::size_t max_ideals);

  int count() const { return static_cast<int>(sizes_.size()); }
  int size_of(int id) const { return sizes_[id]; }
  bool contains(int id, int layer) const {
    return (bits_[static_cast<std::size_t>(id) * words_ + layer / 64] >> (layer % 64)) & 1U;
  }
  std::vector<int> members(int id) const;
  /// Spanning-tree children of `id`: (layer added, child id), layer ascending.
  const std::vector<std::pair<int, int>>& children(int id) const { return children_[id]; }
  int full() const { return count() - 1; }  ///< the whole model
  /// Number of pairs J ⊊ I over all I (the stages a planner may price); counting stops past
  /// `limit` and returns limit + 1.
  std::uint64_t pair_count(std::uint64_t limit = UINT64_MAX - 1) const;

 private:
  int words_ = 0;
  int layers_ = 0;
  std::vector<std::uint64_t> bits_;
  std::vector<int> sizes_;
  std::vector<std::vector<std::pair<int, int>>> children_;
};

}  // namespace paraplan
