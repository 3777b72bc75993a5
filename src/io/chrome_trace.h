// A simulated iteration as a Chrome trace (the JSON object format Perfetto and chrome://tracing
// open): one process per device, one thread per stream, complete events ("X") labelled with
// stage, micro-batch and phase, and a memory counter per device. Times in microseconds.
#pragma once

#include <string>

#include "io/json_fields.h"
#include "ir/timeline.h"

namespace paraplan::io {

Json chrome_trace(const Timeline& timeline);
/// Writes chrome_trace(timeline) to `path` (Error(kIo) naming it if it cannot).
void write_chrome_trace(const std::string& path, const Timeline& timeline);

}  // namespace paraplan::io
