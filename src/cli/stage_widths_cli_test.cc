// `plan --stage-dp 2,1,...`: each stage's data-parallel width fixed by the user (the pipeline
// planner under the iteration objective); impossible or malformed lists refused with the reason.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"

namespace {

using paraplan::testing_support::Outcome;
using paraplan::testing_support::run;

const std::string kBert = std::string(PARAPLAN_DATA) + "/piper/bert32a100.json --devices 8";

TEST(CliStageWidths, EachStageHasItsWidth) {
  for (const std::string widths : {"2,1", "1,2", "4,2,1", "1"}) {
    Outcome o = run("plan " + kBert + " --stage-dp " + widths + " --json");
    ASSERT_EQ(o.exit_code, 0) << widths << "\n" << o.out;
    const auto plan = nlohmann::json::parse(o.out);
    std::vector<int> got;
    for (const auto& stage : plan["stages"]) got.push_back(stage["data_parallel"].get<int>());
    EXPECT_EQ(fmt::format("{}", fmt::join(got, ",")), widths);
  }
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--stage-dp 2,x", "--stage-dp: expected widths separated by commas"},
      {"--stage-dp 2,1 --dp 2", "give it or dp"},
      {"--stage-dp 2,1 --pp 3", "--stage-dp 2,1: 2 widths for pp 3"},
      {"--stage-dp 7,1", "each width must divide the 1920 micro-batches"},
      {"--stage-dp 2,1 --objective steady-state", "under the iteration objective only"}};
  for (const auto& [args, message] : refused) {
    Outcome o = run("plan " + kBert + " " + args);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.out;
    EXPECT_NE(o.out.find(message), std::string::npos) << args << "\n" << o.out;
  }
  Outcome wide = run("plan " + kBert + " --stage-dp 8,8");
  EXPECT_EQ(wide.exit_code, 4) << wide.out;
  EXPECT_NE(wide.out.find("no plan of 2 stages of widths 8,8 fits"), std::string::npos) << wide.out;
}

// A graph coarsened (asked for, or too large for the exact search) keeps the user's stage count
// and widths: the coarse graph is searched under them, not its steady-state optimum returned.
TEST(CliStageWidths, CoarsenedGraphsKeepTheStagesAskedFor) {
  for (const std::string args : {"--pp 3", "--stage-dp 2,1,1", "--pp 1"}) {
    Outcome o = run("plan " + kBert + " --coarsen 8 " + args + " --json");
    ASSERT_EQ(o.exit_code, 0) << args << "\n" << o.out;
    const auto plan = nlohmann::json::parse(o.out);
    const std::size_t stages = args == "--pp 1" ? 1 : 3;
    EXPECT_EQ(plan["stages"].size(), stages) << args;
    EXPECT_FALSE(plan["iteration"]["exact"].get<bool>()) << args;
    if (args == "--stage-dp 2,1,1") {
      std::vector<int> got;
      for (const auto& stage : plan["stages"]) got.push_back(stage["data_parallel"].get<int>());
      EXPECT_EQ(got, (std::vector<int>{2, 1, 1}));
    }
  }
  Outcome wide = run("plan " + kBert + " --coarsen 8 --stage-dp 8,8");
  EXPECT_EQ(wide.exit_code, 4) << wide.out;
  EXPECT_NE(wide.out.find("no plan of 2 stages of widths 8,8 fits"), std::string::npos) << wide.out;
}

}  // namespace
