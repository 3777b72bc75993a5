// A simulated iteration as a Chrome trace (the JSON object format Perfetto and chrome://tracing
// open): one process per device, one thread per stream, complete events ("X") labelled with
// stage, micro-batch and phase, and a memory counter per device. Times in microseconds.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ir/timeline.h"

namespace paraplan::render {

nlohmann::json chrome_trace(const Timeline& timeline);
/// chrome_trace(timeline) as the text of a trace file.
std::string chrome_trace_text(const Timeline& timeline);

}  // namespace paraplan::render
