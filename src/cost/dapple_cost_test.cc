// DAPPLE's cost functions against values printed by the original code: the all-reduce and
// transfer test vectors, and every candidate plan of every recorded planner run.
#include "cost/dapple_cost.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>

#include "io/dapple_reader.h"
#include "io/json_fields.h"
#include "ir/cluster.h"

namespace paraplan {
namespace {

const std::string kDappleCost = std::string(PARAPLAN_DATA) + "/dapple/";

std::vector<int> ids(const std::string& text) {
  std::vector<int> out;
  std::regex number("[0-9]+");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number);
       it != std::sregex_iterator(); ++it)
    out.push_back(std::stoi(it->str()));
  return out;
}

TEST(DappleCost, CollectiveAndTransferVectors) {
  std::ifstream in(kDappleCost + "reference/cost_and_allocation_vectors.txt");
  std::string line;
  std::regex ar(R"(^AR dev=(\S+) G=\[([^\]]*)\] W=(\S+) -> (\S+))");
  std::regex x(R"(^X dev=(\S+) F=\[([^\]]*)\] T=\[([^\]]*)\] size=(\S+) -> (\S+))");
  Model empty;
  empty.layers.push_back({});
  int checked = 0;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, ar)) {
      DappleSettings s;
      s.machine_ends =
          machine_ends(*parse_machine_sizes(m[1].str() == "4+8+4" ? "4,8,4" : m[1].str()));
      DappleCostModel cost(empty, {}, s);
      double want = std::stod(m[4]);
      EXPECT_NEAR(cost.allreduce_s(ids(m[2]), std::stod(m[3])), want, 1e-9 * std::max(1.0, want))
          << line;
      ++checked;
    } else if (std::regex_search(line, m, x)) {
      DappleSettings s;
      s.machine_ends =
          machine_ends(*parse_machine_sizes(m[1].str() == "4+8+4" ? "4,8,4" : m[1].str()));
      DappleCostModel cost(empty, {}, s);
      double want = std::stod(m[5]);
      EXPECT_NEAR(cost.transfer_s(ids(m[2]), ids(m[3]), std::stod(m[4])), want,
                  1e-9 * std::max(1.0, want))
          << line;
      ++checked;
    }
  }
  EXPECT_GE(checked, 40);
}

// Every candidate of every recorded run, re-scored with the candidate's own activation factor
// (2 in DAPPLE's stage DP, 1 in its bipartition); printed with 6 decimals.
TEST(DappleCost, ReproducesEveryRecordedCandidate) {
  std::ifstream in(kDappleCost + "reference/planner_runs.jsonl");
  std::string line;
  std::map<std::string, std::pair<Model, DappleStates>> cache;
  std::regex cand(R"(^CAND (\S+) rp=(\d+) speedup=(\S+) est_time_s=(\S+) stages=\[(.*)\]$)");
  std::regex stage(R"(\((\d+), (\d+), (\d+), \{([^}]*)\}\))");
  int checked = 0;
  while (std::getline(in, line)) {
    io::Json run = io::parse_json_text(line, "planner_runs.jsonl");
    std::string profile = run["profile"];
    if (!cache.count(profile)) {
      Model model = io::read_dapple(kDappleCost + profile, run["pbs"].get<int>());
      DappleStates st = dapple_states(model);
      cache.emplace(profile, std::make_pair(std::move(model), std::move(st)));
    }
    const auto& [model, states] = cache.at(profile);
    for (const auto& text : run["cands"]) {
      std::smatch m;
      std::string c = text.get<std::string>();
      ASSERT_TRUE(std::regex_match(c, m, cand)) << c;
      DappleSettings s;
      s.machine_ends = machine_ends(*parse_machine_sizes(run["devices"].get<std::string>()));
      s.global_batch = run["gbs"];
      s.microbatch_size = run["mbs"];
      s.bottleneck_activation_factor = m[1].str() == "bipartition" ? 1 : 2;
      DappleCostModel cost(model, states, s);
      DappleLayout layout;
      layout.replicas = std::stoi(m[2]);
      std::string stages = m[5];
      for (auto it = std::sregex_iterator(stages.begin(), stages.end(), stage);
           it != std::sregex_iterator(); ++it) {
        layout.cuts.push_back(std::stoi((*it)[2]) - 1);
        layout.gpus.push_back(ids((*it)[4]));
      }
      layout.cuts.back() = states.size() - 1;  // the last tuple's end is inclusive
      double speedup = cost.total_compute_s() / cost.latency_s(layout);
      EXPECT_NEAR(speedup, std::stod(m[3]), 1e-6)
          << profile << " gbs " << run["gbs"] << " " << run["devices"] << " mbs " << run["mbs"]
          << ": " << c;
      ++checked;
    }
    // The data-parallel baseline the table reports.
    DappleSettings s;
    s.machine_ends = machine_ends(*parse_machine_sizes(run["devices"].get<std::string>()));
    s.global_batch = run["gbs"];
    DappleCostModel cost(model, states, s);
    double dp = run["dp_speedup"];
    EXPECT_NEAR(cost.total_compute_s() / cost.data_parallel_latency_s(), dp, 1e-9 * dp);
  }
  EXPECT_GT(checked, 500);
}

}  // namespace
}  // namespace paraplan
