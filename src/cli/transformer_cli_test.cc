// The transformer commands end to end: the new knobs, cluster and calibration files, and the
// messages of their mistakes.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/cli_test_support.h"

namespace {

using paraplan::testing_support::Outcome;
using paraplan::testing_support::run;
using paraplan::testing_support::run_shell;
using paraplan::testing_support::write_temp;

void expect_usage(const std::string& args, const std::string& needle) {
  Outcome r = run(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
}

TEST(CliTransformer, PlanJsonCarriesEveryKnobAndTheStages) {
  Outcome r = run("plan --model gpt-1.7b --devices 16 --batch 64 --top 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"tp", "cp", "pp", "dp", "ep", "vpp", "recompute", "sequence_parallel",
                          "zero", "overlap_grad_reduce", "stage_layers", "micro_batch"})
    EXPECT_TRUE(j["config"].contains(key)) << key;
  int layers = 0;
  for (const auto& n : j["config"]["stage_layers"]) layers += n.get<int>();
  EXPECT_EQ(layers, 24);
  EXPECT_EQ(j["stages"].size(), j["config"]["pp"].get<std::size_t>());
  EXPECT_EQ(j["top"].size(), 3u);
  EXPECT_FALSE(j["search"].contains("seconds"));  // the document is the same on every run
}

TEST(CliTransformer, EvaluateTakesEveryKnob) {
  Outcome r =
      run("evaluate --model llama3-8b --cluster dgx-h100 --devices 64 --tp 2 --cp 2 --pp 4 "
          "--vpp 2 --batch 256 --seq-len 8192 --recompute 2 --sequence-parallel "
          "--zero 1 --overlap-grad-reduce --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["config"]["cp"], 2);
  EXPECT_EQ(j["config"]["dp"], 4);
  EXPECT_EQ(j["config"]["vpp"], 2);
  EXPECT_EQ(j["config"]["recompute"], "2");
  EXPECT_EQ(j["config"]["overlap_grad_reduce"], true);
  Outcome split =
      run("evaluate --model llama3-8b --devices 16 --tp 2 --pp 2 --stage-layers 17,15 --json");
  ASSERT_EQ(split.exit_code, 0) << split.out;
  EXPECT_EQ(nlohmann::json::parse(split.out)["config"]["stage_layers"],
            nlohmann::json::array({17, 15}));
  Outcome moe =
      run("evaluate --model mixtral-8x7b --cluster dgx-h100 --devices 64 --tp 2 --pp 4 "
          "--ep 8 --batch 256 --seq-len 4096");
  EXPECT_EQ(moe.exit_code, 0) << moe.out;
}

TEST(CliTransformer, BadKnobsNameTheRule) {
  expect_usage("evaluate --model llama3-8b --devices 16 --tp 2 --pp 2 --stage-layers 10,10",
               "sum to 20");
  expect_usage("evaluate --model llama3-8b --devices 16 --tp 2 --pp 2 --stage-layers 10,x",
               "--stage-layers");
  expect_usage("evaluate --model llama3-8b --recompute banana", "--recompute must be");
  expect_usage("evaluate --model gpt3-175b --devices 16 --ep 2",
               "expert parallelism needs a mixture-of-experts");
  expect_usage("evaluate --model llama3-8b --devices 16 --cp 2 --seq-len 1001", "--cp 2");
  expect_usage("evaluate --model llama3-8b --devices 16 --pp 2 --zero 2", "--zero 2");
  expect_usage("evaluate --model llama3-8b --devices 16 --pp 2 --vpp 3", "divisible by pp × vpp");
  expect_usage("plan --model llama3-8b --devices 16 --pp 2 --zero 3", "--zero 3");
  expect_usage("plan --model llama3-8b --devices 16 --stage-layers 16,16",
               "--stage-layers is a setting of evaluate");
  expect_usage("plan --planner pipeline --cp 2", "--cp does not apply to the pipeline planner");
  expect_usage("evaluate --model llama3-8b --overlap-grad-reduce --no-overlap-grad-reduce",
               "excludes");
}

TEST(CliTransformer, ClusterAndCalibrationFiles) {
  const std::string cluster = write_temp("two-nodes.yaml", R"(format: paraplan-cluster
version: 1
device_types: [{name: H100, memory_bytes: 85899345920, peak_flops_per_s: 9.89e14}]
machines: [{devices: 8, device_type: H100, count: 2}]
tiers:
  - {name: nvlink, bandwidth_bytes_per_s: 4.5e11}
  - {name: infiniband, bandwidth_bytes_per_s: 5.0e10}
)");
  const std::string calibration = std::string(PARAPLAN_CALIBRATION_DIR) + "/h100.json";
  Outcome from_file = run("evaluate --model llama3-8b --cluster " + cluster +
                          " --devices 16 --tp 2 "
                          "--pp 2 --batch 64 --calibration " +
                          calibration + " --json");
  Outcome preset =
      run("evaluate --model llama3-8b --cluster dgx-h100 --devices 16 --tp 2 --pp 2 "
          "--batch 64 --json");
  ASSERT_EQ(from_file.exit_code, 0) << from_file.out;
  ASSERT_EQ(preset.exit_code, 0) << preset.out;
  EXPECT_EQ(nlohmann::json::parse(from_file.out)["iteration_time_s"],
            nlohmann::json::parse(preset.out)["iteration_time_s"]);
  expect_usage("evaluate --model llama3-8b --cluster " + cluster + " --devices 32",
               "has only 16 devices");
  expect_usage("evaluate --model llama3-8b --cluster dgx-a100 --calibration " + calibration,
               "calibrates \"H100\" but the cluster's devices are \"A100\"");
  expect_usage("evaluate --model llama3-8b --cluster tpu-v5", "dgx-h100");
  Outcome missing = run("evaluate --model llama3-8b --cluster /nonexistent/c.yaml");
  EXPECT_EQ(missing.exit_code, 5) << missing.out;
  const std::string broken = write_temp("broken.json", "{\"format\": \"paraplan-calibration\"}");
  Outcome bad = run("evaluate --model llama3-8b --calibration " + broken);
  EXPECT_EQ(bad.exit_code, 3) << bad.out;
  EXPECT_NE(bad.out.find("broken.json"), std::string::npos) << bad.out;
}

// A cluster of two generations: the mixed pipeline beats each type alone and the plan that takes
// every device for the slower type; each type's calibration comes from the cluster file.
TEST(CliTransformer, PlansAClusterOfTwoDeviceTypes) {
  Outcome r = run("plan --model gpt-7.5b --cluster mixed-a100-h100 --devices 16 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["planner"], "llm-mixed");
  ASSERT_EQ(j["answer"], "mixed");
  const double mixed = j["iteration_time_s"].get<double>();
  EXPECT_EQ(mixed, j["mixed"]["iteration_time_s"].get<double>());
  for (const auto& alone : j["alone"])
    EXPECT_LT(mixed, alone["plan"]["iteration_time_s"].get<double>()) << alone["device_type"];
  EXPECT_EQ(j["type_blind"]["device_type"], "A100");
  EXPECT_LT(mixed, j["type_blind"]["iteration_time_s"].get<double>());
  std::set<int> devices;
  int layers = 0;
  for (const auto& stage : j["mixed"]["stages"]) {
    layers += stage["layers"].get<int>();
    for (const auto& d : stage["device_ids"]) EXPECT_TRUE(devices.insert(d.get<int>()).second);
  }
  EXPECT_EQ(layers, 36);
  EXPECT_EQ(devices.size(), 16u);

  // The same devices described in a file, the H100 with a calibration of half the GEMM speed.
  std::ifstream in(std::string(PARAPLAN_CALIBRATION_DIR) + "/h100.json");
  auto slow = nlohmann::json::parse(in);
  slow["gemm_efficiency"] = slow["gemm_efficiency"].get<double>() / 2;
  const std::string calibration = write_temp("slow-h100.json", slow.dump());
  const std::string cluster_text = R"(format: paraplan-cluster
version: 1
device_types:
  - {name: A100, memory_bytes: 85899345920, peak_flops_per_s: 312e12}
  - {name: H100, memory_bytes: 85899345920, peak_flops_per_s: 989e12CALIBRATION}
machines: [{devices: 8, device_type: A100}, {devices: 8, device_type: H100}]
tiers:
  - {name: NVLink, bandwidth_bytes_per_s: 300e9}
  - {name: InfiniBand, bandwidth_bytes_per_s: 25e9}
)";
  const auto cluster_with = [&](const std::string& name, const std::string& extra) {
    std::string text = cluster_text;
    text.replace(text.find("CALIBRATION"), 11, extra);
    return write_temp(name, text);
  };
  const std::string plain = cluster_with("two-types.yaml", "");
  const std::string calibrated =
      cluster_with("two-types-calibrated.yaml", ", calibration: " + calibration);
  const auto time_on = [&](const std::string& cluster) {
    Outcome o = run("plan --model gpt-7.5b --devices 16 --json --cluster " + cluster);
    EXPECT_EQ(o.exit_code, 0) << o.out;
    return o.exit_code == 0 ? nlohmann::json::parse(o.out)["iteration_time_s"].get<double>() : 0.0;
  };
  EXPECT_LT(time_on(plain) * 1.05, time_on(calibrated));

  expect_usage("plan --model gpt-1.7b --cluster mixed-a100-h100 --devices 16 --export megatron",
               "--export: not available for a cluster of several device types");
  expect_usage("plan --model gpt-1.7b --cluster mixed-a100-h100 --devices 16 --model-device B200",
               "--model-device \"B200\": not a device type");
  expect_usage("plan --model mixtral-8x7b --cluster mixed-a100-h100 --devices 16",
               "is a mixture of experts");
  expect_usage("plan --model gpt-1.7b --cluster dgx-a100 --devices 8 --model-device A100",
               "--model-device: the transformer planner takes it on a cluster of several");
}

// The mixed plan is a plan like the others: written with -o, replayed by simulate (which prices it
// again and checks it), with a trace and a report; a bad file is refused by its field.
TEST(CliTransformer, MixedPlanFileReplaysInTheSimulator) {
  const std::string dir = testing::TempDir();
  const std::string file = dir + "mixed-plan.json", trace = dir + "mixed-trace.json",
                    report = dir + "mixed-report.html";
  Outcome r = run("plan --model gpt-7.5b --cluster mixed-a100-h100 --devices 16 --quiet -o " +
                  file + " --trace " + trace + " --report " + report);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(file);
  const auto plan = nlohmann::json::parse(in);
  EXPECT_EQ(plan["format"], "paraplan-plan");
  EXPECT_EQ(plan["planner"], "llm-mixed");
  ASSERT_EQ(plan["calibrations"].size(), 2u);
  Outcome s = run("simulate " + file + " --json");
  ASSERT_EQ(s.exit_code, 0) << s.out;
  const auto sim = nlohmann::json::parse(s.out);
  // The replay runs the analytic model's 1F1B over the same stage times: close, not equal (the
  // simulator's fill and drain follow each stage's own time, the formula the slowest stage's).
  EXPECT_NEAR(sim["iteration_time_s"].get<double>(), plan["iteration_time_s"].get<double>(),
              0.05 * plan["iteration_time_s"].get<double>());
  EXPECT_EQ(sim["analytic_iteration_time_s"], plan["iteration_time_s"]);
  EXPECT_EQ(sim["analytic_peak_bytes"].get<double>() > 0, true);
  std::ifstream html(report), events(trace);
  const std::string page((std::istreambuf_iterator<char>(html)), {});
  EXPECT_NE(page.find("H100"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(events)["traceEvents"].empty());
  EXPECT_EQ(run("simulate " + file + " --schedule gpipe").exit_code, 2);

  // Bad files: a device type the cluster lacks, more devices than a type has, a split that does
  // not cover the model, a plan that no longer fits.
  const auto expect_bad = [&](const std::string& name, nlohmann::json doc, int code,
                              const std::string& needle) {
    const std::string path = write_temp(name, doc.dump());
    Outcome o = run("simulate " + path);
    EXPECT_EQ(o.exit_code, code) << o.out;
    EXPECT_NE(o.out.find(needle), std::string::npos) << o.out;
  };
  auto type = plan;
  type["config"]["segments"][0]["device_type"] = "B200";
  expect_bad("mixed-type.json", type, 3, "\"B200\" is not a device type of the cluster");
  auto wide = plan;
  wide["config"]["segments"][0]["dp"] = 16;
  wide["config"].erase("devices");
  expect_bad("mixed-wide.json", wide, 3, "/config: its segments use 24 devices; the job has 16");
  auto split = plan;
  split["config"]["stage_layers"][0] = 1;
  expect_bad("mixed-split.json", split, 3, "stage_layers");
  auto small = plan;
  for (auto& t : small["cluster_config"]["device_types"]) t["memory_bytes"] = 1e9;
  expect_bad("mixed-small.json", small, 4, "does not fit");

  // When one type alone is faster, the file is that plan on its devices: a transformer plan.
  const std::string slow = write_temp("fast-and-slow.yaml", R"(format: paraplan-cluster
version: 1
device_types:
  - {name: H100, memory_bytes: 85899345920, peak_flops_per_s: 989e12}
  - {name: A100, memory_bytes: 17179869184, peak_flops_per_s: 65e12}
machines: [{devices: 8, device_type: H100}, {devices: 8, device_type: A100}]
tiers:
  - {name: NVLink, bandwidth_bytes_per_s: 300e9}
  - {name: InfiniBand, bandwidth_bytes_per_s: 25e9}
)");
  const std::string alone = dir + "alone-plan.json";
  Outcome a = run("plan --model gpt-1.7b --devices 16 --json --cluster " + slow + " -o " + alone);
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(nlohmann::json::parse(a.out)["answer"], "alone");
  std::ifstream alone_in(alone);
  const auto alone_plan = nlohmann::json::parse(alone_in);
  EXPECT_EQ(alone_plan["format"], "paraplan-plan");
  EXPECT_EQ(alone_plan["planner"], "llm");
  EXPECT_EQ(alone_plan["config"]["devices"], 8);
  Outcome as = run("simulate " + alone + " --json");
  ASSERT_EQ(as.exit_code, 0) << as.out;
  EXPECT_EQ(nlohmann::json::parse(as.out)["analytic_iteration_time_s"],
            alone_plan["iteration_time_s"]);
}

TEST(CliTransformer, ExportsTheSearchedPlan) {
  Outcome r =
      run("plan --model llama3-70b --cluster dgx-h100 --devices 64 --batch 256 --seq-len 4096 "
          "--export megatron");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("--tensor-model-parallel-size"), std::string::npos) << r.out;
  Outcome ds =
      run("plan --model llama3-8b --devices 8 --batch 64 --pp 1 --zero 3 --export deepspeed");
  ASSERT_EQ(ds.exit_code, 0) << ds.out;
  const std::size_t begin = ds.out.find("<<'EOF'\n") + 8, end = ds.out.find("\nEOF\n");
  ASSERT_LT(begin, end) << ds.out;
  EXPECT_EQ(nlohmann::json::parse(ds.out.substr(begin, end - begin))["zero_optimization"]["stage"],
            3);
  EXPECT_NE(ds.out.find("--zero-stage 3"), std::string::npos) << ds.out;
}

TEST(CliTransformer, FrontierJsonAndPlot) {
  const std::string svg = testing::TempDir() + "frontier.svg";
  Outcome r = run("frontier --model gpt-1.7b --devices 16 --batch 64 --json --svg " + svg);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["points"].empty());
  std::set<int> device_counts;
  double previous = 0;
  for (const auto& p : j["points"]) {
    for (const char* key : {"objective", "peak_memory_bytes", "devices_used", "config"})
      EXPECT_TRUE(p.contains(key)) << key;
    EXPECT_GE(p["objective"].get<double>(), previous);
    previous = p["objective"].get<double>();
    device_counts.insert(p["devices_used"].get<int>());
  }
  EXPECT_GT(device_counts.size(), 1u);  // fewer devices: slower but leaner
  Outcome best = run("plan --model gpt-1.7b --devices 16 --batch 64 --json");
  // The frontier's fastest point is the search's fastest; plan recommends the leanest of the
  // plans within the stack's time band of it (ties), so at most the band slower and no larger.
  const auto planned = nlohmann::json::parse(best.out);
  const double fastest = j["points"][0]["objective"].get<double>();
  EXPECT_GE(planned["iteration_time_s"].get<double>(), fastest);
  EXPECT_LE(planned["iteration_time_s"].get<double>(),
            fastest * (1 + planned["ties"]["time_band"].get<double>()));
  EXPECT_LE(planned["memory"]["peak_bytes"].get<double>(),
            j["points"][0]["peak_memory_bytes"].get<double>());
  std::ifstream in(svg);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("<svg", 0), 0u);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  EXPECT_NE(text.find("16 devices"), std::string::npos);
}

TEST(CliFrontier, PipelinePlannerFrontierOnALayerModel) {
  Outcome r = run("frontier --json --memory-step 0.05");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cost_model"], "piper");
  ASSERT_FALSE(j["points"].empty());
  for (const auto& p : j["points"])
    for (const char* key : {"objective", "peak_memory_bytes", "devices_used", "stages"})
      EXPECT_TRUE(p.contains(key)) << key;
  Outcome best = run("plan --planner pipeline --json");
  EXPECT_EQ(j["points"][0]["objective"], nlohmann::json::parse(best.out)["objective"]);
  Outcome both = run("frontier x.json --model llama3-8b");
  EXPECT_EQ(both.exit_code, 2) << both.out;
}

}  // namespace
