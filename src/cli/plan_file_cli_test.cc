// The one plan file reader against a file of every kind, written by `plan -o`: each reads back
// as its kind, and a field only another kind has is refused as the user's error (exit 3, the
// field named), never reaching a detail of the wrong kind (an internal error).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "api/plan_file.h"
#include "cli/cli_test_support.h"

namespace paraplan::cli {
namespace {

using testing_support::Outcome;
using testing_support::read_json;
using testing_support::run;
using testing_support::write_temp;

// One plan file per kind, written once for every test here.
const std::map<PlanKind, nlohmann::json>& plan_files() {
  static const std::map<PlanKind, nlohmann::json> files = [] {
    const std::map<PlanKind, std::string> commands = {
        {PlanKind::kPipeline, "plan --planner pipeline --devices 8"},
        {PlanKind::kDapple, "plan " + std::string(PARAPLAN_DATA) +
                                "/dapple/amoeba-6-pbs-8-simplified.txt --machines 1x4 --batch 32"},
        {PlanKind::kIntraOp, "plan --model alexnet --devices 8"},
        {PlanKind::kTransformer, "plan --model gpt-1.7b --devices 16 --batch 64"},
        {PlanKind::kMixedTransformer,
         "plan --model gpt-7.5b --cluster mixed-a100-h100 --devices 16"}};
    std::map<PlanKind, nlohmann::json> out;
    for (const auto& [kind, command] : commands) {
      const std::string path =
          testing::TempDir() + "plan_file_kind_" + std::to_string(static_cast<int>(kind)) + ".json";
      const Outcome r = run(command + " --quiet -o " + path);
      EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.out;
      out[kind] = read_json(path);
    }
    return out;
  }();
  return files;
}

TEST(PlanFile, EveryKindReadsBackAsItsKindUnderOneHeader) {
  for (const auto& [kind, doc] : plan_files()) {
    EXPECT_EQ(doc["format"], "paraplan-plan");
    const api::PlanFile file = api::read_plan_file(doc, "p.json");
    EXPECT_EQ(file.plan.kind(), kind) << doc["planner"];
    EXPECT_EQ(file.replay.index(), static_cast<std::size_t>(kind));
    EXPECT_EQ(doc["planner"], file.plan.planner());
    EXPECT_EQ(doc["cost_model"], file.plan.cost_model());
    EXPECT_TRUE(schedule_fits(kind, file.plan.schedule));
  }
}

TEST(PlanFile, FieldsOfEveryOtherKindAreTheUsersErrorNeverOurs) {
  const auto& files = plan_files();
  int refused = 0;
  for (const auto& [kind, doc] : files)
    for (const auto& [other, other_doc] : files) {
      if (other == kind) continue;
      for (const auto& [key, value] : other_doc.items()) {
        if (doc.contains(key)) continue;  // a field both kinds have
        nlohmann::json mixed = doc;
        mixed[key] = value;
        try {
          (void)api::read_plan_file(mixed, "p.json");
        } catch (const Error& e) {
          EXPECT_NE(e.kind(), ErrorKind::kInternal) << key << " of another kind: " << e.what();
          ++refused;
        }
      }
    }
  EXPECT_GT(refused, 0);
  // A layer split that is well-formed for the pipeline model's own layers (no operator: no
  // dimensions to split) reached the intra-op detail of a pipeline plan: an internal error.
  nlohmann::json crafted = files.at(PlanKind::kPipeline);
  crafted["layer_splits"] = {{{"layer", crafted["stages"][0]["layers"][0]},
                              {"name", "x"},
                              {"split", nlohmann::json::array()},
                              {"devices", 1},
                              {"compute", 0},
                              {"communication", 0},
                              {"redistribution", 0}}};
  try {
    (void)api::read_plan_file(crafted, "p.json");
    ADD_FAILURE() << "read a pipeline plan with layer splits";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
  }
  // The fields that would be misread are refused by name.
  nlohmann::json splits = files.at(PlanKind::kPipeline);
  splits["layer_splits"] = files.at(PlanKind::kIntraOp)["layer_splits"];
  const std::string path = write_temp("plan_file_wrong_kind.json", splits.dump());
  const Outcome r = run("simulate " + path);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("/layer_splits: belongs to an intra-operator plan; this file is a pipeline "
                       "plan under Piper's cost model"),
            std::string::npos)
      << r.out;
}

TEST(PlanFile, AScheduleIsOneOfTheKindsRunsUnder) {
  nlohmann::json doc = plan_files().at(PlanKind::kDapple);
  doc["schedule"] = "gpipe";
  try {
    (void)api::read_plan_file(doc, "p.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("p.json: /schedule: a pipeline plan under DAPPLE's cost "
                                         "model runs under 1f1b, got \"gpipe\""),
              std::string::npos)
        << e.what();
  }
  doc["schedule"] = "DAPPLE (early backward, synchronous)";  // as files before 2026-11-27 say
  EXPECT_EQ(api::read_plan_file(doc, "p.json").plan.schedule, Schedule::kOneFOneB);
}

}  // namespace
}  // namespace paraplan::cli
