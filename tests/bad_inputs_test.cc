// The corpus of bad inputs (tests/data/bad/cases.tsv): every file gets its documented exit code
// and one clear line naming the place and what is wrong — never a crash or an internal error.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"

namespace {

struct BadInput {
  std::string file, message, command;
  int exit_code = 0;
};

std::vector<BadInput> cases() {
  const std::string dir = std::string(PARAPLAN_TEST_DATA) + "/bad/";
  std::ifstream in(dir + "cases.tsv");
  std::vector<BadInput> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    BadInput c;
    std::string code;
    std::getline(fields, c.file, '\t');
    std::getline(fields, code, '\t');
    std::getline(fields, c.message, '\t');
    std::getline(fields, c.command);
    c.exit_code = std::stoi(code);
    if (const auto at = c.command.find("{}"); at != std::string::npos)
      c.command.replace(at, 2, dir + c.file);
    out.push_back(c);
  }
  return out;
}

TEST(BadInputs, EachGetsItsExitCodeAndOneClearLine) {
  const std::vector<BadInput> all = cases();
  ASSERT_GE(all.size(), 25u) << "tests/data/bad/cases.tsv was not read";
  for (const BadInput& c : all) {
    const auto r = paraplan::testing_support::run(c.command);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.command << "\n" << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.command << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("paraplan: ", 0), 0u) << c.command << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line: " << c.command << "\n"
                                                               << r.out;
    EXPECT_EQ(r.out.find("internal error"), std::string::npos) << c.command;
  }
}

}  // namespace
