// A cluster's network as an SVG figure (no scripts, nothing fetched): devices along the bottom in
// id order, each switch a row above the nodes it is joined to (its row is its hop distance from
// the nearest device, its place the mean of its lower neighbours'), links as lines whose width
// and colour show how busy the link's busier direction is; devices coloured by what runs on them.
#pragma once

#include <string>
#include <vector>

#include "ir/topology.h"

namespace paraplan::render {

struct NetworkFigure {
  std::vector<std::string> device_labels;  ///< per device ("" when it runs nothing)
  std::vector<int> device_groups;          ///< per device: the colour group (stage), or −1
  std::vector<double> link_busy_s;         ///< per link: its busier direction's busy seconds
  std::string busy_unit = "s per iteration";
};

/// Deterministic for the same input.
std::string network_svg(const Topology& topology, const NetworkFigure& figure);

}  // namespace paraplan::render
