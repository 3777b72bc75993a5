// The intra-op frontier's checks and last step, shared by the search (intra_op_frontier.cc) and
// its exhaustive twin (intra_op_frontier_points.cc).
#pragma once

#include <vector>

#include "search/intra_op_frontier.h"

namespace paraplan::intra_op_frontier_detail {

/// Error(kInput) unless `r` has memory and devices for every configuration of the network.
void check(const IntraOpNetwork& net, const IntraOpResources& r);

/// The points of `found` no other dominates in (objective, memory, devices; devices recomputed
/// from the choice), fastest first, each objective re-evaluated on the network.
IntraOpFrontierResult collect(const IntraOpNetwork& net, const IntraOpResources& r,
                              std::vector<IntraOpFrontierPoint> found);

}  // namespace paraplan::intra_op_frontier_detail
