// Every command of the README's Examples section runs from the project's own tree: `./dev plan`
// and `build/src/paraplan` become the built binary, run in a fresh folder that sees `data/` and
// `docs/`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "sweep.h"

namespace {

namespace fs = std::filesystem;

std::vector<std::string> readme_examples() {
  std::ifstream in(std::string(PARAPLAN_SOURCE_DIR) + "/README.md");
  std::vector<std::string> commands;
  bool in_section = false, in_block = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Examples";
    if (!in_section) continue;
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      continue;
    }
    if (!in_block || line.empty()) continue;
    if (const auto hash = line.find("  #"); hash != std::string::npos) line.erase(hash);
    for (const std::string prefix : {"./dev plan", "build/src/paraplan"})
      if (line.rfind(prefix, 0) == 0)
        line = std::string(PARAPLAN_BINARY) + (prefix == "./dev plan" ? " plan" : "") +
               line.substr(prefix.size());
    commands.push_back(line);
  }
  return commands;
}

TEST(Readme, EveryExampleRuns) {
  const std::vector<std::string> commands = readme_examples();
  ASSERT_GE(commands.size(), 10u) << "the README's Examples section was not found";
  // One folder per process: a Release and a sanitized run of this test may overlap.
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("readme-examples-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_directory_symlink(fs::path(PARAPLAN_SOURCE_DIR) / "data", dir / "data");
  fs::create_directory_symlink(fs::path(PARAPLAN_SOURCE_DIR) / "docs", dir / "docs");
  for (std::string command : commands) {
    ASSERT_EQ(command.rfind(PARAPLAN_BINARY, 0), 0u) << "not a paraplan command: " << command;
    // Under the sanitizers a calibration fit runs a tenth of its steps (128 s of 3,000 there):
    // the same code, each step as in Release, which runs the example as written.
    if (paraplan::testing_support::kSanitized &&
        command.rfind(std::string(PARAPLAN_BINARY) + " calibrate ", 0) == 0)
      command += " --iterations 300";
    const auto r = paraplan::testing_support::run_shell("cd " + dir.string() + " && " + command);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.out;
  }
  fs::remove_all(dir);
}

}  // namespace
