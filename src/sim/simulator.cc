// Event loop: start every stream head that is ready, advance to the earliest end (a fixed-time
// task, the end of a transfer's latency, or a transfer draining at its current share of the
// link), finish what ends then, repeat.
#include "sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "ir/error.h"

namespace paraplan::sim {
namespace {

[[noreturn]] void bad(const std::string& message) {
  throw Error(ErrorKind::kInput, "simulation", message);
}

enum class State { kWaiting, kLatency, kOnLink, kFixed, kDone };

void check(const Program& p) {
  const int n = static_cast<int>(p.tasks.size());
  const int devices = static_cast<int>(p.devices.size());
  const int streams = static_cast<int>(p.streams.size());
  for (int i = 0; i < n; ++i) {
    const Task& t = p.tasks[static_cast<std::size_t>(i)];
    if (t.device < 0 || t.device >= devices || t.stream < 0 || t.stream >= streams)
      bad(fmt::format("task {} ({}) names device {} stream {}, outside the program", i, t.name,
                      t.device, t.stream));
    if (t.link >= static_cast<int>(p.links.size()) || (t.bytes > 0 && t.link < 0))
      bad(fmt::format("task {} ({}) moves bytes without a valid link", i, t.name));
    for (int l : t.route)
      if (l < 0 || l >= static_cast<int>(p.links.size()) || t.link < 0)
        bad(fmt::format("task {} ({}) routes over link {}, which does not exist", i, t.name, l));
    if (!(t.duration_s >= 0) || !(t.bytes >= 0))
      bad(fmt::format("task {} ({}) has a negative size", i, t.name));
    for (int d : t.after)
      if (d < 0 || d >= n)
        bad(fmt::format("task {} ({}) depends on task {}, which does not exist", i, t.name, d));
  }
}

// The event loop's state: each (device, stream) queue in program order with its head, each
// task's state and times, the transfers on each link, the memory each device holds.
class Engine {
 public:
  explicit Engine(const Program& program);
  Result run();

 private:
  void memory_change(int device, double delta, double now);
  /// Starts every stream head whose dependencies are done.
  void start_ready();
  [[noreturn]] void deadlock() const;
  /// Promotes transfers whose latency has passed; the time of the next event.
  double next_event();
  /// Drains the links up to `next`, then finishes what ends there.
  void advance_to(double next);
  /// A transfer's rate now: its slowest link's share.
  double rate(const Task& t) const;
  void join_links(const Task& t, int delta);
  /// Samples each link's throughput from `now` on, where it changed.
  void record_traffic();

