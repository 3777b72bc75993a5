#include "render/chrome_trace.h"

namespace paraplan::render {

nlohmann::json chrome_trace(const Timeline& t) {
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t d = 0; d < t.devices.size(); ++d) {
    const int pid = static_cast<int>(d) + 1;
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"name", t.devices[d]}}}});
    events.push_back({{"ph", "M"},
                      {"name", "process_sort_index"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"sort_index", pid}}}});
    for (std::size_t s = 0; s < t.streams.size(); ++s)
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", pid},
                        {"tid", static_cast<int>(s)},
                        {"args", {{"name", t.streams[s]}}}});
  }
  for (const TimelineEvent& e : t.events) {
    nlohmann::json args = {{"phase", e.phase}};
    if (e.stage >= 0) args["stage"] = e.stage;
    if (e.microbatch >= 0) args["microbatch"] = e.microbatch;
    events.push_back({{"ph", "X"},
                      {"name", e.name},
                      {"cat", e.phase},
                      {"pid", e.device + 1},
                      {"tid", e.stream},
                      {"ts", e.start_s * 1e6},
                      {"dur", (e.end_s - e.start_s) * 1e6},
                      {"args", args}});
  }
  for (std::size_t d = 0; d < t.memory.size(); ++d)
    for (const MemorySample& m : t.memory[d])
      events.push_back({{"ph", "C"},
                        {"name", "memory"},
                        {"pid", static_cast<int>(d) + 1},
                        {"tid", 0},
                        {"ts", m.time_s * 1e6},
                        {"args", {{"GiB", m.bytes / 1073741824.0}}}});
  // Link traffic: one process of counters, a counter per link direction that carried any.
  if (!t.links.empty()) {
    const int pid = static_cast<int>(t.devices.size()) + 1;
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"name", "network links (GB/s)"}}}});
    events.push_back({{"ph", "M"},
                      {"name", "process_sort_index"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"sort_index", pid}}}});
    for (std::size_t l = 0; l < t.links.size(); ++l)
      for (const LinkSample& sample : t.link_traffic[l])
        events.push_back({{"ph", "C"},
                          {"name", t.links[l]},
                          {"pid", pid},
                          {"tid", 0},
                          {"ts", sample.time_s * 1e6},
                          {"args", {{"GB/s", sample.bytes_per_s / 1e9}}}});
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

std::string chrome_trace_text(const Timeline& timeline) {
  return chrome_trace(timeline).dump() + "\n";
}

}  // namespace paraplan::render
