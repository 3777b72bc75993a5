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

TEST(PlannersAgree, DappleAndPiperPickTheSamePlanOnOneMachine) {
  const std::filesystem::path dir = std::filesystem::path(PARAPLAN_DATA) / "dapple";
  std::vector<std::filesystem::path> profiles;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".txt") profiles.push_back(entry.path());
  std::sort(profiles.begin(), profiles.end());
  ASSERT_EQ(profiles.size(), 13u);
  int with_inputs = 0;
  for (const int devices : {4, 8}) {
    const std::string cluster = cluster_file(devices);
    for (const auto& path : profiles) {
      const std::string name = path.filename().string();
      SCOPED_TRACE(fmt::format("{} on {} devices", name, devices));
      std::smatch m;
      const int pbs = std::regex_search(name, m, std::regex(R"(pbs-(\d+))")) ? std::stoi(m[1]) : 1;
      PlanOptions dapple;
      dapple.input = path.string();
      dapple.machines = fmt::format("1x{}", devices);
      dapple.batch = static_cast<std::int64_t>(pbs) * kMicrobatches;
      dapple.microbatch_size = pbs;
      const io::Json d = plan(dapple).document;
      PlanOptions piper;
      piper.input = path.string();
      piper.cost_model = "piper";
      piper.cluster = cluster;
      piper.microbatches = kMicrobatches;
      const io::Json p = plan(piper).document;
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
  EXPECT_EQ(with_inputs, 2 * 6);  // amoeba-6 (2), vgg-19, vgg16, xlnet-24, xlnet-36
}

}  // namespace
}  // namespace paraplan::api
