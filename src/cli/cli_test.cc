// The paraplan binary end to end: outputs, exit codes and one-line messages for bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_test_support.h"

namespace {

using paraplan::testing_support::Outcome;
using paraplan::testing_support::read_json;
using paraplan::testing_support::read_text;
using paraplan::testing_support::run;
using paraplan::testing_support::run_shell;
using paraplan::testing_support::write_json;
using paraplan::testing_support::write_temp;

const std::string kPiper = std::string(PARAPLAN_DATA) + "/piper/";

// When nothing fits, plan says what would: the leanest configuration's memory per device, the
// fewest devices of the kind that fit and that plan, in words and (exit 4 still) in JSON.
TEST(Cli, NothingFitsSaysWhatWould) {
  const std::string ask = "plan --model llama3-405b --cluster dgx-h100 --devices 8 --batch 64";
  Outcome words = run(ask);
  EXPECT_EQ(words.exit_code, 4) << words.out;
  for (const char* needle : {"none of the", "the leanest needs", "GiB per device",
                             "the fewest H100 on which a plan fits: "})
    EXPECT_NE(words.out.find(needle), std::string::npos) << needle << "\n" << words.out;
  Outcome json = run(ask + " --json");
  EXPECT_EQ(json.exit_code, 4);
  const auto j = nlohmann::json::parse(json.out.substr(0, json.out.rfind('}') + 1));
  EXPECT_FALSE(j["feasible"].get<bool>());
  EXPECT_GT(j["least_memory_per_device_bytes"].get<double>(), 79.0 * (1ull << 30));
  const int fewest = j["fewest_devices"].get<int>();
  EXPECT_GT(fewest, 8);
  EXPECT_EQ(j["fewest_devices_plan"]["config"]["devices"].get<int>(), fewest);
  EXPECT_TRUE(j["fewest_devices_plan"]["fits"].get<bool>());
  // Under the same headroom as the devices asked (5 % of 79.647 GiB kept free).
  EXPECT_LE(j["fewest_devices_plan"]["memory"]["peak_bytes"].get<double>(),
            0.95 * j["memory_per_device_bytes"].get<double>() + 1);
  // The answer is the fewest: one node fewer does not fit, however it is split.
  Outcome fewer = run(fmt::format(
      "plan --model llama3-405b --cluster dgx-h100 --devices {} --batch 64", fewest - 8));
  EXPECT_EQ(fewer.exit_code, 4) << fewer.out;
}

// A profile measured on the CPU is not scaled to a GPU by the FLOP/s ratio (that made ResNet-18
// 100 times too fast on A100s): planned for a GPU cluster it is refused with how to get a GPU
// profile or a probe; with no cluster it is planned on its own device, its times as measured.
TEST(Cli, ACpuProfileIsNotScaledToAGpu) {
  const std::string layer =
      R"({"id": 0, "name": "block", "output_bytes": 1000, "options": {"1": [{"id": "vanilla", )"
      R"("compute_time_s": 0.5, "forward_time_s": 0.2, "parameter_bytes": 1000000, )"
      R"("memory_per_inflight_bytes": 1000000, "memory_fixed_bytes": 4000000}]}})";
  const std::string model = write_temp(
      "cpu_profile.json",
      R"j({"format": "paraplan-model", "version": 1, "name": "cpu-net", "microbatches": 4, )j"
      R"j("profile_batch_size": 2, "layers": [)j" +
          layer +
          R"j(], "edges": [], "profiled_on": {"device": "cpu (x86_64)", "flops_per_s": 8e9, )j"
          R"j("threads": 1, "input_shape": [2, 3], "tokens": 0}})j");
  Outcome gpu = run("plan " + model + " --devices 2 --memory 8GiB --cluster dgx-a100");
  EXPECT_EQ(gpu.exit_code, 2) << gpu.out;
  for (const char* needle : {"profiled on cpu (x86_64)", "do not scale to a GPU", "--device cuda",
                             "paraplan probe", "--model-device A100"})
    EXPECT_NE(gpu.out.find(needle), std::string::npos) << needle << "\n" << gpu.out;
  Outcome own = run("plan " + model + " --devices 2 --memory 8GiB");
  EXPECT_EQ(own.exit_code, 0) << own.out;
  EXPECT_EQ(own.out.find("compute scaled"), std::string::npos) << own.out;
  Outcome named = run("plan " + model +
                      " --devices 2 --memory 8GiB --cluster dgx-a100 "
                      "--model-device A100");
  EXPECT_EQ(named.exit_code, 0) << named.out;
}

// Runners-up within the stack's validated time error of the fastest are ties the model cannot
// order: the leanest of them is recommended, and the answer says so (Qwen3-30B-A3B on 8 H100:
// the fastest needs 75.5 GiB, a tie 3.6 % slower 73.9 GiB).
TEST(Cli, TiesWithinTheErrorBandGoToTheLeanest) {
  const std::string ask = "plan --model " PARAPLAN_TEST_DATA
                          "/hf-configs/qwen3-30b-a3b/config.json --cluster dgx-h100 --devices 8";
  Outcome words = run(ask);
  ASSERT_EQ(words.exit_code, 0) << words.out;
  EXPECT_NE(words.out.find("are ties: within 4.1 % of the fastest"), std::string::npos)
      << words.out;
  const auto j = nlohmann::json::parse(run(ask + " --json").out);
  ASSERT_GT(j["ties"]["count"].get<int>(), 1);
  const double best_time = j["iteration_time_s"].get<double>();
  double fastest = best_time;
  for (const auto& p : j["top"]) fastest = std::min(fastest, p["iteration_time_s"].get<double>());
  const int ties = j["ties"]["count"].get<int>();
  for (int i = 0; i < ties; ++i) {  // none of the ties is leaner than the recommended plan
    EXPECT_GE(j["top"][i]["memory"]["peak_bytes"].get<double>(),
              j["memory"]["peak_bytes"].get<double>());
    EXPECT_LE(j["top"][i]["iteration_time_s"].get<double>(), fastest * 1.039 + 1e-9);
  }
  EXPECT_LE(best_time, fastest * 1.039);
}

// The question before buying: how many GPUs train Llama 3 70B on 15T tokens in 90 days. The
// answer's plan meets the deadline, the node count tried below it does not, and the cost is
// the device-hours times the price.
TEST(Cli, HowManyGpusForTokensInDays) {
  const std::string ask =
      "plan --model llama3-70b --cluster dgx-h100 --seq-len 8192 --batch 2048 --train-tokens 15T "
      "--days 90 --gpu-hour-price 2.5";
  Outcome words = run(ask);
  ASSERT_EQ(words.exit_code, 0) << words.out;
  EXPECT_NE(words.out.find("to train llama3-70b on 15T tokens in 90 days"), std::string::npos)
      << words.out;
  Outcome json = run(ask + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const auto j = nlohmann::json::parse(json.out);
  const auto& answer = j["sizing"]["answer"];
  const int devices = answer["devices"].get<int>();
  const double need = 15e12 / (90 * 86400.0);
  EXPECT_GE(j["tokens_per_s"].get<double>(), need);
  EXPECT_EQ(j["config"]["devices"].get<int>(), devices);
  EXPECT_LE(answer["days"].get<double>(), 90.0);
  EXPECT_NEAR(answer["cost"].get<double>(), 2.5 * answer["device_hours"].get<double>(), 1e-6);
  EXPECT_EQ(devices % 8, 0);
  EXPECT_GT(devices, 256);
  // One node count fewer (of those the answer steps through) falls short.
  const auto below = nlohmann::json::parse(
      run(fmt::format("plan --model llama3-70b --cluster dgx-h100 --seq-len 8192 --batch 2048 "
                      "--devices {} --json",
                      devices * 7 / 8))
          .out);
  EXPECT_LT(below["tokens_per_s"].get<double>(), need);
  for (const char* bad :
       {" --train-tokens 15X --days 90", " --train-tokens 15T", " --train-tokens -3 --days 9"}) {
    Outcome refused = run("plan --model llama3-70b --cluster dgx-h100" + std::string(bad));
    EXPECT_EQ(refused.exit_code, 2) << bad << "\n" << refused.out;
  }
}

// Without arguments, plan answers the question most users come with, every figure with its unit.
TEST(Cli, TheDefaultPlanShowsTheProduct) {
  Outcome r = run("plan");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* needle :
       {"llama3-70b", "64 × H100", "256 sequences × 8192 tokens", "best plan: tensor",
        "iteration time", " s predicted", "tokens/s", "MFU", " % (", "TFLOP/s", "memory per device",
        " GiB (±4.2 %) of 79.647 GiB", "runners-up:", "--tensor-model-parallel-size",
        "--pipeline-model-parallel-size", "Plan your own: paraplan plan --model"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
  // The same question asked explicitly gets the same answer (but for the search's own time),
  // without the closing hint.
  Outcome asked =
      run("plan --model llama3-70b --cluster dgx-h100 --devices 64 --batch 256 --seq-len 8192");
  ASSERT_EQ(asked.exit_code, 0) << asked.out;
  auto answer = [](std::string text) {
    const std::size_t searched = text.find("searched ");
    text.erase(searched, text.find('\n', searched) - searched);
    text = text.substr(0, text.find("defaults (not given)"));
    return text.substr(0, text.find("\nthis is the built-in example"));
  };
  // Both say the memory they keep free, which neither was given.
  EXPECT_NE(r.out.find("defaults (not given): --memory-headroom 5%"), std::string::npos);
  EXPECT_NE(asked.out.find("defaults (not given): --memory-headroom 5%"), std::string::npos);
  EXPECT_EQ(answer(asked.out), answer(r.out));
  // Its flags still apply, and a pipeline-planner flag says where it belongs.
  Outcome more = run("plan --devices 128");
  EXPECT_NE(more.out.find("128 × H100"), std::string::npos) << more.out;
  Outcome wrong = run("plan --microbatches 8");
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out;
  EXPECT_NE(wrong.out.find("--microbatches does not apply to the transformer planner (without an "
                           "input or a model it plans llama3-70b; give an input, or choose the "
                           "pipeline planner"),
            std::string::npos)
      << wrong.out;
}

TEST(Cli, PlansTheBuiltInLayerModelWithThePipelinePlanner) {
  Outcome r = run("plan --planner pipeline");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("objective:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("devices used:"), std::string::npos) << r.out;
}

TEST(Cli, JsonOutputHasTheDocumentedTopLevel) {
  Outcome r = run("plan " + kPiper +
                  "bert32a100.json --devices 8 --memory 8GiB --bandwidth 25GiB/s --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["feasible"], true);
  EXPECT_NEAR(j["objective"].get<double>(), 0.16585575, 1e-12);
  EXPECT_EQ(j["devices_used"], 8);
  EXPECT_EQ(j["format"], "paraplan-plan");
}

TEST(Cli, WritesThePlanFile) {
  std::string out = testing::TempDir() + "plan.json";
  Outcome r = run("plan " + kPiper + "bert32a100.json -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(out);
  auto j = nlohmann::json::parse(in);
  EXPECT_NEAR(j["objective"].get<double>(), 0.09772736112, 1e-9);
}

TEST(Cli, DeterministicOutput) {
  // Every planner's --json, twice: the same bytes (no seconds, no counts that depend on how the
  // threads ran), from runs that succeed.
  for (const std::string& args :
       {"plan " + kPiper + "resnet.json --devices 16 --memory 8GiB --json",
        std::string("plan --model llama3-70b --cluster dgx-h100 --devices 256 --batch 512 --json "
                    "--quiet"),
        std::string("plan --model gpt-7.5b --cluster mixed-a100-h100 --devices 16 --json --quiet"),
        std::string("plan --model alexnet --devices 8 --json"),
        std::string("frontier --model llama3-8b --devices 16 --batch 64 --json --quiet"),
        std::string("frontier --model inception3 --devices 4 --json --quiet"),
        // No time limit: a search cut short by the clock is truncated where the clock says.
        "frontier " + kPiper + "resnet.json --devices 8 --time-limit 0 --json --quiet"}) {
    const Outcome first = run(args), second = run(args);
    ASSERT_EQ(first.exit_code, 0) << args << "\n" << first.out;
    ASSERT_EQ(second.exit_code, 0) << args << "\n" << second.out;
    EXPECT_EQ(first.out, second.out) << args;
  }
}

TEST(Cli, InfeasibleMemoryNamesTheSmallestThatFits) {
  Outcome r = run("plan " + kPiper + "bert32a100.json --devices 8 --memory 1GiB");
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("no plan fits in 1073741824 bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("smallest memory per device that fits is"), std::string::npos) << r.out;
  // And that amount really fits.
  auto pos = r.out.find("fits is ") + 8;
  std::string need = r.out.substr(pos, r.out.find(' ', pos) - pos);
  Outcome again = run("plan " + kPiper + "bert32a100.json --devices 8 --memory " + need);
  EXPECT_EQ(again.exit_code, 0) << again.out;
}

TEST(Cli, BadFlagsAreUsageErrors) {
  EXPECT_EQ(run("plan --devices 0").exit_code, 2);
  EXPECT_EQ(run("plan --planner pipeline --memory lots").exit_code, 2);
  EXPECT_EQ(run("plan --planner pipeline --bandwidth -3GB/s").exit_code, 2);
  EXPECT_EQ(run("plan --planner pipeline --cost-model alpa").exit_code, 2);
  EXPECT_EQ(run("frobnicate").exit_code, 2);
  Outcome r = run("plan --planner pipeline --memory lots");
  EXPECT_NE(r.out.find("--memory: expected a positive size such as 8GiB"), std::string::npos)
      << r.out;
}

TEST(Cli, BadFilesAreInputErrorsNamingTheFile) {
  std::string bad = write_temp("bad.json", "{\"nodes\": [1, 2,, 3]}");
  Outcome r = run("plan " + bad);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find(bad + ":1:"), std::string::npos) << r.out;
  std::string odd = write_temp("odd.json", "{\"hello\": 1}");
  EXPECT_EQ(run("plan " + odd).exit_code, 3);
  EXPECT_EQ(run("plan /nonexistent.json").exit_code, 5);
}

TEST(Cli, DappleProfilesUseTheDappleModel) {
  std::string profile = std::string(PARAPLAN_DATA) + "/dapple/xlnet-36-pbs-1.txt";
  Outcome r = run("plan " + profile + " --machines 2x8 --batch 128 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cost_model"], "dapple");
  // DAPPLE's worked example (spec §6): 14.816194; paraplan finds the same plan.
  EXPECT_GE(j["speedup"].get<double>(), 14.816194280556266 * (1 - 1e-9));
  EXPECT_NEAR(j["objective"].get<double>(), 38.49088 / j["speedup"].get<double>(), 1e-6);
  EXPECT_GE(j["speedup"].get<double>(), j["data_parallel_speedup"].get<double>());
  EXPECT_EQ(run("plan " + profile + " --machines 0x8").exit_code, 2);
  EXPECT_EQ(run("plan " + profile + " --machines 2y8").exit_code, 2);
  EXPECT_EQ(run("plan " + profile + " --devices 4").exit_code, 2);
  EXPECT_EQ(run("plan " + profile + " --batch 4 --microbatch-size 8").exit_code, 2);
  EXPECT_EQ(run("plan " + kPiper + "bert32a100.json --cost-model dapple").exit_code, 2);
  std::string bad = write_temp("bad.txt", "node1 -- x -- forward_compute_time=1\n");
  Outcome b = run("plan " + bad);
  EXPECT_EQ(b.exit_code, 3);
  EXPECT_NE(b.out.find(bad + ":1:"), std::string::npos) << b.out;
}

TEST(Cli, ConvertedModelsPlanTheSame) {
  std::string model = testing::TempDir() + "bert.model.json";
  std::string cluster = testing::TempDir() + "bert.cluster.json";
  Outcome c =
      run("convert " + kPiper + "bert32a100.json -o " + model + " --cluster-output " + cluster);
  ASSERT_EQ(c.exit_code, 0) << c.out;
  Outcome direct = run("plan " + kPiper + "bert32a100.json --devices 16 --memory 8GiB --json");
  Outcome native =
      run("plan " + model + " --cluster " + cluster + " --devices 16 --memory 8GiB --json");
  ASSERT_EQ(native.exit_code, 0) << native.out;
  EXPECT_EQ(nlohmann::json::parse(direct.out)["objective"],
            nlohmann::json::parse(native.out)["objective"]);
  // The cluster file carries Piper's K, memory and bandwidth: same figure with no overrides.
  EXPECT_EQ(
      nlohmann::json::parse(run("plan " + kPiper + "bert32a100.json --json").out)["objective"],
      nlohmann::json::parse(
          run("plan " + model + " --cluster " + cluster + " --json").out)["objective"]);
  std::string profile = std::string(PARAPLAN_DATA) + "/dapple/vgg-19-pbs-32.txt";
  std::string vgg = testing::TempDir() + "vgg.model.json";
  ASSERT_EQ(run("convert " + profile + " -o " + vgg).exit_code, 0);
  Outcome from_profile = run("plan " + profile + " --batch 512 --json");
  Outcome from_native = run("plan " + vgg + " --cost-model dapple --batch 512 --json");
  ASSERT_EQ(from_native.exit_code, 0) << from_native.out;
  EXPECT_EQ(nlohmann::json::parse(from_profile.out)["speedup"],
            nlohmann::json::parse(from_native.out)["speedup"]);
  EXPECT_EQ(run("convert /nonexistent.txt").exit_code, 5);
  EXPECT_EQ(run("convert " + profile + " -o /nonexistent/dir/x.json").exit_code, 5);
}

// A profile records the matmul rate its device reached alone; on a cluster whose device runs
// slower (a probe measures it while every rank runs), the plan prices its compute scaled by the
// ratio and says so. Without the record, or at the same rate, nothing changes.
TEST(Cli, ProfiledComputeIsScaledByTheClustersRate) {
  const std::string model = testing::TempDir() + "scaled.model.json";
  const std::string cluster = testing::TempDir() + "scaled.cluster.json";
  ASSERT_EQ(
      run("convert " + kPiper + "bert32a100.json -o " + model + " --cluster-output " + cluster)
          .exit_code,
      0);
  auto c = read_json(cluster);
  c["device_types"][0]["name"] = "cpu (test)";
  c["device_types"][0]["peak_flops_per_s"] = 1e9;
  for (auto& m : c["machines"]) m["device_type"] = "cpu (test)";
  write_json(cluster, c);
  const auto objective = [&](double profiled_flops, nlohmann::json* doc = nullptr) {
    auto m = read_json(model);
    if (profiled_flops > 0)
      m["profiled_on"] = {{"device", "cpu (test)"},
                          {"flops_per_s", profiled_flops},
                          {"threads", 1},
                          {"input_shape", {8, 3, 64, 64}},
                          {"tokens", 0}};
    const std::string path = testing::TempDir() + "scaled.profiled.json";
    write_json(path, m);
    Outcome o = run("plan " + path + " --cluster " + cluster + " --devices 8 --json");
    EXPECT_EQ(o.exit_code, 0) << o.out;
    // The plan file (= --json) replays: the simulator prices the same scaled compute.
    const std::string file = testing::TempDir() + "scaled.plan.json";
    write_json(file, nlohmann::json::parse(o.out));
    Outcome s = run("simulate " + file + " --json");
    EXPECT_EQ(s.exit_code, 0) << s.out;
    const auto j = nlohmann::json::parse(o.out);
    if (doc) *doc = j;
    return j["objective"].get<double>();
  };
  nlohmann::json scaled;
  const double plain = objective(0), same = objective(1e9), slower = objective(3e9, &scaled);
  EXPECT_EQ(plain, same);
  EXPECT_GT(slower, 2 * plain);  // compute 3× slower (the transfers are not)
  EXPECT_EQ(scaled["compute_scaling"]["profiled_on"], "cpu (test)");
  EXPECT_EQ(scaled["compute_scaling"]["device_types"][0]["time_factor"], 3.0);
  Outcome words = run("plan " + testing::TempDir() + "scaled.profiled.json --cluster " + cluster +
                      " --devices 8");
  EXPECT_NE(words.out.find("compute scaled ×3.000 on cpu (test): profiled alone on cpu (test)"),
            std::string::npos)
      << words.out;
}

// --dp fixes every stage's data-parallel width: the same exact search over those shapes only; a
// width the devices or micro-batches cannot take is refused by the flag. --pp fixes the stages.
TEST(Cli, PipelinePlannerTakesTheUsersWidthsAndStageCount) {
  for (int dp : {1, 2, 4}) {
    Outcome o = run("plan " + kPiper + "bert32a100.json --devices 8 --dp " + std::to_string(dp) +
                    " --json");
    ASSERT_EQ(o.exit_code, 0) << o.out;
    const auto plan = nlohmann::json::parse(o.out);  // kept: the loop reads into it
    for (const auto& stage : plan["stages"]) EXPECT_EQ(stage["data_parallel"], dp);
  }
  Outcome wide = run("plan " + kPiper + "bert32a100.json --devices 8 --dp 16");
  EXPECT_EQ(wide.exit_code, 2);
  EXPECT_NE(wide.out.find("--dp 16: more than the 8 devices"), std::string::npos) << wide.out;
  // --pp: exactly that many stages (the iteration objective's search); refused under Piper's.
  for (int pp : {2, 3}) {
    Outcome o = run("plan " + kPiper + "bert32a100.json --devices 8 --pp " + std::to_string(pp) +
                    " --json");
    ASSERT_EQ(o.exit_code, 0) << o.out;
    EXPECT_EQ(nlohmann::json::parse(o.out)["stages"].size(), static_cast<std::size_t>(pp));
  }
  Outcome steady =
      run("plan " + kPiper + "bert32a100.json --devices 8 --pp 2 --objective steady-state");
  EXPECT_EQ(steady.exit_code, 2);
  EXPECT_NE(steady.out.find("--pp: a stage count is searched under the iteration objective"),
            std::string::npos)
      << steady.out;
  Outcome many = run("plan " + kPiper + "bert32a100.json --devices 4 --pp 5");
  EXPECT_EQ(many.exit_code, 4) << many.out;
  EXPECT_NE(many.out.find("no plan of 5 stages fits"), std::string::npos) << many.out;
  Outcome odd = run("plan " + kPiper + "bert32a100.json --devices 8 --dp 7");
  EXPECT_EQ(odd.exit_code, 2);
  EXPECT_NE(odd.out.find("--dp 7: a stage's replicas share the 1920 micro-batches"),
            std::string::npos)
      << odd.out;
}

// A Piper chain of n identical layers.
std::string chain_of(int n) {
  std::ostringstream text;
  text << R"({"maxMemoryPerDevice": 1e9, "maxDevices": 8, "bandwidth": 1e9, "mbsInBatch": 8, )"
       << R"("nodes": [)";
  for (int i = 0; i < n; ++i) {
    text << (i ? "," : "") << R"({"id": )" << i
         << R"(, "TMPCs": {"1": [{"id": "v", "timePerSample": 1, "parameterSize": 1, )"
         << R"("memoryUsageA": 1, "memoryUsageB": 1, "syncTimeFw": {)";
    if (i) text << '"' << i - 1 << R"(": 0)";
    text << R"(}, "syncTimeBw": {)";
    if (i + 1 < n) text << '"' << i + 1 << R"(": 0)";
    text << "}}]}}";
  }
  text << R"(], "edges": [)";
  for (int i = 1; i < n; ++i)
    text << (i > 1 ? "," : "") << R"({"sourceId": )" << i - 1 << R"(, "destId": )" << i
         << R"(, "communicationCost": 1})";
  text << "]}";
  return text.str();
}

TEST(Cli, InstancesBeyondTheExactSearchAreCoarsened) {
  // A chain of 15,000 layers has ~1.1e8 contiguous stages: too many for the exact search, so
  // coarsened (in about a second: its lattice is built once per ideal, not once per way in).
  const std::string chain = write_temp("chain.json", chain_of(15000));
  Outcome r = run("plan " + chain);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("coarsened to 64 super-nodes (too large for the exact search)"),
            std::string::npos)
      << r.out;
  // The steady-state optimum is 8 stages of 1875 layers; with 8 micro-batches its fill and
  // drain make its iteration 28125, and plain data parallelism's (15000) is the answer.
  EXPECT_NE(r.out.find("objective: the simulated iteration, 15000 (profile time units; the "
                       "steady-state optimum's: 28125"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("devices: stage 0 [0 1 2 3 4 5 6 7]\n"), std::string::npos) << r.out;
  Outcome steady = run("plan " + chain + " --objective steady-state");
  EXPECT_NE(steady.out.find("objective: 1875 "), std::string::npos) << steady.out;
}

// Every plan search has a time limit (60 s unless told; the issue's 4,096-layer graph ran
// 3 minutes in silence): past it the pipeline planner answers with the coarsened graph's plan
// and says so; --time-limit 0 waits for the exact one.
TEST(Cli, ThePipelineSearchPastItsTimeLimitPlansTheCoarsenedGraph) {
  const std::string chain = write_temp("chain800.json", chain_of(800));
  Outcome cut = run("plan " + chain + " --time-limit 0.001");
  EXPECT_EQ(cut.exit_code, 0) << cut.out;
  EXPECT_NE(cut.out.find("coarsened to 64 super-nodes (the exact search passed the 0.001 s time "
                         "limit; --time-limit 0 waits for it)"),
            std::string::npos)
      << cut.out;
  Outcome exact = run("plan " + chain + " --time-limit 0");
  EXPECT_EQ(exact.exit_code, 0) << exact.out;
  EXPECT_EQ(exact.out.find("coarsened"), std::string::npos) << exact.out;
  EXPECT_NE(run("plan --help").out.find("(default 60; 0: no limit)"), std::string::npos);
}

TEST(Cli, HelpOnEveryCommand) {
  EXPECT_EQ(run("--help").exit_code, 0);
  Outcome r = run("plan --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--microbatch-size"), std::string::npos);
  EXPECT_EQ(run("convert --help").exit_code, 0);
}

}  // namespace

namespace {

TEST(CliIntraOp, PrintsEveryLayerAndTheTotal) {
  Outcome r =
      run("plan --planner intra-op --model transformer --devices 32 --flops 10TFLOP/s --bw 16GB/s");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("total cost: 1042774374400.00"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("estimated step time: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("decoder5/ffn/norm"), std::string::npos) << r.out;
}

TEST(CliIntraOp, JsonHasObjectiveAndSplits) {
  Outcome r = run("plan --model alexnet --devices 32 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["objective"].get<double>(), 53136349552.0, 1e-3);
  EXPECT_EQ(j["cost_model"], "pase");
  EXPECT_EQ(j["planner"], "intra-op");
  ASSERT_EQ(j["layer_splits"].size(), 14u);
  EXPECT_EQ(j["layer_splits"][10]["split"], (std::vector<int>{1, 4, 8}));
  EXPECT_NEAR(j["step_time_s"].get<double>(), 0.0053136349552, 1e-12);
}

TEST(CliIntraOp, OptionsBeyondPase) {
  auto objective = [](const std::string& flags) {
    Outcome r = run("plan --model transformer --devices 8 --json " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(r.out)["objective"].get<double>();
  };
  double base = objective("");
  EXPECT_GE(objective("--keep-all-flows"), base);  // more flows priced, never cheaper
  EXPECT_GE(objective("--powers-of-two"), base);   // a subset of the strategies
  EXPECT_GE(objective("--all-devices"), base);
  Outcome r = run("plan --model transformer --devices 8 --all-devices --json");
  auto j = nlohmann::json::parse(r.out);
  for (const auto& l : j["layer_splits"]) EXPECT_EQ(l["devices"], 8);
}

TEST(CliIntraOp, WritesGraphvizDot) {
  std::string dot = testing::TempDir() + "alexnet.dot";
  Outcome r = run("plan --model alexnet --devices 8 --dot " + dot);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(dot);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().rfind("digraph \"alexnet\" {", 0), 0u);
  EXPECT_NE(text.str().find("n12 -> n13"), std::string::npos);
}

TEST(CliIntraOp, BadInputGetsOneMessageAndAnExitCode) {
  Outcome zero = run("plan --model transformer --devices 0");
  EXPECT_EQ(zero.exit_code, 2) << zero.out;
  Outcome unknown = run("plan --model vgg16");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("alexnet, resnet101"), std::string::npos) << unknown.out;
  Outcome nofit = run("plan --model alexnet --devices 7 --all-devices");
  EXPECT_EQ(nofit.exit_code, 4) << nofit.out;
  EXPECT_NE(nofit.out.find("conv1"), std::string::npos) << nofit.out;
  Outcome garbage = run("plan " + write_temp("garbage.onnx", "not a model"));
  EXPECT_EQ(garbage.exit_code, 3) << garbage.out;
  EXPECT_NE(garbage.out.find("garbage.onnx"), std::string::npos) << garbage.out;
  Outcome flops = run("plan --model alexnet --flops fast");
  EXPECT_EQ(flops.exit_code, 2) << flops.out;
  Outcome mixed = run("plan --model alexnet --memory 8GiB");
  EXPECT_EQ(mixed.exit_code, 2) << mixed.out;
  EXPECT_NE(mixed.out.find("--memory does not apply to the intra-op planner"), std::string::npos)
      << mixed.out;
  // Rates need their unit: a bare number meant GB/s here and bytes/s for the pipeline planner.
  for (const char* bare : {"--bw 16", "--bandwidth 16", "--flops 10"}) {
    Outcome r = run(std::string("plan --model alexnet ") + bare);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("give the unit"), std::string::npos) << r.out;
  }
}

// A flag the chosen planner does not take is refused, naming it, never ignored.
TEST(CliFlags, FlagsThatDoNotApplyAreRefused) {
  struct Case {
    const char* command;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"plan --model gpt3-175b --cost-model piper --format dapple",
            "--format and --cost-model do not apply to the transformer planner"},
           {"plan --planner pipeline --cp 2", "--cp does not apply to the pipeline planner"},
           {"plan --microbatches 4", "--microbatches does not apply to the transformer planner"},
           {"frontier --model llama3-8b --memory-step 0.1",
            "--memory-step does not apply to the transformer frontier"},
           {"frontier --tp 2", "--tp does not apply to the pipeline planner's frontier"}}) {
    Outcome r = run(c.command);
    EXPECT_EQ(r.exit_code, 2) << c.command << "\n" << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.command << "\n" << r.out;
  }
}

// Every command that takes a cluster takes a preset or a file.
TEST(CliFlags, PresetsWorkWhereverAClusterIs) {
  for (const char* command :
       {"plan " PARAPLAN_DATA "/piper/bert32a100.json --cluster dgx-h100 --json",
        "frontier " PARAPLAN_DATA
        "/piper/bert32a100.json --cluster dgx-h100 --memory-step 0.3 --json",
        "frontier --model llama3-8b --cluster dgx-h100 --devices 8 --json",
        "evaluate --model llama3-8b --cluster dgx-h100 --devices 8 --json"}) {
    Outcome r = run(command);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.out;
  }
  Outcome piper = run("plan " PARAPLAN_DATA "/piper/bert32a100.json --cluster dgx-h100 --json");
  // The H100's 81559 MiB, as nvidia-smi shows them (not the 80 of its name).
  EXPECT_EQ(nlohmann::json::parse(piper.out)["memory_per_device_bytes"], 81559.0 * (1ull << 20));
}

}  // namespace

