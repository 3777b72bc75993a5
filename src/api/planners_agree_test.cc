// The two pipeline planners agree where their cost models agree. DAPPLE's model prices a plan
// by its latency formula on machines of NVLink-connected GPUs; the Piper planner minimises the
// simulated 1F1B iteration on a cluster. On one machine whose links are DAPPLE's NVLink and
// whose all-reduce bandwidth is DAPPLE's (its ring of 2(n−1)/n·W over ⌊n/2⌋ NVLink bandwidths;
// Piper's formula moves 4(d−1)/d·W, so twice that bandwidth), every shipped profile gets the same
// plan from both — plain data parallelism on every device — and the same time, but for the
// compute of the `Input*` sources DAPPLE's preprocessing drops (docs/specs: PipeDream's data
// loading, which the Piper planner keeps): M/d micro-batches' worth of it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "api/plan_job.h"
#include "sweep.h"

namespace paraplan::api {
namespace {

constexpr int kMicrobatches = 16;

std::string cluster_file(int devices) {
  const double allreduce = 25e9 * (devices / 2) * 2;
  const std::string path = ::testing::TempDir() + fmt::format("dapple_1x{}.json", devices);
  std::ofstream(path) << fmt::format(
      R"({{"format": "paraplan-cluster", "version": 1, "name": "1x{0}-nvlink",
 "device_types": [{{"name": "V100", "memory_bytes": 1e12, "peak_flops_per_s": 1.25e14}}],
 "machines": [{{"devices": {0}, "device_type": "V100"}}],
 "tiers": [{{"name": "nvlink", "bandwidth_bytes_per_s": 2.5e10, "latency_s": 0,
             "allreduce_bandwidth_bytes_per_s": {1}}}],
 "links": []}})",
      devices, allreduce);
  return path;
}

// Seconds of forward compute of the profile's `Input*` sources (the profile gives milliseconds
// for its profile batch).
double input_compute_s(const std::string& path) {
  std::ifstream in(path);
  const std::regex input(R"(^node\d+ -- Input\w* -- forward_compute_time=([0-9.]+),)");
  double ms = 0;
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, input)) ms += std::stod(m[1].str());
  return ms / 1000;
}

// The shipped DAPPLE profiles, by name.
std::vector<std::filesystem::path> dapple_profiles() {
  const std::filesystem::path dir = std::filesystem::path(PARAPLAN_DATA) / "dapple";
  std::vector<std::filesystem::path> profiles;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".txt") profiles.push_back(entry.path());
  std::sort(profiles.begin(), profiles.end());
  return profiles;
}

// Both planners' plans of a profile: DAPPLE's on `machines`, Piper's on `cluster`, each with
// `microbatches` micro-batches of the profile's batch (`pbs-N` in its name, else 1).
std::pair<io::Json, io::Json> both_plans(const std::filesystem::path& path,
                                         const std::string& machines, const std::string& cluster,
                                         int microbatches) {
  std::smatch m;
  const std::string name = path.filename().string();
  const int pbs = std::regex_search(name, m, std::regex(R"(pbs-(\d+))")) ? std::stoi(m[1]) : 1;
  PlanOptions dapple;
  dapple.input = path.string();
  dapple.machines = machines;
  dapple.batch = static_cast<std::int64_t>(pbs) * microbatches;
  dapple.microbatch_size = pbs;
  PlanOptions piper;
  piper.input = path.string();
  piper.cost_model = "piper";
  piper.cluster = cluster;
  piper.microbatches = microbatches;
  return {plan(dapple).document, plan(piper).document};
}

