// A discrete-event simulator of one training iteration. A program is a set of tasks, each
// running on one stream of one device; a stream runs its tasks one at a time in program order,
// a task starts when its stream is free and the tasks it depends on have finished. A transfer
// moves bytes over one link or a route of links; each link's bandwidth is shared equally by the
// transfers on it at that moment, and a transfer moves at its slowest link's share (a fluid
// model: rates change whenever a transfer starts or ends). Tasks may allocate
// memory on their device when they start and free memory when they end.
#pragma once

#include <string>
#include <vector>

#include "ir/timeline.h"

namespace paraplan::sim {

struct Link {
  std::string name;
  double bandwidth_bytes_per_s = 0;
};

struct Task {
  int device = 0;
  int stream = 0;             ///< index into Program::streams
  double duration_s = 0;      ///< fixed time (compute, or a transfer's latency)
  int link = -1;              ///< transfers: index into Program::links
  std::vector<int> route;     ///< transfers over several links: the others it crosses
  double bytes = 0;           ///< transfers: bytes over the link(s) after duration_s
  std::vector<int> after;     ///< tasks that must finish first
  double allocate_bytes = 0;  ///< on start, on `device`
  double free_bytes = 0;      ///< on end
  // Labels for the timeline.
  std::string name, phase;
  int stage = -1, microbatch = -1;
};

struct Program {
  std::vector<std::string> devices;
  std::vector<std::string> streams;
  std::vector<Link> links;
  std::vector<Task> tasks;           ///< program order within each (device, stream)
  std::vector<double> static_bytes;  ///< per device, held throughout (weights, optimizer, ...)
  int busy_streams = 1;              ///< streams [0, busy_streams) are the device's own work

  int add(Task task) {
    tasks.push_back(std::move(task));
    return static_cast<int>(tasks.size()) - 1;
  }
};

struct DeviceFigures {
  double busy_s = 0;  ///< time the device's own streams ran tasks (see busy_streams)
  double peak_bytes = 0;
};

struct Result {
  double makespan_s = 0;
  std::vector<DeviceFigures> devices;
  Timeline timeline;
  /// 1 − Σ busy / (devices × makespan): the share of the devices' time spent waiting.
  double bubble_fraction = 0;
};

/// Error(kInput) if the dependencies form a cycle or name missing tasks, or a transfer names a
/// missing link. Deterministic: events at equal times are processed in task order.
Result simulate(const Program& program);

}  // namespace paraplan::sim
