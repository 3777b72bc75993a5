// Routes: for each source device and each distinct link bandwidth w (widest first), a shortest
// path tree (hops, then latency) over the links of bandwidth ≥ w; a target's route comes from
// the widest w that reaches it.
#include "ir/topology.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <tuple>

#include "ir/error.h"

namespace paraplan {

Topology::Topology(int devices, std::vector<std::string> switch_names, std::vector<Edge> edges,
                   const std::string& source)
    : devices_(devices), edges_(std::move(edges)) {
  for (int d = 0; d < devices; ++d) nodes_.push_back({"device " + std::to_string(d), d});
  for (auto& name : switch_names) nodes_.push_back({std::move(name), -1});
  const int n = node_count();
  std::set<std::pair<int, int>> seen;
  std::vector<double> widths;
  for (std::size_t e = 0; e < edges_.size(); ++e) {
    const Edge& l = edges_[e];
    const std::string place = source + ": /links/" + std::to_string(e);
    if (l.a < 0 || l.b < 0 || l.a >= n || l.b >= n)
      throw Error(ErrorKind::kInput, place, "names a node outside the cluster");
    if (l.a == l.b)
      throw Error(ErrorKind::kInput, place, "joins " + nodes_[l.a].name + " to itself");
    if (!(l.bandwidth_bytes_per_s > 0) || !(l.latency_s >= 0))
      throw Error(ErrorKind::kInput, place, "needs a positive bandwidth and a latency ≥ 0");
    if (!seen.insert(std::minmax(l.a, l.b)).second)
      throw Error(ErrorKind::kInput, place,
                  "a second link between " + nodes_[l.a].name + " and " + nodes_[l.b].name +
                      " (routes take one path: give parallel links as one link of their summed "
                      "bandwidth)");
    widths.push_back(l.bandwidth_bytes_per_s);
  }
  std::sort(widths.begin(), widths.end(), std::greater<>());
  widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
  max_bandwidth_ = widths.empty() ? 0 : widths.front();
  widths_ = widths;
  // Adjacency: (neighbour, channel leaving this node), in link order.
  std::vector<std::vector<std::pair<int, int>>> adjacent(static_cast<std::size_t>(n));
  for (std::size_t e = 0; e < edges_.size(); ++e) {
    adjacent[edges_[e].a].push_back({edges_[e].b, static_cast<int>(2 * e)});
    adjacent[edges_[e].b].push_back({edges_[e].a, static_cast<int>(2 * e + 1)});
  }
  const int levels = static_cast<int>(widths.size());
  arrive_.assign(static_cast<std::size_t>(devices) * levels, std::vector<int>());
  level_.assign(static_cast<std::size_t>(devices) * devices, -1);
  for (int s = 0; s < devices; ++s) {
    level_[static_cast<std::size_t>(s) * devices + s] = 0;  // a device reaches itself, links or not
    for (int k = 0; k < levels; ++k) {
      // Dijkstra on (hops, latency) over links at least widths[k] wide.
      std::vector<std::pair<int, double>> best(static_cast<std::size_t>(n), {-1, 0});
      std::vector<int>& arrive = arrive_[static_cast<std::size_t>(s) * levels + k];
      arrive.assign(static_cast<std::size_t>(n), -1);
      using Key = std::tuple<int, double, int>;
      std::priority_queue<Key, std::vector<Key>, std::greater<>> queue;
      best[s] = {0, 0};
      queue.push({0, 0.0, s});
      std::vector<bool> done(static_cast<std::size_t>(n), false);
      while (!queue.empty()) {
        auto [hops, latency, u] = queue.top();
        queue.pop();
        if (done[u]) continue;
        done[u] = true;
        if (u < devices && level_[static_cast<std::size_t>(s) * devices + u] < 0)
          level_[static_cast<std::size_t>(s) * devices + u] = k;
        if (u != s && u < devices) continue;  // devices end routes, they do not forward
        for (auto [v, channel] : adjacent[u]) {
          const Edge& l = edges_[channel / 2];
          if (l.bandwidth_bytes_per_s < widths[k] || done[v]) continue;
          const std::pair<int, double> key{hops + 1, latency + l.latency_s};
          if (best[v].first < 0 || key < best[v]) {
            best[v] = key;
            arrive[v] = channel;
            queue.push({key.first, key.second, v});
          }
        }
      }
    }
    for (int t = 0; t < devices; ++t)
      if (level_[static_cast<std::size_t>(s) * devices + t] < 0)
        throw Error(ErrorKind::kInput, source + ": /links",
                    "device " + std::to_string(t) + " cannot reach device " + std::to_string(s) +
                        " (no path of links between them)");
  }
}

std::vector<int> Topology::route(int from, int to) const {
  std::vector<int> channels;
  if (from == to) return channels;
  const int levels = static_cast<int>(widths_.size());
  const int k = level_[static_cast<std::size_t>(from) * devices_ + to];
  const std::vector<int>& arrive = arrive_[static_cast<std::size_t>(from) * levels + k];
  for (int node = to; node != from;) {
    const int c = arrive[node];
    channels.push_back(c);
    node = c % 2 == 0 ? edges_[c / 2].a : edges_[c / 2].b;
  }
  std::reverse(channels.begin(), channels.end());
  return channels;
}

double Topology::route_latency_s(int from, int to) const {
  double latency = 0;
  for (int c : route(from, to)) latency += edges_[c / 2].latency_s;
  return latency;
}

double Topology::route_bandwidth_bytes_per_s(int from, int to) const {
  double width = max_bandwidth_;
  for (int c : route(from, to)) width = std::min(width, channel_bandwidth(c));
  return width;
}

std::string Topology::channel_name(int channel) const {
  const Edge& l = edges_[channel / 2];
  const int from = channel % 2 == 0 ? l.a : l.b, to = channel % 2 == 0 ? l.b : l.a;
  return nodes_[from].name + " → " + nodes_[to].name;
}

Topology cluster_topology(const Cluster& c, const std::string& source) {
  const int devices = c.device_count();
  if (!c.links.empty()) {
    std::vector<Topology::Edge> edges;
    for (const Link& l : c.links)
      edges.push_back({l.from, l.to, l.bandwidth_bytes_per_s, l.latency_s});
    return Topology(devices, c.switches, std::move(edges), source);
  }
  if (c.tiers.empty())
    throw Error(ErrorKind::kInput, source + ": /tiers", "needs link tiers or links");
  std::vector<std::string> switches;
  std::vector<Topology::Edge> edges;
  const LinkTier& inner = c.tiers.front();
  const auto ends = c.machine_ends();
  for (int m = 0; m < c.machine_count(); ++m) {
    if (c.machine_sizes[m] < 2) continue;
    const int hub = devices + static_cast<int>(switches.size());
    switches.push_back("machine " + std::to_string(m) + " switch");
    for (int d = ends[m] - c.machine_sizes[m]; d < ends[m]; ++d)
      edges.push_back({d, hub, inner.bandwidth_bytes_per_s, inner.latency_s / 2});
  }
  if (c.machine_count() > 1) {
    const LinkTier& outer = c.tiers.back();
    const int hub = devices + static_cast<int>(switches.size());
    switches.push_back("network");
    for (int d = 0; d < devices; ++d)
      edges.push_back({d, hub, outer.bandwidth_bytes_per_s, outer.latency_s / 2});
  }
  return Topology(devices, std::move(switches), std::move(edges), source);
}

std::vector<LinkTier> tiers_of(const Cluster& c, const Topology& t) {
  const auto ends = c.machine_ends();
  std::vector<int> machine(static_cast<std::size_t>(c.device_count()));
  for (int m = 0, d = 0; m < c.machine_count(); ++m)
    for (; d < ends[m]; ++d) machine[d] = m;
  double inner_bw = 0, outer_bw = 0, inner_lat = 0, outer_lat = 0;
  bool inner = false, outer = false;
  for (int a = 0; a < t.device_count(); ++a)
    for (int b = 0; b < t.device_count(); ++b) {
      if (a == b) continue;
      const double bw = t.route_bandwidth_bytes_per_s(a, b), lat = t.route_latency_s(a, b);
      if (machine[a] == machine[b]) {
        inner_bw = inner ? std::min(inner_bw, bw) : bw;
        inner_lat = std::max(inner_lat, lat);
        inner = true;
      } else {
        outer_bw = outer ? std::min(outer_bw, bw) : bw;
        outer_lat = std::max(outer_lat, lat);
        outer = true;
      }
    }
  std::vector<LinkTier> tiers;
  if (inner || !outer)
    tiers.push_back({"inside a machine", inner ? inner_bw : outer_bw, inner_lat});
  if (outer) tiers.push_back({"between machines", outer_bw, outer_lat});
  return tiers;
}

}  // namespace paraplan
