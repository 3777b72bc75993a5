// Progress of long searches: on a terminal, once a search has run for a second, one line on
// stderr, redrawn at most ten times a second (what is searched, how far, best so far, elapsed),
// erased when the command ends. When stderr is not a terminal (a log), a whole line every 10 s
// (PARAPLAN_PROGRESS_EVERY_S). Silent with --quiet; stdout is never touched.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <mutex>
#include <streambuf>

#include "ir/progress.h"

namespace paraplan::cli {

class TerminalProgress : public ProgressSink {
 public:
  /// `quiet`: never draw. Otherwise redraw one line on a terminal, log whole lines elsewhere.
  explicit TerminalProgress(bool quiet);
  ~TerminalProgress() override;
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  void report(const Progress& progress) override;
  /// This sink if it may draw, else null (what the searches take).
  ProgressSink* sink() { return enabled_ ? this : nullptr; }

 private:
  // Sits in front of std::cout's buffer while the sink may draw: before anything goes to stdout
  // (the same terminal, usually), the progress line is erased, so output never lands after it.
  class ClearFirst : public std::streambuf {
   public:
    ClearFirst(TerminalProgress& owner, std::streambuf* next) : owner_(owner), next_(next) {}
    std::streambuf* next() const { return next_; }

   protected:
    int overflow(int c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override { return next_->pubsync(); }

   private:
    TerminalProgress& owner_;
    std::streambuf* next_;
  };
  void erase();  ///< the line, if drawn (callers hold mutex_)

  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool terminal_;       ///< stderr is a terminal: one line redrawn in place
  double log_every_s_;  ///< not a terminal: a whole line this often
  bool drawn_ = false, logged_ = false;
  ClearFirst* stdout_filter_ = nullptr;
  Clock::time_point start_ = Clock::now(), last_;
  std::mutex mutex_;
};

/// Registers -q,--quiet on a subcommand that runs long searches.
void add_quiet_flag(CLI::App* cmd, bool& quiet);

}  // namespace paraplan::cli
