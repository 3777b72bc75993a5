// What every pipeline program shares: the 1F1B order of one device's passes, and placing every
// device's passes into a program in an order that respects their dependencies.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace paraplan::sim {

/// One pass of a device's order: the forward or backward of its `index`-th unit of work (a
/// micro-batch, or under interleaving a micro-batch chunk).
struct PassSlot {
  bool forward = true;
  int index = 0;
};

/// 1F1B over `count` units: `warmup` forwards (clamped to [0, count]), then one forward and one
/// backward alternately, then the backwards left. Forwards and backwards each take the units
/// in order 0, 1, ..., count − 1.
std::vector<PassSlot> one_f_one_b(int count, int warmup);

/// One pass of a staged pipeline plan's replica: the forward or backward of micro-batch
/// `microbatch` of the iteration.
struct StagedPass {
  bool forward = true;
  int microbatch = 0;
};

/// The replica of a stage of `replicas` that runs micro-batch `microbatch` of the iteration (every
/// stage deals the micro-batches round robin over its replicas).
int replica_of(int microbatch, int replicas);

/// The passes of `replica` of a stage of `replicas` over an iteration of `microbatches`: its
/// micro-batches (replica_of) in 1F1B order, at most `inflight` forwards ahead of the backwards.
/// This is the schedule the simulator replays and `paraplan run` executes.
std::vector<StagedPass> replica_passes(int microbatches, int replicas, int replica, int inflight);

/// Places the passes of every device in its own order: sweeps the devices (0, 1, ...), each
/// placing passes while `place(device, position)` can (it returns false, placing nothing, while
/// an input of that pass is not placed yet), until every pass is placed. Error(kInternal) when a
/// sweep places nothing: the orders deadlock.
void place_in_dependency_order(const std::vector<std::size_t>& passes_per_device,
                               const std::function<bool(int device, std::size_t position)>& place);

}  // namespace paraplan::sim
