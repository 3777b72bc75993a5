// Shared by the fuzz targets: a reader may refuse any input with paraplan::Error (one clear
// message, a documented exit code); anything else escaping it — another exception, a crash, a
// sanitizer report, a hang — is a finding.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace paraplan::fuzz {

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs `read`; paraplan::Error is the expected way to refuse an input.
template <typename Read>
void refuse_only_with_error(Read&& read) {
  try {
    read();
  } catch (const Error&) {
  }
}

/// What was read must be writable: the CLI prints it as JSON (strict UTF-8, no exceptions).
inline void write_out(const nlohmann::json& doc) { (void)doc.dump(2); }

/// For readers that take a path: the input written to this process's own file.
inline std::string as_file(const std::uint8_t* data, std::size_t size, const std::string& extension) {
  const std::string path = "/tmp/paraplan-fuzz-" + std::to_string(getpid()) + extension;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  return path;
}

}  // namespace paraplan::fuzz
