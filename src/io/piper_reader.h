// Reader for Piper's JSON input format (msr-fiddle/piper), as the code reads it rather than as its
// README describes it: `mbsInBatch`, and syncTimeFw keyed by predecessors, syncTimeBw by
// successors.
#pragma once

#include <string>

#include "io/json_fields.h"
#include "ir/model.h"

namespace paraplan::io {

/// A Piper input: the model plus the instance settings stored in the file.
struct PiperInput {
  Model model;
  int max_devices = 0;                 ///< maxDevices (K)
  double memory_per_device_bytes = 0;  ///< maxMemoryPerDevice (M)
  double bandwidth_bytes_per_s = 0;    ///< bandwidth (B)
};

PiperInput read_piper(const std::string& path);
PiperInput parse_piper(const std::string& text, const std::string& source);
/// True if the parsed JSON looks like a Piper file (used by format auto-detection).
bool looks_like_piper(const nlohmann::json& doc);

}  // namespace paraplan::io
