// DAPPLE's candidates: the allocator against the vectors recorded from HPGO, the regenerated
// candidates against the ones DAPPLE's planner printed, and paraplan's DAPPLE-model search no
// worse than any of them on every profile, machine layout and micro-batch size.
#include "search/dapple_candidates.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "io/dapple_reader.h"
#include "io/json_fields.h"
#include "ir/cluster.h"
#include "search/dapple_search.h"
#include "sweep.h"

namespace paraplan {
namespace {

const std::string kDappleCandidates = std::string(PARAPLAN_DATA) + "/dapple/";

std::vector<int> ints(const std::string& text) {
  std::vector<int> out;
  static const std::regex number(R"(\d+)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number);
       it != std::sregex_iterator(); ++it)
    out.push_back(std::stoi(it->str()));
  return out;
}

std::vector<int> ends_of(const std::string& layout) {  // "2x8", "16x1", "4+8+4"
  std::string text = layout;
  std::replace(text.begin(), text.end(), '+', ',');
  return machine_ends(*parse_machine_sizes(text));
}

std::set<std::vector<int>> sorted_sets(std::vector<std::vector<int>> sets) {
  for (auto& s : sets) std::sort(s.begin(), s.end());
  return {sets.begin(), sets.end()};
}

TEST(DappleCandidates, AllocatorMatchesDapplesRecordedVectors) {
  std::ifstream in(kDappleCandidates + "reference/cost_and_allocation_vectors.txt");
  std::string line;
  int checked = 0;
  static const std::regex alloc(R"(^ALLOC dev=(\S+) occupied=\[([^\]]*)\] need=(\d+) -> (.*)$)");
  static const std::regex allocr(
      R"(^ALLOCR dev=(\S+) occupied=\[([^\]]*)\] need=(\d+) rp=(\d+) -> \d+ sets: (.*)$)");
  static const std::regex list(R"(\[([0-9, ]*)\])");
  while (std::getline(in, line)) {
    std::smatch m;
    const bool single = std::regex_match(line, m, alloc);
    if (!single && !std::regex_match(line, m, allocr)) continue;
    const std::vector<int> ends = ends_of(m[1]);
    std::vector<bool> occupied(static_cast<std::size_t>(ends.back()), false);
    for (int id : ints(m[2])) occupied[static_cast<std::size_t>(id)] = true;
    const int need = std::stoi(m[3]);
    const std::string rest = m[single ? 4 : 5];
    std::vector<std::vector<int>> want;
    for (auto it = std::sregex_iterator(rest.begin(), rest.end(), list);
         it != std::sregex_iterator(); ++it)
      if (!(*it)[1].str().empty() || rest.find("[]") != std::string::npos)
        want.push_back(ints((*it)[1]));
    const auto got = single ? dapple_next_cards(ends, occupied, need)
                            : dapple_next_cards_with_replica(ends, occupied, need, std::stoi(m[4]));
    EXPECT_EQ(sorted_sets(got), sorted_sets(want)) << line;
    ++checked;
  }
  EXPECT_GE(checked, 100);
}

struct Recorded {
  std::string family;
  int rp;
  double est_time_s;
  DappleLayout layout;
};

// DAPPLE's printed candidates: "CAND plan_for(8,true) rp=1 speedup=... est_time_s=...
// stages=[(b, e, units, {gpus}), ...]"; a stage covers states b..e-1, the last b..n-1.
std::vector<Recorded> recorded_candidates(const io::Json& run, int states) {
  static const std::regex cand(R"(^CAND (\S+) rp=(\d+) speedup=\S+ est_time_s=(\S+) stages=(.*)$)");
  static const std::regex stage(R"(\((\d+), (\d+), (\d+), \{([0-9, ]*)\}\))");
  std::vector<Recorded> out;
  for (const auto& c : run["cands"]) {
    const std::string text = c.get<std::string>();
    std::smatch m;
    if (!std::regex_match(text, m, cand)) continue;
    Recorded r{m[1], std::stoi(m[2]), std::stod(m[3]), {}};
    r.layout.replicas = r.rp;
    const std::string stages = m[4];
    for (auto it = std::sregex_iterator(stages.begin(), stages.end(), stage);
         it != std::sregex_iterator(); ++it) {
      r.layout.cuts.push_back(std::stoi((*it)[2]) - 1);
      r.layout.gpus.push_back(ints((*it)[4]));
    }
    r.layout.cuts.back() = states - 1;
    out.push_back(std::move(r));
  }
  return out;
}

// Every candidate DAPPLE printed, rebuilt as a layout, prices to DAPPLE's own estimate (its
// bottleneck takes 2·a in the stage DP, 1·a in the bipartition), is no faster than paraplan's
// plan, and our regenerated straight pipelines price as DAPPLE's did (their cuts may differ
// where DAPPLE's order of equal cuts is Python's set order).
TEST(DappleCandidates, RecordedCandidatesAreRebuiltAndNoneBeatsTheSearch) {
  std::ifstream in(kDappleCandidates + "reference/planner_runs.jsonl");
  std::string line;
  std::map<std::string, Model> models;
  int candidates = 0, runs = 0;
  while (std::getline(in, line)) {
    io::Json run = io::parse_json_text(line, "planner_runs.jsonl");
    const std::string profile = run["profile"];
    if (!models.count(profile))
      models.emplace(profile, io::read_dapple(kDappleCandidates + profile, run["pbs"].get<int>()));
    const Model& model = models.at(profile);
    DappleSettings s;
    s.machine_ends = ends_of(run["devices"]);
    s.global_batch = run["gbs"];
    s.microbatch_size = run["mbs"];
    const DappleStates states = dapple_states(model);
    const DappleCostModel ours(model, states, s);
    DappleSettings dp_factor = s;
    dp_factor.bottleneck_activation_factor = 2;
    const DappleCostModel theirs_dp(model, states, dp_factor);
    const double best = search_dapple(ours).plan.objective;
    std::map<std::string, DappleLayout> regenerated;
    for_each_dapple_candidate(ours, [&](const DappleCandidate& c) {
      if (c.family == "straight 2" || c.family == "straight N") regenerated[c.family] = c.layout;
    });
    for (const Recorded& r : recorded_candidates(run, states.size())) {
      const bool stage_dp = r.family.find("true") != std::string::npos;
      const DappleCostModel& theirs = stage_dp ? theirs_dp : ours;
      EXPECT_NEAR(theirs.latency_s(r.layout), r.est_time_s, 2e-6 * r.est_time_s + 1e-6)
          << profile << " " << run["devices"] << " " << r.family;
      EXPECT_LE(best, ours.latency_s(r.layout) * (1 + 1e-12)) << profile << " " << r.family;
      if (stage_dp) {
        // DAPPLE's stage DP: its bottleneck does not depend on how ties are broken; its latency
        // does (DAPPLE breaks them in Python's set order, ours by the fewer transfer seconds,
        // which for one GPU per stage is never slower).
        const int stages = static_cast<int>(r.layout.cuts.size());
        const std::string family = stages == 2 && r.rp > 1 ? "straight 2" : "straight N";
        ASSERT_TRUE(regenerated.count(family)) << profile << " " << r.family;
        const DappleLayout& mine = regenerated.at(family);
        EXPECT_NEAR(theirs_dp.bottleneck_s(mine), theirs_dp.bottleneck_s(r.layout),
                    1e-12 * theirs_dp.bottleneck_s(r.layout))
            << profile << " " << run["devices"] << " " << r.family;
        if (family == "straight N") {
          EXPECT_LE(theirs_dp.latency_s(mine), theirs_dp.latency_s(r.layout) * (1 + 1e-12))
              << profile << " " << run["devices"] << " " << r.family;
        }
      }
      ++candidates;
    }
    ++runs;
  }
  EXPECT_EQ(runs, 46);
  EXPECT_GE(candidates, 700);
}

// On every profile, machine layout and micro-batch size, the search is no worse than any
// candidate DAPPLE would generate, priced by the same model.
TEST(DappleCandidates, SearchIsNoWorseThanEveryCandidateEverywhere) {
  std::size_t index = 0;  // of (profile, layout): every fifth under the sanitizers
  for (const char* profile :
       {"amoeba-18-pbs-8.txt", "amoeba-36-pbs-1.txt", "amoeba-6-pbs-8-complicated.txt",
        "amoeba-6-pbs-8-simplified.txt", "bert-24-pbs-6.txt", "bert-48-pbs-2.txt",
        "gnmt-16-pbs-64.txt", "gnmt-32-pbs-64-simplified.txt", "gnmt-32-pbs-64.txt",
        "vgg-19-pbs-32.txt", "vgg16.txt", "xlnet-24-pbs-1.txt", "xlnet-36-pbs-1.txt"}) {
    const Model model = io::read_dapple(kDappleCandidates + profile);
    const DappleStates states = dapple_states(model);
    for (const char* layout : {"2x8", "16x1", "2x4", "4+8+4"}) {
      if (!testing_support::sweep_runs(index++, 5)) continue;
      for (int mbs : {1, model.profile_batch_size}) {
        DappleSettings s;
        s.machine_ends = ends_of(layout);
        s.global_batch = 512;
        s.microbatch_size = mbs;
        const DappleCostModel cost(model, states, s);
        const double best = search_dapple(cost).plan.objective;
        long long count = 0;
        bool straight_2 = false;
        for_each_dapple_candidate(cost, [&](const DappleCandidate& c) {
          ++count;
          straight_2 = straight_2 || c.family == "straight 2";
          EXPECT_LE(best, cost.latency_s(c.layout) * (1 + 1e-12))
              << profile << " " << layout << " mbs " << mbs << " " << c.family;
        });
        EXPECT_TRUE(straight_2) << profile << " " << layout;
        EXPECT_GT(count, cost.states().size()) << profile << " " << layout;
        if (mbs == model.profile_batch_size) break;  // profiles at batch 1: one size
      }
    }
  }
}

// The issue's example: on 2x4, a first stage of 3 + 3 GPUs and a second of 1 + 1 (ScatterFirst,
// then what is left) is among the bipartitions.
TEST(DappleCandidates, BipartitionsTakeGpusFromEveryMachine) {
  const Model model = io::read_dapple(kDappleCandidates + "xlnet-36-pbs-1.txt");
  DappleSettings s;
  s.machine_ends = {4, 8};
  s.global_batch = 128;
  const DappleCostModel cost(model, dapple_states(model), s);
  bool found = false;
  for_each_dapple_candidate(cost, [&](const DappleCandidate& c) {
    found = found || (c.family == "bipartition" &&
                      c.layout.gpus == std::vector<std::vector<int>>{{0, 1, 2, 4, 5, 6}, {3, 7}});
  });
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace paraplan