TEST(PlannersAgree, DappleAndPiperPickTheSamePlanOnOneMachine) {
  const std::vector<std::filesystem::path> profiles = dapple_profiles();
  ASSERT_EQ(profiles.size(), 13u);
  int with_inputs = 0;
  std::size_t index = 0;  // of (devices, profile): every fourth under the sanitizers
  for (const int devices : {4, 8}) {
    const std::string cluster = cluster_file(devices);
    for (const auto& path : profiles) {
      if (!testing_support::sweep_runs(index++, 4)) continue;
      const std::string name = path.filename().string();
      SCOPED_TRACE(fmt::format("{} on {} devices", name, devices));
      const auto [d, p] = both_plans(path, fmt::format("1x{}", devices), cluster, kMicrobatches);
      for (const io::Json* doc : {&d, &p}) {
        ASSERT_EQ((*doc)["stages"].size(), 1u);
        EXPECT_EQ((*doc)["stages"][0]["data_parallel"], devices);
        EXPECT_EQ((*doc)["stages"][0]["tensor_parallel"], 1);
      }
      const double dropped = input_compute_s(path.string()) * kMicrobatches / devices;
      with_inputs += dropped > 0;
      EXPECT_NEAR(p["iteration"]["iteration_time_s"].get<double>() - d["objective"].get<double>(),
                  dropped, 1e-9 * d["objective"].get<double>());
    }
  }
  if (testing_support::kSanitized) return;  // the count is the whole sweep's
  EXPECT_EQ(with_inputs, 2 * 6);            // amoeba-6 (2), vgg-19, vgg16, xlnet-24, xlnet-36
}

// Across two machines DAPPLE's model sees what the flat model cannot: a stage boundary on the
// slow link with each all-reduce inside a machine. The Piper planner then places and simulates the
// best plan of each stage count dividing the machines, and answers with the fastest on the links:
// never slower there than the flat model's choice, and the same shape as DAPPLE's on most
// profiles (2 × 8 devices: 1 GB/s between machines, DAPPLE's 3 GB/s collectives).
TEST(PlannersAgree, AcrossMachinesThePiperPlannerPicksOnTheLinks) {
  const std::string cluster = ::testing::TempDir() + "dapple_2x8.json";
  std::ofstream(cluster) << R"({"format": "paraplan-cluster", "version": 1, "name": "2x8",
 "device_types": [{"name": "V100", "memory_bytes": 1e12, "peak_flops_per_s": 1.25e14}],
 "machines": [{"devices": 8, "device_type": "V100", "count": 2}],
 "tiers": [{"name": "nvlink", "bandwidth_bytes_per_s": 2.5e10, "latency_s": 0,
            "allreduce_bandwidth_bytes_per_s": 2e11},
           {"name": "ethernet", "bandwidth_bytes_per_s": 1e9, "latency_s": 0,
            "allreduce_bandwidth_bytes_per_s": 6e9}],
 "links": []})";
  const std::vector<std::filesystem::path> profiles = dapple_profiles();
  int same_shape = 0, chosen_on_links = 0;
  std::size_t index = 0;  // every fourth profile under the sanitizers, amoeba-18 always
  for (const auto& path : profiles) {
    const std::string name = path.filename().string();
    if (!testing_support::sweep_runs(index++, 4) && name != "amoeba-18-pbs-8.txt") continue;
    SCOPED_TRACE(name);
    const auto [d, p] = both_plans(path, "2x8", cluster, 32);
    ASSERT_TRUE(p.contains("network_choice"));
    const double placed = p["placed_simulated_s"].get<double>();
    const double flat = p["network_choice"]["flat_choice_placed_simulated_s"].get<double>();
    EXPECT_LE(placed, flat);
    chosen_on_links += placed < flat;
    std::vector<int> ours, theirs;
    for (const auto& st : p["stages"]) ours.push_back(st["data_parallel"].get<int>());
    for (const auto& st : d["stages"]) theirs.push_back(st["data_parallel"].get<int>());
    same_shape += ours == theirs;
    if (name == "amoeba-18-pbs-8.txt") {
      EXPECT_EQ(ours, (std::vector<int>{8, 8}));
      EXPECT_LT(placed, 0.5 * flat);  // 2.39 s against one stage of 16 at 5.03 s
    }
  }
  if (testing_support::kSanitized) return;  // the counts are the whole sweep's
  EXPECT_EQ(chosen_on_links, 9);
  EXPECT_EQ(same_shape, 11);  // all but AmoebaNet-36 and VGG-19
}

}  // namespace
}  // namespace paraplan::api
