// What the documentation shows must work: `--help` of every subcommand and the examples of
// docs/cli.md with the figures they say are printed (the README's examples: readme_examples_test).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

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

TEST(DocumentedExamples, CliReferenceExamplesPrintWhatTheySay) {
  const std::string cli = read_text(std::string(PARAPLAN_SOURCE_DIR) + "/docs/cli.md");
  const std::regex example(
      "Example: `paraplan ([^`]+)` prints\\s+`([^`]+)`(?:\\s+and\\s+`([^`]+)`)?");
  int checked = 0;
  for (auto it = std::sregex_iterator(cli.begin(), cli.end(), example);
       it != std::sregex_iterator(); ++it) {
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
