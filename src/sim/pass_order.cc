// 1F1B orders and the dependency sweep.
#include "sim/pass_order.h"

#include <algorithm>

#include "ir/error.h"

namespace paraplan::sim {

std::vector<PassSlot> one_f_one_b(int count, int warmup) {
  warmup = std::clamp(warmup, 0, std::max(count, 0));
  std::vector<PassSlot> order;
  order.reserve(2 * static_cast<std::size_t>(std::max(count, 0)));
  int f = 0, b = 0;
  for (; f < warmup; ++f) order.push_back({true, f});
  while (f < count) {
    order.push_back({true, f++});
    order.push_back({false, b++});
  }
  while (b < count) order.push_back({false, b++});
  return order;
}

void place_in_dependency_order(const std::vector<std::size_t>& passes_per_device,
                               const std::function<bool(int device, std::size_t position)>& place) {
  std::vector<std::size_t> next(passes_per_device.size(), 0);
  std::size_t placed = 0, total = 0;
  for (std::size_t n : passes_per_device) total += n;
  while (placed < total) {
    bool progress = false;
    for (std::size_t d = 0; d < next.size(); ++d)
      while (next[d] < passes_per_device[d] && place(static_cast<int>(d), next[d])) {
        ++next[d];
        ++placed;
        progress = true;
      }
    if (!progress) throw Error(ErrorKind::kInternal, "simulation", "the schedule deadlocks");
  }
}

int replica_of(int microbatch, int replicas) { return microbatch % replicas; }

std::vector<StagedPass> replica_passes(int microbatches, int replicas, int replica, int inflight) {
  std::vector<int> mine;
  for (int j = replica; j < microbatches; j += replicas) mine.push_back(j);
  std::vector<StagedPass> passes;
  for (const PassSlot& slot : one_f_one_b(static_cast<int>(mine.size()), std::max(inflight - 1, 0)))
    passes.push_back({slot.forward, mine[static_cast<std::size_t>(slot.index)]});
  return passes;
}

}  // namespace paraplan::sim
