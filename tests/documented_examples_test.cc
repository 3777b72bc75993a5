// What the documentation shows must work: `--help` of every subcommand, every command of the
// README's examples (run in a scratch folder, reading the project's data), and the examples of
// docs/cli.md with the figures they say are printed.
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/cli_test_support.h"

namespace {

using paraplan::testing_support::Outcome;
using paraplan::testing_support::read_text;
using paraplan::testing_support::run;
using paraplan::testing_support::run_shell;

std::vector<std::string> subcommands() {
  const Outcome help = run("--help");
  std::vector<std::string> out;
  std::istringstream lines(help.out.substr(help.out.find("Subcommands:")));
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex("^  ([a-z-]+) "))) out.push_back(m[1]);
  }
  return out;
}

TEST(DocumentedExamples, EveryCommandHasHelp) {
  const auto commands = subcommands();
  ASSERT_GE(commands.size(), 8u);
  for (const auto& c : commands) {
    const Outcome r = run(c + " --help");
    EXPECT_EQ(r.exit_code, 0) << c << "\n" << r.out;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << c << "\n" << r.out;
  }
}

/// A README command line as the test runs it: `./dev plan` and `build/src/paraplan` become the
/// binary, data/ paths the project's, a trailing comment goes.
std::string runnable(std::string line) {
  if (const auto hash = line.find("  #"); hash != std::string::npos) line.resize(hash);
  while (!line.empty() && line.back() == ' ') line.pop_back();
  line = std::regex_replace(line, std::regex("^\\./dev plan"), "plan");
  line = std::regex_replace(line, std::regex("^build/src/paraplan "), "");
  return std::regex_replace(line, std::regex("(^| )data/"), std::string("$1") + PARAPLAN_SOURCE_DIR + "/data/");
}

TEST(DocumentedExamples, ReadmeExamplesRun) {
  const std::string readme = read_text(std::string(PARAPLAN_SOURCE_DIR) + "/README.md");
  const auto at = readme.find("## Examples");
  ASSERT_NE(at, std::string::npos);
  const auto open = readme.find("```\n", at), close = readme.find("```", open + 4);
  std::istringstream block(readme.substr(open + 4, close - open - 4));
  const std::string scratch = ::testing::TempDir() + "readme-examples";
  std::filesystem::create_directories(scratch);
  int ran = 0;
  for (std::string line; std::getline(block, line);) {
    if (line.empty()) continue;
    const std::string args = runnable(line);
    const Outcome r = run_shell("cd " + scratch + " && " + PARAPLAN_BINARY + " " + args);
    EXPECT_EQ(r.exit_code, 0) << line << "\n" << r.out.substr(0, 2000);
    ++ran;
  }
  EXPECT_GE(ran, 10);
}

TEST(DocumentedExamples, CliReferenceExamplesPrintWhatTheySay) {
  const std::string cli = read_text(std::string(PARAPLAN_SOURCE_DIR) + "/docs/cli.md");
  const std::regex example("Example: `paraplan ([^`]+)` prints\\s+`([^`]+)`(?:\\s+and\\s+`([^`]+)`)?");
  int checked = 0;
  for (auto it = std::sregex_iterator(cli.begin(), cli.end(), example); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const Outcome r = run(m[1]);
    EXPECT_EQ(r.exit_code, 0) << m[1] << "\n" << r.out;
    for (int i = 2; i <= 3; ++i) {
      if (!m[i].matched) continue;
      EXPECT_NE(r.out.find(m[i]), std::string::npos) << m[1] << ": " << m[i] << "\n" << r.out;
    }
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

}  // namespace
