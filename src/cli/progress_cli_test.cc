// Progress of long searches: drawn on stderr only when it is a terminal (here a pseudo-terminal
// made by util-linux's `script`), never with --quiet, and never mixed into stdout.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"

namespace {

using paraplan::testing_support::Outcome;
using paraplan::testing_support::read_text;
using paraplan::testing_support::run;
using paraplan::testing_support::run_shell;

// A pipeline search of a few seconds (more than the second after which progress shows): GNMT's
// 17,914 layer sets, under Piper's objective (the iteration objective's search after it only
// adds time). No time limit: under the sanitizers on a slow machine the search can pass the
// default 60 s, and a run that falls back to the coarsened plan would not match one that did not.
const std::string kLongPlan = std::string(PARAPLAN_BINARY) + " plan " + PARAPLAN_DATA +
                              "/piper/gnmt.json --objective steady-state --time-limit 0 --json";

Outcome on_a_terminal(const std::string& command) {
  return run_shell("script -qec '" + command + "' /dev/null");
}

TEST(Progress, ShowsOnATerminalAndLeavesStdoutAlone) {
  const std::string out = testing::TempDir() + "progress_plan.json";
  Outcome tty = on_a_terminal(kLongPlan + " > " + out);
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_NE(tty.out.find("gnmt: pipeline stages ["), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find(" s]: "), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find(" % of 17914 layer sets"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("\r\033[K"), std::string::npos)
      << "the line is redrawn in place and erased";
  const std::string json = read_text(out);
  Outcome piped = run_shell("(" + kLongPlan + " 2>/dev/null)");
  ASSERT_EQ(piped.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(json), nlohmann::json::parse(piped.out));
}

// Output to the same terminal never lands after the progress line: the line is erased first.
TEST(Progress, IsErasedBeforeStdoutWritesToTheTerminal) {
  Outcome tty = on_a_terminal(kLongPlan);
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  const std::size_t json = tty.out.find("{");
  ASSERT_NE(json, std::string::npos) << tty.out;
  ASSERT_GE(json, 4u) << tty.out;
  EXPECT_EQ(tty.out.substr(json - 4, 4), "\r\033[K") << tty.out.substr(0, json + 20);
}

TEST(Progress, QuietShowsNothing) {
  Outcome quiet = on_a_terminal(kLongPlan + " --quiet > /dev/null");
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.out, "");
  Outcome piped = run_shell("(" + kLongPlan + " --quiet 2>&1 >/dev/null)");
  EXPECT_EQ(piped.exit_code, 0);
  EXPECT_EQ(piped.out, "");
}

// Not on a terminal (a log, a CI job): whole lines at an interval, nothing redrawn; a search
// that ends sooner than the interval prints none.
TEST(Progress, NotATerminalLogsWholeLines) {
  // (run_shell adds its own 2>&1: the subshell keeps stdout at /dev/null.)
  Outcome logged = run_shell("(PARAPLAN_PROGRESS_EVERY_S=0.3 " + kLongPlan + " 2>&1 >/dev/null)");
  EXPECT_EQ(logged.exit_code, 0);
  EXPECT_NE(logged.out.find("paraplan: gnmt: pipeline stages ["), std::string::npos) << logged.out;
  EXPECT_EQ(logged.out.find("\033["), std::string::npos) << "no terminal codes in a log";
  EXPECT_EQ(logged.out.back(), '\n') << "whole lines";
  Outcome soon = run_shell("(PARAPLAN_PROGRESS_EVERY_S=1000 " + kLongPlan + " 2>&1 >/dev/null)");
  EXPECT_EQ(soon.out, "");
}

}  // namespace
