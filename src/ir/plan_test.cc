#include "ir/plan.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace paraplan {
namespace {

TEST(Plan, KindIsTheDetailsAlternative) {
  std::set<std::string> pairs;
  for (PlanKind kind : kPlanKinds) {
    const Plan plan = Plan::of(kind);
    EXPECT_EQ(plan.kind(), kind);
    // The planner and cost model name the kind and nothing else.
    EXPECT_EQ(plan_kind(plan.planner(), plan.cost_model()), kind);
    EXPECT_TRUE(pairs.insert(std::string(plan.planner()) + "/" + plan.cost_model()).second);
  }
  EXPECT_EQ(plan_kind("pipeline", "pase"), std::nullopt);
  EXPECT_EQ(plan_kind("llm", "piper"), std::nullopt);
  Plan plan = Plan::of(PlanKind::kIntraOp);
  plan.detail = DappleDetail{};  // the kind follows the detail: never stored beside it
  EXPECT_EQ(plan.kind(), PlanKind::kDapple);
  EXPECT_EQ(std::string(plan.cost_model()), "dapple");
}

TEST(Plan, SchedulesAreOneClosedKindReadStrictly) {
  for (const char* name : {"gpipe", "1f1b", "interleaved-1f1b", "zero-bubble", "layer-by-layer"}) {
    const auto s = schedule_from_name(name);
    ASSERT_TRUE(s) << name;
    EXPECT_EQ(std::string(schedule_name(*s)), name);
    EXPECT_EQ(parse_schedule(name), *s);
  }
  // Plan files written before the schedule was a kind.
  EXPECT_EQ(schedule_from_name("1F1B"), Schedule::kOneFOneB);
  EXPECT_EQ(schedule_from_name("interleaved 1F1B"), Schedule::kInterleaved);
  EXPECT_EQ(schedule_from_name("DAPPLE (early backward, synchronous)"), Schedule::kOneFOneB);
  EXPECT_EQ(schedule_from_name("none"), Schedule::kLayerByLayer);
  for (const char* wrong : {"", "1F1b", "GPipe", "interleaved", "zb"}) {
    EXPECT_EQ(schedule_from_name(wrong), std::nullopt) << wrong;
    try {
      parse_schedule(wrong);
      ADD_FAILURE() << wrong;
    } catch (const FieldError& e) {
      EXPECT_EQ(e.field(), "schedule");
      EXPECT_NE(std::string(e.what()).find(schedule_names()), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(schedules_of(PlanKind::kPipeline), "gpipe or 1f1b");
  EXPECT_EQ(schedules_of(PlanKind::kIntraOp), "layer-by-layer");
  EXPECT_FALSE(schedule_fits(PlanKind::kTransformer, Schedule::kLayerByLayer));
  EXPECT_TRUE(schedule_fits(PlanKind::kTransformer, Schedule::kZeroBubble));
}

Stage stage(int d, int t, std::vector<int> ids) {
  Stage s;
  s.data_parallel = d;
  s.tensor_parallel = t;
  s.device_ids = std::move(ids);
  return s;
}

TEST(Plan, RankLayoutRunsRankIOnTheIthSmallestDevice) {
  Plan plan;
  plan.stages = {stage(2, 1, {6, 2}), stage(1, 2, {0, 5})};
  const std::vector<RankPlace> ranks = rank_layout(plan, "p.json");
  ASSERT_EQ(ranks.size(), 4u);
  const int expected[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 2}, {1, 0, 1, 5}, {0, 0, 0, 6}};
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    EXPECT_EQ(ranks[i].stage, expected[i][0]) << i;
    EXPECT_EQ(ranks[i].replica, expected[i][1]) << i;
    EXPECT_EQ(ranks[i].tensor_index, expected[i][2]) << i;
    EXPECT_EQ(ranks[i].device, expected[i][3]) << i;
  }
  // Without names: stage by stage, replica-major.
  plan.stages = {stage(2, 2, {}), stage(1, 1, {})};
  const std::vector<RankPlace> plain = rank_layout(plan, "p.json");
  ASSERT_EQ(plain.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(plain[static_cast<std::size_t>(i)].device, i);
  EXPECT_EQ(plain[1].tensor_index, 1);
  EXPECT_EQ(plain[2].replica, 1);
  EXPECT_EQ(plain[4].stage, 1);
  plan.stages = {stage(2, 1, {6, 2}), stage(1, 2, {0, 2})};
  try {
    rank_layout(plan, "p.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("device 2 twice"), std::string::npos) << e.what();
  }
  plan.stages = {stage(2, 1, {6})};
  EXPECT_THROW(rank_layout(plan, "p.json"), Error);
}

}  // namespace
}  // namespace paraplan
