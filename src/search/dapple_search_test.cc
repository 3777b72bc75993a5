// The DAPPLE-model search against the original planner's recorded results.
#include "search/dapple_search.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>

#include "io/dapple_reader.h"
#include "io/json_fields.h"
#include "ir/cluster.h"

namespace paraplan {
namespace {

const std::string kDappleSearch = std::string(PARAPLAN_DATA) + "/dapple/";

TEST(DappleSearch, AtLeastDappleAndDataParallelOnEveryRecordedRun) {
  std::ifstream in(kDappleSearch + "reference/planner_runs.jsonl");
  std::string line;
  std::map<std::string, Model> models;
  int runs = 0;
  while (std::getline(in, line)) {
    io::Json run = io::parse_json_text(line, "planner_runs.jsonl");
    std::string profile = run["profile"];
    if (!models.count(profile))
      models.emplace(profile, io::read_dapple(kDappleSearch + profile, run["pbs"].get<int>()));
    const Model& model = models.at(profile);
    DappleSettings s;
    s.machine_ends = machine_ends(*parse_machine_sizes(run["devices"].get<std::string>()));
    s.global_batch = run["gbs"];
    s.microbatch_size = run["mbs"];
    DappleCostModel cost(model, dapple_states(model), s);
    DappleSearchResult r = search_dapple(cost);
    double dapple = std::stod(std::regex_replace(run["best"].get<std::string>(),
                                                 std::regex(R"(^BEST speedup=(\S+) .*$)"), "$1"));
    double dp = run["dp_speedup"];
    ASSERT_EQ(r.plan.kind(), PlanKind::kDapple);
    double ours = r.plan.as<DappleDetail>().speedup;
    EXPECT_GE(ours, dapple * (1 - 1e-9))
        << profile << " gbs " << run["gbs"] << " " << run["devices"] << " mbs " << run["mbs"];
    EXPECT_GE(ours, dp * (1 - 1e-9)) << profile;
    // The plan's own figures are consistent: objective = L, speedup = Ctot / L.
    EXPECT_NEAR(ours, cost.total_compute_s() / r.plan.objective, 1e-12 * ours);
    ++runs;
  }
  EXPECT_EQ(runs, 46);
}

TEST(DappleSearch, ProfilesWithoutReferenceRunsBeatDataParallelism) {
  for (std::string profile :
       {"amoeba-36-pbs-1.txt", "amoeba-18-pbs-8.txt", "amoeba-6-pbs-8-simplified.txt",
        "amoeba-6-pbs-8-complicated.txt", "gnmt-32-pbs-64-simplified.txt", "gnmt-16-pbs-64.txt",
        "gnmt-32-pbs-64.txt"}) {
    Model model = io::read_dapple(kDappleSearch + profile);
    for (std::vector<int> ends : {std::vector<int>{8, 16}, std::vector<int>{4, 8}}) {
      DappleSettings s;
      s.machine_ends = ends;
      s.global_batch = 512;
      DappleCostModel cost(model, dapple_states(model), s);
      DappleSearchResult r = search_dapple(cost);
      EXPECT_GE(r.plan.as<DappleDetail>().speedup,
                cost.total_compute_s() / r.data_parallel_latency_s * (1 - 1e-9))
          << profile;
    }
  }
}

TEST(DappleSearch, FewerLayersThanDevicesIsFine) {
  // DAPPLE panics here (its straight 16-stage candidate cannot exist).
  std::string text =
      "node1 -- Conv -- forward_compute_time=1, backward_compute_time=2, activation_size=100, "
      "parameter_size=10\n"
      "node2 -- Linear -- forward_compute_time=3, backward_compute_time=4, activation_size=10, "
      "parameter_size=1000\n"
      "\tnode1 -- node2\n";
  Model model = io::parse_dapple(text, "tiny.txt", 1);
  DappleSettings s;
  s.machine_ends = {8, 16};
  s.global_batch = 64;
  DappleCostModel cost(model, dapple_states(model), s);
  DappleSearchResult r = search_dapple(cost);
  EXPECT_TRUE(r.plan.feasible);
  EXPECT_LE(static_cast<int>(r.plan.stages.size()), 2);
}

}  // namespace
}  // namespace paraplan
