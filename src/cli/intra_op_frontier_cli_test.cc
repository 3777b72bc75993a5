// `paraplan frontier --planner intra-op`: TensorOpt's frontier on PaSE's graphs and ONNX files,
// from the command line; its fastest point is the intra-op plan, and the plan's report plots it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"

namespace {

using paraplan::testing_support::Outcome;
using paraplan::testing_support::read_text;
using paraplan::testing_support::run;

TEST(CliIntraOpFrontier, FastestPointIsThePlanAndEveryPointIsNonDominated) {
  Outcome r = run("frontier --model alexnet --devices 4 --memory-step 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["planner"], "intra-op");
  EXPECT_EQ(j["search"]["exact"], true);
  const auto& points = j["points"];
  ASSERT_GT(points.size(), 2u);
  for (std::size_t a = 0; a < points.size(); ++a) {
    EXPECT_EQ(points[a]["layer_splits"].size(), 14u);
    EXPECT_LE(points[a]["devices_used"].get<int>(), 4);
    for (std::size_t b = 0; b < points.size(); ++b) {
      if (a == b) continue;
      const bool no_worse = points[b]["step_time_s"] <= points[a]["step_time_s"] &&
                            points[b]["peak_memory_bytes"] <= points[a]["peak_memory_bytes"] &&
                            points[b]["devices_used"] <= points[a]["devices_used"];
      EXPECT_FALSE(no_worse && points[b] != points[a]) << a << " dominated by " << b;
    }
  }
  Outcome plan = run("plan --model alexnet --devices 4 --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.out;
  const auto p = nlohmann::json::parse(plan.out);
  EXPECT_EQ(points[0]["objective"], p["objective"]);
  EXPECT_EQ(points[0]["peak_memory_bytes"], p["peak_memory_bytes"]);
  // The coarse frontier (the default step) keeps both ends of the exact one.
  Outcome coarse = run("frontier --model alexnet --devices 4 --json");
  ASSERT_EQ(coarse.exit_code, 0) << coarse.out;
  const auto c = nlohmann::json::parse(coarse.out);
  EXPECT_LE(c["points"].size(), points.size());
  EXPECT_EQ(c["points"][0]["objective"], points[0]["objective"]);
  auto leanest = [](const nlohmann::json& ps) {
    double m = ps[0]["peak_memory_bytes"];
    for (const auto& q : ps) m = std::min(m, q["peak_memory_bytes"].get<double>());
    return m;
  };
  EXPECT_EQ(leanest(c["points"]), leanest(points));
}

TEST(CliIntraOpFrontier, WordsPlotMemoryLimitAndOnnx) {
  const std::string svg = testing::TempDir() + "intra_op_frontier.svg";
  Outcome words = run("frontier --model rnnlm --devices 4 --svg " + svg);
  ASSERT_EQ(words.exit_code, 0) << words.out;
  EXPECT_NE(words.out.find("non-dominated shardings over (step time, memory per device, devices)"),
            std::string::npos)
      << words.out;
  EXPECT_NE(read_text(svg).find("</svg>"), std::string::npos);
  // A memory limit leaves out the points above it, and none fitting is exit 4.
  Outcome all = run("frontier --model rnnlm --devices 4 --json");
  const auto j = nlohmann::json::parse(all.out);
  const double middle = j["points"][j["points"].size() / 2]["peak_memory_bytes"];
  Outcome limited = run(fmt::format("frontier --model rnnlm --devices 4 --json --memory {}B",
                                    static_cast<long long>(middle)));
  ASSERT_EQ(limited.exit_code, 0) << limited.out;
  const auto l = nlohmann::json::parse(limited.out);
  EXPECT_LT(l["points"].size(), j["points"].size());
  for (const auto& p : l["points"]) EXPECT_LE(p["peak_memory_bytes"].get<double>(), middle);
  EXPECT_EQ(run("frontier --model rnnlm --devices 4 --memory 1KB").exit_code, 4);
  Outcome onnx =
      run(std::string("frontier ") + PARAPLAN_DATA + "/onnx/small_cnn.onnx --devices 2 --batch 8");
  EXPECT_EQ(onnx.exit_code, 0) << onnx.out;
  EXPECT_NE(onnx.out.find("small_cnn"), std::string::npos) << onnx.out;
}

TEST(CliIntraOpFrontier, BadRequestsAreUsageErrors) {
  for (const std::string args :
       {"frontier --model alexnet --microbatches 4", "frontier --planner intra-op",
        "frontier --model alexnet --planner shards", "frontier --model alexnet --uniform-stages",
        "frontier --planner llm --model alexnet"}) {
    Outcome r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
}

TEST(CliIntraOpFrontier, ThePlansReportPlotsTheFrontier) {
  const std::string html = testing::TempDir() + "intra_op_report.html";
  Outcome r = run("plan --model alexnet --devices 4 --report " + html);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("memory per device: "), std::string::npos) << r.out;
  const std::string page = read_text(html);
  EXPECT_NE(page.find("The frontier holds"), std::string::npos);
  EXPECT_NE(page.find("step time (s)"), std::string::npos);
}

}  // namespace