namespace {

TEST(CliIntraOp, SameInputByteIdenticalOutput) {
  Outcome a = run("plan --model transformer --devices 16 --json");
  Outcome b = run("plan --model transformer --devices 16 --json");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  EXPECT_EQ(a.out, b.out);
  Outcome c = run("plan --model rnnlm --devices 32");
  Outcome d = run("plan --model rnnlm --devices 32");
  EXPECT_EQ(c.out, d.out);
}

}  // namespace

namespace {

TEST(CliInspect, TransformersAndOperatorGraphs) {
  Outcome llama = run("inspect --model llama3-405b --json");
  ASSERT_EQ(llama.exit_code, 0) << llama.out;
  auto j = nlohmann::json::parse(llama.out);
  EXPECT_EQ(j["parameters"].get<double>(), 405853388800.0);
  EXPECT_EQ(j["num_kv_heads"], 8);
  Outcome hf = run("inspect --model " + std::string(PARAPLAN_TEST_DATA) + "/hf/mixtral-8x7b.json");
  ASSERT_EQ(hf.exit_code, 0) << hf.out;
  EXPECT_NE(hf.out.find("mixtral-8x7b: decoder-only transformer"), std::string::npos) << hf.out;
  EXPECT_NE(hf.out.find("active per token 12879925248"), std::string::npos) << hf.out;
  Outcome graph = run("inspect --model resnet101 --json");
  ASSERT_EQ(graph.exit_code, 0) << graph.out;
  EXPECT_EQ(nlohmann::json::parse(graph.out)["layers"].size(), 245u);
  Outcome unknown = run("inspect --model gpt-5");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("llama3-405b"), std::string::npos) << unknown.out;
  Outcome bad = run("inspect --model " + write_temp("config.json", R"({"hidden_size": 64})"));
  EXPECT_EQ(bad.exit_code, 3) << bad.out;
  EXPECT_NE(bad.out.find("num_hidden_layers"), std::string::npos) << bad.out;
}

}  // namespace

