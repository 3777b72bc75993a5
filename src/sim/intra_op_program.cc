#include "sim/intra_op_program.h"

#include <fmt/format.h>

namespace paraplan::sim {

Program intra_op_program(const std::vector<LayerSplit>& splits,
                         const std::vector<std::string>& names, double flops_per_s, int devices) {
  Program prog;
  prog.devices = {fmt::format("all {} devices (per-layer sharding)", devices)};
  prog.streams = {"compute", "collectives"};
  prog.busy_streams = 2;
  int previous = -1;
  for (std::size_t i = 0; i < splits.size(); ++i) {
    const LayerSplit& ls = splits[i];
    Task c;
    c.stream = 0;
    c.duration_s = ls.compute / flops_per_s;
    c.name = names.at(i);
    c.phase = "forward";
    c.stage = static_cast<int>(i);
    if (previous >= 0) c.after = {previous};
    const int compute = prog.add(c);
    Task x;
    x.stream = 1;
    x.duration_s = (ls.communication + ls.redistribution) / flops_per_s;
    x.name = names.at(i) + " collectives and re-layout";
    x.phase = "collectives";
    x.stage = static_cast<int>(i);
    x.after = {compute};
    previous = prog.add(x);
  }
  return prog;
}

}  // namespace paraplan::sim
