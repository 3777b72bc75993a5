#include "cli/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace paraplan::cli {
namespace {

constexpr double kQuietFor_s = 1.0;  // searches shorter than this show nothing
constexpr double kRedrawEvery_s = 0.1;

// Not on a terminal (a log, a CI job): a whole line every this many seconds, the first after as
// long; PARAPLAN_PROGRESS_EVERY_S sets it (0: never).
double log_every_s() {
  const char* text = std::getenv("PARAPLAN_PROGRESS_EVERY_S");
  if (text == nullptr) return 10.0;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return end != text && std::isfinite(v) && v >= 0 ? v : 10.0;
}

}  // namespace

TerminalProgress::TerminalProgress(bool quiet)
    : enabled_(!quiet),
      terminal_(isatty(STDERR_FILENO) != 0),
      log_every_s_(terminal_ ? 0 : log_every_s()) {
  if (!terminal_ && log_every_s_ <= 0) enabled_ = false;
  if (enabled_ && terminal_) {
    stdout_filter_ = new ClearFirst(*this, std::cout.rdbuf());
    std::cout.rdbuf(stdout_filter_);
  }
}

TerminalProgress::~TerminalProgress() {
  if (stdout_filter_) {
    std::cout.flush();
    std::cout.rdbuf(stdout_filter_->next());
    delete stdout_filter_;
  }
  erase();  // leave the terminal as it was
}

void TerminalProgress::erase() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

int TerminalProgress::ClearFirst::overflow(int c) {
  {
    std::lock_guard lock(owner_.mutex_);
    owner_.erase();
  }
  return c == traits_type::eof() ? traits_type::not_eof(c) : next_->sputc(static_cast<char>(c));
}

std::streamsize TerminalProgress::ClearFirst::xsputn(const char* s, std::streamsize n) {
  {
    std::lock_guard lock(owner_.mutex_);
    owner_.erase();
  }
  return next_->sputn(s, n);
}

void TerminalProgress::report(const Progress& p) {
  if (!enabled_) return;
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < (terminal_ ? kQuietFor_s : log_every_s_)) return;
  std::unique_lock lock(mutex_, std::try_to_lock);  // another thread is drawing: skip this one
  if (!lock.owns_lock()) return;
  const double since = std::chrono::duration<double>(now - last_).count();
  if (terminal_ ? (drawn_ && since < kRedrawEvery_s) : (logged_ && since < log_every_s_)) return;
  // The figures first, so a narrow terminal still shows them.
  std::string line =
      fmt::format("{} [{:.1f} s]: ", p.task, elapsed) +
      (p.total > 0 ? fmt::format("{:.0f} % of {:.0f} {}", 100 * p.done / p.total, p.total, p.unit)
                   : fmt::format("{:.0f} {}", p.done, p.unit));
  if (!std::isnan(p.best)) line += fmt::format("; best so far {:.6g} {}", p.best, p.best_unit);
  if (!terminal_) {  // a log: whole lines, nothing redrawn
    std::fputs(("paraplan: " + line + "\n").c_str(), stderr);
    std::fflush(stderr);
    logged_ = true;
    last_ = now;
    return;
  }
  // One line that never wraps (a wrapped line cannot be redrawn in place): cut to the terminal's
  // width at a character boundary.
  winsize size{};
  const std::size_t columns =
      ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 1 ? size.ws_col - 1 : 79;
  std::size_t cut = 0, shown = 0;
  for (; cut < line.size() && shown < columns; ++shown) do
      ++cut;
    while (cut < line.size() && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80);
  line.resize(cut);
  std::fputs(("\r\033[K" + line).c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
  last_ = now;
}

void add_quiet_flag(CLI::App* cmd, bool& quiet) {
  cmd->add_flag("-q,--quiet", quiet, "Do not show the progress of long searches on stderr");
}

}  // namespace paraplan::cli