namespace {

TEST(CliEvaluate, JsonHasTheDocumentedKeys) {
  Outcome r =
      run("evaluate --model gpt3-175b --cluster dgx-a100 --devices 1024 --tp 8 --pp 16 "
          "--batch 1536 --sequence-parallel --zero 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"iteration_time_s", "tflops_per_device", "mfu", "fits", "memory", "config"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key :
       {"peak_bytes", "weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes",
        "buffers_bytes", "fragmentation_bytes", "reserved_bytes"})
    EXPECT_TRUE(j["memory"].contains(key)) << key;
  EXPECT_EQ(j["config"]["dp"], 8);
  EXPECT_EQ(j["config"]["attention"], "flash");
  EXPECT_GT(j["iteration_time_s"].get<double>(), 0);
}

TEST(CliEvaluate, AttentionKernelIsAKnob) {
  const std::string base =
      "evaluate --model llama3-8b --devices 8 --tp 8 --batch 8 --seq-len 16384 "
      "--recompute none --json";
  Outcome flash = run(base);
  Outcome standard = run(base + " --attention standard");
  ASSERT_EQ(flash.exit_code, 0) << flash.out;
  ASSERT_EQ(standard.exit_code, 0) << standard.out;
  auto f = nlohmann::json::parse(flash.out), s = nlohmann::json::parse(standard.out);
  EXPECT_EQ(s["config"]["attention"], "standard");
  EXPECT_LT(f["iteration_time_s"].get<double>(), s["iteration_time_s"].get<double>());
  EXPECT_LT(f["memory"]["peak_bytes"].get<double>(), s["memory"]["peak_bytes"].get<double>());
  Outcome bad = run("evaluate --model llama3-8b --attention sdpa");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--attention"), std::string::npos) << bad.out;
  Outcome megatron =
      run("evaluate --model llama3-8b --devices 8 --tp 8 --batch 8 --export megatron");
  // The megatron stack's fused attention is Transformer Engine's (cuDNN); Megatron-DeepSpeed's
  // is FlashAttention-2.
  EXPECT_NE(megatron.out.find("--attention-backend fused"), std::string::npos) << megatron.out;
  Outcome deepspeed =
      run("evaluate --model llama3-8b --devices 8 --batch 8 --stack deepspeed --zero 1 --export "
          "deepspeed");
  EXPECT_NE(deepspeed.out.find("--use-flash-attn-v2"), std::string::npos) << deepspeed.out;
  // A plan priced on another stack is not exported for Megatron-LM: it would not run as priced.
  Outcome elsewhere =
      run("evaluate --model llama3-8b --devices 8 --batch 8 --stack deepspeed --zero 1 --export "
          "megatron");
  EXPECT_EQ(elsewhere.exit_code, 2) << elsewhere.out;
  EXPECT_NE(elsewhere.out.find("--stack deepspeed: Megatron-LM runs on the megatron stack"),
            std::string::npos)
      << elsewhere.out;
  Outcome overlapped = run(
      "evaluate --model llama3-8b --devices 64 --tp 4 --pp 4 --vpp 2 --sequence-parallel --zero 1 "
      "--batch 64 --export megatron");
  for (const char* flag : {"--tp-comm-overlap", "--overlap-param-gather", "--overlap-grad-reduce"})
    EXPECT_NE(overlapped.out.find(flag), std::string::npos) << flag << "\n" << overlapped.out;
  EXPECT_EQ(overlapped.out.find("--no-overlap-p2p-communication"), std::string::npos);
}

TEST(CliEvaluate, BadKnobsNameTheRule) {
  Outcome heads = run("evaluate --model llama3-8b --tp 3");
  EXPECT_EQ(heads.exit_code, 2);
  EXPECT_NE(heads.out.find("divisible by the tensor-parallel size"), std::string::npos)
      << heads.out;
  Outcome devices = run("evaluate --model llama3-8b --devices 16 --tp 2 --pp 2 --dp 2");
  EXPECT_EQ(devices.exit_code, 2);
  EXPECT_NE(devices.out.find("is not tp × cp × pp × dp"), std::string::npos) << devices.out;
  Outcome batch = run("evaluate --model llama3-8b --devices 8 --batch 100 --micro-batch 3");
  EXPECT_EQ(batch.exit_code, 2);
  EXPECT_NE(batch.out.find("divisible by micro-batch"), std::string::npos) << batch.out;
  Outcome preset = run("evaluate --model llama3-8b --cluster tpu-v5");
  EXPECT_EQ(preset.exit_code, 2);
  EXPECT_NE(preset.out.find("dgx-h100"), std::string::npos) << preset.out;
  Outcome model = run("evaluate --model gpt-9");
  EXPECT_EQ(model.exit_code, 2);
}

TEST(CliValidate, PrintsRowsAndSummary) {
  Outcome r = run("validate");
  ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 500);
  EXPECT_NE(r.out.find("multi-node:  109 runs"), std::string::npos);
  EXPECT_NE(r.out.find("single-node: 1440 runs"), std::string::npos);
  EXPECT_NE(r.out.find("ranking 175.0B on 512 GPUs"), std::string::npos);
}

