// paraplan simulate end to end: the trace's structure, and plans that do not match their model
// or cluster, or do not fit, refused with one message.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_test_support.h"

namespace {

using paraplan::testing_support::Outcome;
using paraplan::testing_support::read_json;
using paraplan::testing_support::run;
using paraplan::testing_support::run_shell;
using paraplan::testing_support::write_json;
using paraplan::testing_support::write_temp;

std::string planned(const std::string& name, const std::string& flags) {
  const std::string path = testing::TempDir() + name;
  Outcome r = run("plan " + flags + " -o " + path);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return path;
}

TEST(CliSimulate, TraceHasOneRowPerDeviceAndStreamAndNoOverlaps) {
  const std::string plan =
      planned("sim_plan.json", "--model gpt-1.7b --devices 16 --batch 64 --pp 4 --vpp 1");
  const std::string trace = testing::TempDir() + "sim_trace.json";
  Outcome r = run("simulate " + plan + " --trace " + trace + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["schedule"], "1f1b");
  EXPECT_GT(s["iteration_time_s"].get<double>(), 0);
  EXPECT_EQ(s["devices"].size(), 4u);
  auto t = read_json(trace);
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::map<std::pair<int, int>, double> busy_until;
  int complete = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threads[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (e["ph"] != "X") continue;
    ++complete;
    EXPECT_TRUE(e["args"].contains("phase"));
    const std::string phase = e["args"]["phase"];
    if (phase == "forward" || phase == "backward") {
      EXPECT_TRUE(e["args"].contains("stage"));
      EXPECT_TRUE(e["args"].contains("microbatch"));
    }
    auto& until = busy_until[{e["pid"], e["tid"]}];
    EXPECT_GE(e["ts"].get<double>(), until - 1e-6) << e.dump();
    until = e["ts"].get<double>() + e["dur"].get<double>();
  }
  EXPECT_EQ(processes.size(), 5u);  // 4 devices and the links' traffic
  EXPECT_EQ(processes[5], "network links (GB/s)");
  EXPECT_EQ(threads.size(), 16u);  // 4 devices × compute, collectives, pipeline, data parallel
  EXPECT_EQ((threads[std::pair{1, 0}]), "compute");
  EXPECT_EQ(complete, s["events"].get<int>());
  // Same plan, same trace.
  const std::string again = testing::TempDir() + "sim_trace2.json";
  run("simulate " + plan + " --trace " + again);
  EXPECT_EQ(read_json(again), t);
}

TEST(CliSimulate, InterleavedAndGpipeSchedules) {
  const std::string plan =
      planned("sim_vpp.json", "--model gpt-1.7b --devices 16 --batch 64 --pp 4 --vpp 2 --dp 2");
  Outcome r = run("simulate " + plan + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["schedule"], "interleaved-1f1b");
  Outcome wrong = run("simulate " + plan + " --schedule gpipe");
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out;
  EXPECT_NE(wrong.out.find("interleaved-1f1b"), std::string::npos) << wrong.out;
}

// GPipe keeps every micro-batch's activations until the backward: a plan that fits under 1F1B
// can peak far above the device under it. The figures are printed with the verdict, exit 4.
TEST(CliSimulate, AScheduleThatOverflowsTheDeviceSaysSoAndExitsFour) {
  const std::string plan = planned("sim_gpipe.json",
                                   "--model llama3-70b --cluster dgx-h100 --devices 64 --batch 256 "
                                   "--seq-len 8192 --vpp 1");
  Outcome fine = run("simulate " + plan);
  ASSERT_EQ(fine.exit_code, 0) << fine.out;
  EXPECT_NE(fine.out.find("— fits"), std::string::npos) << fine.out;
  Outcome over = run("simulate " + plan + " --schedule gpipe");
  EXPECT_EQ(over.exit_code, 4) << over.out;
  EXPECT_NE(over.out.find("DOES NOT FIT under this schedule"), std::string::npos) << over.out;
  Outcome json = run("simulate " + plan + " --schedule gpipe --json");
  EXPECT_EQ(json.exit_code, 4);
  EXPECT_FALSE(nlohmann::json::parse(json.out)["fits"].get<bool>());
}

TEST(CliSimulate, RefusesPlansThatDoNotMatchOrDoNotFit) {
  const std::string plan =
      planned("sim_bad.json", "--model gpt-1.7b --devices 16 --batch 64 --pp 2 --vpp 1");
  auto j = read_json(plan);
  const std::string path = testing::TempDir() + "sim_edited.json";
  auto expect = [&](const nlohmann::json& doc, int code, const std::string& needle) {
    write_json(path, doc);
    Outcome r = run("simulate " + path);
    EXPECT_EQ(r.exit_code, code) << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << r.out;
  };
  auto layers = j;
  layers["model_config"]["num_layers"] = 30;
  expect(layers, 3,
         "/config/stage_layers: stage_layers 13,11: they sum to 24, but the model has 30 layers");
  auto devices = j;
  devices["config"]["dp"] = devices["config"]["dp"].get<int>() * 4;
  devices["config"]["devices"] = devices["config"]["devices"].get<int>() * 4;
  expect(devices, 3,
         fmt::format("/config/devices: devices 64: tp × cp × pp × dp = {} × 1 × 2 × {} = 64 "
                     "devices, but the cluster has 16",
                     j["config"]["tp"].get<int>(), devices["config"]["dp"].get<int>()));
  auto tiny = j;
  tiny["cluster_config"]["device_types"][0]["memory_bytes"] = 1e9;
  expect(tiny, 4, "does not fit in memory");
  auto format = j;
  format["format"] = "paraplan-model";
  expect(format, 3, "/format: expected \"paraplan-plan\"");
  auto knob = j;
  knob["config"]["zero"] = 2;  // with pp = 2
  expect(knob, 3,
         "/config/zero: zero 2: ZeRO stages 2 and 3 partition gradients per micro-batch and do not "
         "combine with pipeline parallelism (pp ");
  auto kernel = j;
  kernel["config"]["attention"] = "sdpa";
  expect(kernel, 3, "/config/attention");
}

// Plans written before the attention knob were priced with standard attention and read so.
TEST(CliSimulate, PlansWithoutTheAttentionKnobReadAsStandard) {
  const std::string plan =
      planned("sim_attention.json", "--model gpt-1.7b --devices 16 --batch 64 --pp 2 --vpp 1");
  auto j = read_json(plan);
  ASSERT_EQ(j["config"]["attention"], "flash");
  Outcome flash = run("simulate " + plan + " --json");
  ASSERT_EQ(flash.exit_code, 0) << flash.out;
  j["config"].erase("attention");
  const std::string old = testing::TempDir() + "sim_attention_old.json";
  write_json(old, j);
  Outcome standard = run("simulate " + old + " --json");
  ASSERT_EQ(standard.exit_code, 0) << standard.out;
  EXPECT_GT(nlohmann::json::parse(standard.out)["analytic_iteration_time_s"].get<double>(),
            nlohmann::json::parse(flash.out)["analytic_iteration_time_s"].get<double>());
}

// The same plan replayed on another training stack: its kernels and overlaps, the knobs kept;
// only transformer plans have a stack.
TEST(CliSimulate, ReplaysATransformerPlanOnAnotherStack) {
  const std::string plan =
      planned("sim_stack.json",
              "--model llama3-8b --cluster dgx-h100 --devices 16 --batch 64 --seq-len 4096 --tp 2 "
              "--pp 2 --vpp 2 --sequence-parallel --zero 1");
  Outcome megatron = run("simulate " + plan + " --json");
  Outcome deepspeed = run("simulate " + plan + " --stack deepspeed --json");
  ASSERT_EQ(megatron.exit_code, 0) << megatron.out;
  ASSERT_EQ(deepspeed.exit_code, 0) << deepspeed.out;
  const auto m = nlohmann::json::parse(megatron.out), d = nlohmann::json::parse(deepspeed.out);
  // Nothing overlapped on Megatron-DeepSpeed: slower, in the simulator and the model alike.
  EXPECT_GT(d["iteration_time_s"].get<double>(), m["iteration_time_s"].get<double>());
  EXPECT_GT(d["analytic_iteration_time_s"].get<double>(),
            m["analytic_iteration_time_s"].get<double>());
  const std::string piper = testing::TempDir() + "sim_stack_piper.json";
  ASSERT_EQ(run("plan --planner pipeline --memory 5GiB -o " + piper).exit_code, 0);
  Outcome refused = run("simulate " + piper + " --stack fsdp");
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("--stack"), std::string::npos) << refused.out;
}

