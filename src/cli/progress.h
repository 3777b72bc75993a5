// Progress of long searches on a terminal: once a search has run for a second, one line on
// stderr, redrawn at most ten times a second (what is searched, how far, best so far, elapsed),
// erased when the command ends. Silent when stderr is not a terminal or with --quiet; stdout is
// never touched.
#pragma once

#include <chrono>
#include <mutex>

#include <CLI/CLI.hpp>

#include "ir/progress.h"

namespace paraplan::cli {

class TerminalProgress : public ProgressSink {
 public:
  /// `quiet`: never draw. Otherwise draw only if stderr is a terminal.
  explicit TerminalProgress(bool quiet);
  ~TerminalProgress() override;
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  void report(const Progress& progress) override;
  /// This sink if it may draw, else null (what the searches take).
  ProgressSink* sink() { return enabled_ ? this : nullptr; }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_ = Clock::now(), last_;
  std::mutex mutex_;
};

/// Registers -q,--quiet on a subcommand that runs long searches.
void add_quiet_flag(CLI::App* cmd, bool& quiet);

}  // namespace paraplan::cli
