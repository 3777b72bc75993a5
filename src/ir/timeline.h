// What a simulated iteration looked like: events on the streams of each device and the memory
// each device held over time. The simulator (sim/) fills it; writers (render/chrome_trace, the HTML
// report) draw it.
#pragma once

#include <string>
#include <vector>

namespace paraplan {

struct TimelineEvent {
  int device = 0;       ///< index into Timeline::devices
  int stream = 0;       ///< index into Timeline::streams
  std::string name;     ///< e.g. "F 3" (phase and micro-batch)
  std::string phase;    ///< forward, backward, send, collective, gradient sync, optimizer
  int stage = -1;       ///< pipeline stage (virtual stage with interleaving); -1: none
  int microbatch = -1;  ///< -1: none
  double start_s = 0;
  double end_s = 0;
};

/// Bytes held by one device from `time_s` on (a step function).
struct MemorySample {
  double time_s = 0;
  double bytes = 0;
};

/// Bytes per second moving over one link from `time_s` on (a step function).
struct LinkSample {
  double time_s = 0;
  double bytes_per_s = 0;
};

struct Timeline {
  std::vector<std::string> devices;   ///< e.g. "stage 0 (GPU 0)"
  std::vector<std::string> streams;   ///< e.g. "compute", "collectives", "p2p", "data parallel"
  std::vector<TimelineEvent> events;  ///< in start order (ties: device, stream)
  std::vector<std::vector<MemorySample>> memory;  ///< per device
  /// Traffic on each link that carried any (a network's link directions, by name).
  std::vector<std::string> links;
  std::vector<std::vector<LinkSample>> link_traffic;  ///< per entry of `links`
};

}  // namespace paraplan