// calibrate writes a calibration file that validate reads back with the figures it reported.
TEST(CliCalibrate, WritesAFileValidateReads) {
  const std::string out = testing::TempDir() + "fitted.json";
  Outcome r = run("calibrate --iterations 50 --seed 3 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string label = "after:  vTrain multi-node MAPE ";
  const auto after = r.out.find(label);
  ASSERT_NE(after, std::string::npos) << r.out;
  const std::string multi =
      r.out.substr(after + label.size(), r.out.find('%', after) - after - label.size());
  Outcome v = run("validate --summary --calibration " + out);
  ASSERT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("mean absolute percentage error " + multi + "%"), std::string::npos)
      << multi << "\n"
      << v.out;
  Outcome again = run("calibrate --iterations 50 --seed 3 -o " + out + ".2");
  EXPECT_EQ(read_text(out), read_text(out + ".2"));
  Outcome missing = run("calibrate --data /nonexistent -o " + out);
  EXPECT_EQ(missing.exit_code, 5) << missing.out;
  EXPECT_NE(missing.out.find("/nonexistent/ground_truth_multi.csv"), std::string::npos)
      << missing.out;
  Outcome no_output = run("calibrate");
  EXPECT_EQ(no_output.exit_code, 2) << no_output.out;
}

}  // namespace

