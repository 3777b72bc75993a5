// The intra-op frontier's last step, shared by the search and its exhaustive twin: the points no
// other dominates in (objective, memory, devices), each re-evaluated on the network; and the twin.
#include "search/intra_op_frontier_points.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "ir/error.h"
#include "search/frontier.h"

namespace paraplan {
namespace intra_op_frontier_detail {

void check(const IntraOpNetwork& net, const IntraOpResources& r) {
  const bool ok = static_cast<int>(r.memory_bytes.size()) == net.size() &&
                  static_cast<int>(r.devices.size()) == net.size();
  for (int v = 0; ok && v < net.size(); ++v)
    if (r.memory_bytes[v].size() != net.unary[v].size() ||
        r.devices[v].size() != net.unary[v].size())
      throw Error(ErrorKind::kInput, "", fmt::format("variable {}: resources do not match", v));
  if (!ok) throw Error(ErrorKind::kInput, "", "the resources do not match the network");
}

namespace {

struct ChoiceBefore {
  bool operator()(const std::vector<int>& a, const std::vector<int>& b) const { return a < b; }
};

}  // namespace

IntraOpFrontierResult collect(const IntraOpNetwork& net, const IntraOpResources& r,
                              std::vector<IntraOpFrontierPoint> found) {
  ParetoSet<std::vector<int>, ChoiceBefore> set;
  for (auto& p : found) {
    p.devices = 0;
    for (int v = 0; v < net.size(); ++v) p.devices = std::max(p.devices, r.devices[v][p.choice[v]]);
    set.offer({p.objective, p.memory_bytes, p.devices}, p.choice);
  }
  IntraOpFrontierResult out;
  for (auto& [o, choice] : set.sorted())
    out.points.push_back({net.evaluate(choice), o.peak_bytes, o.devices, choice});
  return out;
}

}  // namespace intra_op_frontier_detail

IntraOpFrontierResult brute_force_intra_op_frontier(const IntraOpNetwork& net,
                                                    const IntraOpResources& resources,
                                                    const IntraOpFrontierOptions&) {
  intra_op_frontier_detail::check(net, resources);
  std::vector<IntraOpFrontierPoint> found;
  std::vector<int> c(net.size(), 0);
  while (true) {
    double memory = 0;
    for (int v = 0; v < net.size(); ++v) memory += resources.memory_bytes[v][c[v]];
    found.push_back({net.evaluate(c), memory, 0, c});
    int i = net.size() - 1;
    while (i >= 0 && ++c[i] == static_cast<int>(net.unary[i].size())) c[i--] = 0;
    if (i < 0) break;
  }
  return intra_op_frontier_detail::collect(net, resources, std::move(found));
}

}  // namespace paraplan
