// The layers of a stage as a StageCursor holds them while the planner moves layers out one at a
// time and back: an unordered member list with each layer's position, so that a removal is a swap
// with the last member and an undo restores the exact order (cursors iterate in that order).
#pragma once

#include <vector>

namespace paraplan {

class LayerSet {
 public:
  explicit LayerSet(int layers = 0) : position_(layers, -1) {}

  void assign(const std::vector<int>& layers) {
    for (int v : members_) position_[v] = -1;
    members_ = layers;
    for (int i = 0; i < static_cast<int>(members_.size()); ++i) position_[members_[i]] = i;
  }
  const std::vector<int>& members() const { return members_; }
  bool empty() const { return members_.empty(); }
  bool contains(int v) const { return position_[v] >= 0; }
  /// Where v sits in members() (-1: not a member).
  int position(int v) const { return position_[v]; }

  /// Takes member v out (the last member takes its place).
  void remove(int v) {
    const int at = position_[v], last = members_.back();
    members_[at] = last;
    position_[last] = at;
    members_.pop_back();
    position_[v] = -1;
  }
  /// Undoes the latest remove(v), v having sat at `at`: v goes back there and the member that
  /// took its place back to the end.
  void restore(int v, int at) {
    if (at == static_cast<int>(members_.size())) {
      members_.push_back(v);
    } else {
      const int moved = members_[at];
      members_.push_back(moved);
      position_[moved] = static_cast<int>(members_.size()) - 1;
      members_[at] = v;
    }
    position_[v] = at;
  }

 private:
  std::vector<int> members_, position_;
};

}  // namespace paraplan
