// One step of an intra-operator plan as a simulator program: the layers run one after the other
// on all devices, each its sharded computation, then its collectives and the re-layout of its
// inputs (the plan's per-layer costs, in FLOP-equivalents per device, over the device's rate).
#pragma once

#include <string>
#include <vector>

#include "ir/plan.h"
#include "sim/simulator.h"

namespace paraplan::sim {

/// `names[i]` labels `splits[i]`; `devices` is the plan's device count (one timeline row).
Program intra_op_program(const std::vector<LayerSplit>& splits,
                         const std::vector<std::string>& names, double flops_per_s, int devices);

}  // namespace paraplan::sim
