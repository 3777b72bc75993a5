// Shared by the fuzz targets: a reader may refuse any input with paraplan::Error (one clear
// message, a documented exit code) of any kind but kInternal; anything else escaping it —
// an internal error (a user's file reported as our bug), another exception, a crash, a
// sanitizer report, a hang — is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "ir/error.h"

namespace paraplan::fuzz {

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs `read`; paraplan::Error is the expected way to refuse an input, but never kInternal.
template <typename Read>
void refuse_only_with_error(Read&& read) {
  try {
    read();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kInternal) {
      std::fprintf(stderr, "an input reported as an internal error: %s\n", e.what());
      std::abort();
    }
  }
}

/// What was read must be writable: the CLI prints it as JSON (strict UTF-8, no exceptions).
inline void write_out(const nlohmann::json& doc) { (void)doc.dump(2); }

}  // namespace paraplan::fuzz