TEST(CliSimulate, PipelinePlannerPlans) {
  const std::string plan = testing::TempDir() + "sim_piper.json";
  Outcome planned_run = run("plan --planner pipeline --memory 5GiB -o " + plan);
  ASSERT_EQ(planned_run.exit_code, 0) << planned_run.out;
  const std::string trace = testing::TempDir() + "sim_piper_trace.json";
  Outcome r = run("simulate " + plan + " --json --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["difference"].get<double>(), -1e-9);
  EXPECT_EQ(j["devices"].size(), 2u);  // two stages of one replica each
  EXPECT_FALSE(read_json(trace)["traceEvents"].empty());
  auto doc = read_json(plan);
  doc.erase("model_config");
  const std::string bare = testing::TempDir() + "sim_piper_bare.json";
  write_json(bare, doc);
  Outcome missing = run("simulate " + bare);
  EXPECT_EQ(missing.exit_code, 3) << missing.out;
  EXPECT_NE(missing.out.find("model_config"), std::string::npos) << missing.out;
  doc = read_json(plan);
  doc["stages"][0]["layers"][0] = 999;
  write_json(bare, doc);
  Outcome wrong = run("simulate " + bare);
  EXPECT_EQ(wrong.exit_code, 3) << wrong.out;
}

TEST(CliSimulate, DapplePlans) {
  const std::string plan = testing::TempDir() + "sim_dapple.json";
  Outcome planned_run = run("plan " + std::string(PARAPLAN_DATA) +
                            "/dapple/xlnet-36-pbs-1.txt --machines 2x8 --batch 128 -o " + plan);
  ASSERT_EQ(planned_run.exit_code, 0) << planned_run.out;
  const std::string trace = testing::TempDir() + "sim_dapple_trace.json";
  Outcome r = run("simulate " + plan + " --json --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["events"], 128);  // 2 stages × 16 micro-batches × (forward, backward) × (pass, hop)
  EXPECT_GT(j["bubble_fraction"].get<double>(), 0);
  // One stage per device group: the simulated time is at least 16 micro-batches of the slowest.
  EXPECT_GT(j["iteration_time_s"].get<double>(), 2.41984);
  std::map<std::pair<int, int>, double> busy_until;
  const auto doc = read_json(trace);
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    auto& until = busy_until[{e["pid"], e["tid"]}];
    EXPECT_GE(e["ts"].get<double>(), until - 1e-6);
    until = e["ts"].get<double>() + e["dur"].get<double>();
  }
}

TEST(CliSimulate, IntraOperatorPlans) {
  const std::string plan = testing::TempDir() + "sim_intra.json";
  Outcome planned_run = run("plan --planner intra-op --model alexnet --devices 8 -o " + plan);
  ASSERT_EQ(planned_run.exit_code, 0) << planned_run.out;
  Outcome r = run("simulate " + plan + " --json --report " + testing::TempDir() + "sim_intra.html");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["difference"].get<double>(), 0, 1e-9);  // a chain of layers: exactly the plan's sum
  EXPECT_EQ(j["events"], 28);                           // 14 layers × (compute, collectives)
  auto doc = read_json(plan);
  doc["layer_splits"][0]["compute"] = doc["layer_splits"][0]["compute"].get<double>() * 2 + 1;
  const std::string edited = testing::TempDir() + "sim_intra_edited.json";
  write_json(edited, doc);
  Outcome wrong = run("simulate " + edited);
  EXPECT_EQ(wrong.exit_code, 3) << wrong.out;
  EXPECT_NE(wrong.out.find("not the plan's objective"), std::string::npos) << wrong.out;
}

}  // namespace