  const Program& p;
  const int n, devices, streams;
  std::vector<std::vector<int>> queue;
  std::vector<std::size_t> head;
  std::vector<bool> busy;
  std::vector<State> state;
  std::vector<double> start, end, remaining;
  std::vector<int> waiting_on;
  std::vector<std::vector<int>> dependents;
  std::vector<int> on_link;
  std::vector<double> held;
  std::vector<double> traffic;  // per link: bytes per second of the last sample
  std::vector<std::vector<LinkSample>> link_samples;
  std::vector<int> running;  // task ids, kept sorted for determinism
  int done = 0;
  double now = 0;
  Result r;
};

Engine::Engine(const Program& program)
    : p(program),
      n(static_cast<int>(program.tasks.size())),
      devices(static_cast<int>(program.devices.size())),
      streams(static_cast<int>(program.streams.size())),
      queue(static_cast<std::size_t>(devices * streams)),
      head(queue.size(), 0),
      busy(queue.size(), false),
      state(static_cast<std::size_t>(n), State::kWaiting),
      start(static_cast<std::size_t>(n), 0),
      end(static_cast<std::size_t>(n), 0),
      remaining(static_cast<std::size_t>(n), 0),
      waiting_on(static_cast<std::size_t>(n), 0),
      dependents(static_cast<std::size_t>(n)),
      on_link(program.links.size(), 0),
      held(static_cast<std::size_t>(devices), 0),
      traffic(program.links.size(), 0.0),
      link_samples(program.links.size()) {
  // Program order per (device, stream).
  for (int i = 0; i < n; ++i) {
    const Task& t = p.tasks[static_cast<std::size_t>(i)];
    queue[static_cast<std::size_t>(t.device * streams + t.stream)].push_back(i);
  }
  for (int i = 0; i < n; ++i)
    for (int d : p.tasks[static_cast<std::size_t>(i)].after) {
      ++waiting_on[static_cast<std::size_t>(i)];
      dependents[static_cast<std::size_t>(d)].push_back(i);
    }
  r.devices.resize(static_cast<std::size_t>(devices));
  r.timeline.devices = p.devices;
  r.timeline.streams = p.streams;
  r.timeline.memory.resize(static_cast<std::size_t>(devices));
  for (int d = 0; d < devices; ++d) {
    held[static_cast<std::size_t>(d)] = d < static_cast<int>(p.static_bytes.size())
                                            ? p.static_bytes[static_cast<std::size_t>(d)]
                                            : 0.0;
    r.timeline.memory[static_cast<std::size_t>(d)].push_back(
        {0, held[static_cast<std::size_t>(d)]});
    r.devices[static_cast<std::size_t>(d)].peak_bytes = held[static_cast<std::size_t>(d)];
  }
}

double Engine::rate(const Task& t) const {
  double r = p.links[static_cast<std::size_t>(t.link)].bandwidth_bytes_per_s /
             on_link[static_cast<std::size_t>(t.link)];
  for (int l : t.route)
    r = std::min(r, p.links[static_cast<std::size_t>(l)].bandwidth_bytes_per_s /
                        on_link[static_cast<std::size_t>(l)]);
  return r;
}

void Engine::join_links(const Task& t, int delta) {
  on_link[static_cast<std::size_t>(t.link)] += delta;
  for (int l : t.route) on_link[static_cast<std::size_t>(l)] += delta;
}

void Engine::record_traffic() {
  std::vector<double> rates(p.links.size(), 0.0);
  for (int i : running) {
    if (state[static_cast<std::size_t>(i)] != State::kOnLink) continue;
    const Task& t = p.tasks[static_cast<std::size_t>(i)];
    const double r = rate(t);
    rates[static_cast<std::size_t>(t.link)] += r;
    for (int l : t.route) rates[static_cast<std::size_t>(l)] += r;
  }
  for (std::size_t l = 0; l < rates.size(); ++l) {
    if (rates[l] == traffic[l]) continue;
    auto& samples = link_samples[l];
    if (!samples.empty() && samples.back().time_s == now)
      samples.back().bytes_per_s = rates[l];
    else
      samples.push_back({now, rates[l]});
    traffic[l] = rates[l];
  }
}

void Engine::memory_change(int device, double delta, double at) {
  auto& h = held[static_cast<std::size_t>(device)];
  h += delta;
  auto& samples = r.timeline.memory[static_cast<std::size_t>(device)];
  if (samples.back().time_s == at)
    samples.back().bytes = h;
  else
    samples.push_back({at, h});
  auto& peak = r.devices[static_cast<std::size_t>(device)].peak_bytes;
  peak = std::max(peak, h);
}

void Engine::start_ready() {
  // Start every ready stream head.
  for (std::size_t q = 0; q < queue.size(); ++q) {
    if (busy[q] || head[q] >= queue[q].size()) continue;
    const int i = queue[q][head[q]];
    if (waiting_on[static_cast<std::size_t>(i)] > 0) continue;
    const Task& t = p.tasks[static_cast<std::size_t>(i)];
    busy[q] = true;
    start[static_cast<std::size_t>(i)] = now;
    if (t.allocate_bytes != 0) memory_change(t.device, t.allocate_bytes, now);
    if (t.link >= 0 && t.bytes > 0) {
      state[static_cast<std::size_t>(i)] = State::kLatency;
      end[static_cast<std::size_t>(i)] = now + t.duration_s;
      remaining[static_cast<std::size_t>(i)] = t.bytes;
    } else {
      state[static_cast<std::size_t>(i)] = State::kFixed;
      end[static_cast<std::size_t>(i)] = now + t.duration_s;
    }
    running.insert(std::upper_bound(running.begin(), running.end(), i), i);
  }
}

void Engine::deadlock() const {
  const int stuck = [&] {
    for (std::size_t q = 0; q < queue.size(); ++q)
      if (head[q] < queue[q].size()) return queue[q][head[q]];
    return -1;
  }();
  throw Error(ErrorKind::kInternal, "simulation",
              fmt::format("the program deadlocks: task {} ({}) waits for tasks that cannot finish "
                          "(a dependency cycle or one against a stream's order)",
                          stuck, stuck >= 0 ? p.tasks[static_cast<std::size_t>(stuck)].name : ""));
}

double Engine::next_event() {
  double next = std::numeric_limits<double>::infinity();
  // Promote transfers whose latency has passed; find the next event.
  for (int i : running) {
    const auto s = state[static_cast<std::size_t>(i)];
    const Task& t = p.tasks[static_cast<std::size_t>(i)];
    if (s == State::kLatency && end[static_cast<std::size_t>(i)] <= now) {
      state[static_cast<std::size_t>(i)] = State::kOnLink;
      join_links(t, +1);
    }
  }
  for (int i : running) {
    const auto s = state[static_cast<std::size_t>(i)];
    const Task& t = p.tasks[static_cast<std::size_t>(i)];
    if (s == State::kOnLink) {
      next = std::min(next, now + remaining[static_cast<std::size_t>(i)] / rate(t));
    } else {
      next = std::min(next, end[static_cast<std::size_t>(i)]);
    }
  }
  return next;
}

void Engine::advance_to(double next) {
  const double dt = next - now;
  record_traffic();
  std::vector<int> finished;
  for (int i : running) {
    const Task& t = p.tasks[static_cast<std::size_t>(i)];
    auto& s = state[static_cast<std::size_t>(i)];
    if (s == State::kOnLink) {
      const double share = rate(t);
      double& left = remaining[static_cast<std::size_t>(i)];
      const bool ends = now + left / share <= next;  // this transfer drains by `next`
      left -= share * dt;
      if (ends || left <= 1e-9 * t.bytes) finished.push_back(i);
    } else if (s != State::kLatency && end[static_cast<std::size_t>(i)] <= next) {
      finished.push_back(i);
    }
  }
  now = next;
  for (int i : finished) {
    const Task& t = p.tasks[static_cast<std::size_t>(i)];
    if (state[static_cast<std::size_t>(i)] == State::kOnLink) join_links(t, -1);
    state[static_cast<std::size_t>(i)] = State::kDone;
    end[static_cast<std::size_t>(i)] = now;
    ++done;
    if (t.free_bytes != 0) memory_change(t.device, -t.free_bytes, now);
    const std::size_t q = static_cast<std::size_t>(t.device * streams + t.stream);
    busy[q] = false;
    ++head[q];
    for (int d : dependents[static_cast<std::size_t>(i)]) --waiting_on[static_cast<std::size_t>(d)];
    if (t.stream < p.busy_streams)
      r.devices[static_cast<std::size_t>(t.device)].busy_s +=
          now - start[static_cast<std::size_t>(i)];
    r.timeline.events.push_back({t.device, t.stream, t.name, t.phase, t.stage, t.microbatch,
                                 start[static_cast<std::size_t>(i)], now});
  }
  running.erase(
      std::remove_if(running.begin(), running.end(),
                     [&](int i) { return state[static_cast<std::size_t>(i)] == State::kDone; }),
      running.end());
}

Result Engine::run() {
  while (done < n) {
    start_ready();
    if (running.empty()) deadlock();
    advance_to(next_event());
  }
  r.makespan_s = now;
  for (std::size_t l = 0; l < link_samples.size(); ++l) {
    if (link_samples[l].empty()) continue;
    if (traffic[l] != 0) link_samples[l].push_back({now, 0});
    r.timeline.links.push_back(p.links[l].name);
    r.timeline.link_traffic.push_back(std::move(link_samples[l]));
  }
  std::stable_sort(
      r.timeline.events.begin(), r.timeline.events.end(), [](const auto& a, const auto& b) {
        return std::tie(a.start_s, a.device, a.stream) < std::tie(b.start_s, b.device, b.stream);
      });
  double busy_total = 0;
  for (const auto& d : r.devices) busy_total += d.busy_s;
  r.bubble_fraction = devices > 0 && now > 0 ? 1 - busy_total / (devices * now) : 0;
  return r;
}

}  // namespace

Result simulate(const Program& p) {
  check(p);
  return Engine(p).run();
}

}  // namespace paraplan::sim