namespace {

TEST(CliLlmPlan, SearchesTheKnobsAndPrintsTheTop) {
  Outcome r = run("plan --model gpt3-175b --devices 1024 --batch 1536 --top 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"iteration_time_s", "tflops_per_device", "mfu", "fits", "memory", "config", "top"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["top"].size(), 3u);
  EXPECT_EQ(j["config"]["devices"], 1024);
  EXPECT_EQ(j["search"], (nlohmann::json{{"timed_out", false}}));
  Outcome fixed = run("plan --model llama3-8b --devices 16 --batch 64 --tp 2 --json");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.out;
  EXPECT_EQ(nlohmann::json::parse(fixed.out)["config"]["tp"], 2);
  Outcome bad = run("plan --model llama3-8b --devices 16 --tp 3");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  Outcome mixed = run("plan --model llama3-8b --flops 10");
  EXPECT_EQ(mixed.exit_code, 2) << mixed.out;
  Outcome wrong = run("plan --model alexnet --tp 2");
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out;
}

}  // namespace

namespace {

TEST(CliExport, MegatronAndDeepSpeed) {
  Outcome m = run("plan --model gpt3-175b --devices 1024 --batch 1536 --export megatron");
  ASSERT_EQ(m.exit_code, 0) << m.out;
  EXPECT_NE(m.out.find("--tensor-model-parallel-size"), std::string::npos) << m.out;
  Outcome d =
      run("evaluate --model llama3-8b --devices 8 --dp 8 --batch 64 --micro-batch 2 --export "
          "deepspeed");
  ASSERT_EQ(d.exit_code, 0) << d.out;
  // The script's ds_config.json, between its here-document's markers.
  const std::size_t begin = d.out.find("<<'EOF'\n") + 8, end = d.out.find("\nEOF\n");
  ASSERT_LT(begin, end) << d.out;
  auto j = nlohmann::json::parse(d.out.substr(begin, end - begin));
  EXPECT_EQ(j["gradient_accumulation_steps"], 4);
  Outcome bad = run("evaluate --model llama3-8b --export colossalai");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

}  // namespace

namespace {

TEST(CliOutputFiles, UnwritablePathsExitWithTheIoCode) {
  const std::string nowhere = "/nonexistent-dir/plan.json";
  for (const std::string& cmd :
       {"plan --model alexnet -o " + nowhere, "plan --model alexnet --dot " + nowhere,
        "plan --model llama3-8b -o " + nowhere, "plan -o " + nowhere, "convert -o " + nowhere}) {
    Outcome r = run(cmd);
    EXPECT_EQ(r.exit_code, 5) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("cannot open file for writing"), std::string::npos)
        << cmd << ": " << r.out;
  }
}

}  // namespace
