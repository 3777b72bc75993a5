// `plan --export ENGINE` writes what the engine runs, and reading it back with `--from ENGINE`
// gives the plan that was exported: every knob, and the same predicted time.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"

namespace {

using paraplan::testing_support::Outcome;
using paraplan::testing_support::run;
using paraplan::testing_support::write_temp;
using Json = nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Exported {
  Json plan;  ///< `plan --json`: the best plan and its config
  Json back;  ///< `evaluate --from ENGINE` of the export: as_is is the export read back
  std::string text;
};

// Plans, exports, reads the export back and prices it as it is.
Exported round_trip(const std::string& request, const std::string& engine,
                    const std::string& read_flags = "") {
  Exported e;
  // Named after the test: ctest runs the tests of this file side by side, in one temp folder.
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string plan_file = write_temp("exported_plan_" + test + ".json", "");
  const Outcome exported = run("plan " + request + " --export " + engine + " -o " + plan_file);
  EXPECT_EQ(exported.exit_code, 0) << request << "\n" << exported.out;
  e.plan = Json::parse(read_file(plan_file));
  e.text = exported.out;
  const std::string file = write_temp("exported_" + test + "_" + engine, exported.out);
  const Outcome back = run("evaluate --from " + engine + " " + file + " " + read_flags + " --json");
  EXPECT_EQ(back.exit_code, 0) << request << "\n" << exported.out << "\n" << back.out;
  e.back = Json::parse(back.out);
  return e;
}

// The knobs of the plan and of the export read back agree, and so do their prices.
void expect_same_plan(const Exported& e, const std::vector<std::string>& knobs,
                      double time_tolerance = 1e-9) {
  const Json& planned = e.plan["config"];
  const Json& read = e.back["as_is"]["config"];
  for (const std::string& knob : knobs) {
    ASSERT_EQ(read.contains(knob), planned.contains(knob)) << knob << "\n" << e.text;
    if (planned.contains(knob)) {
      EXPECT_EQ(read[knob], planned[knob]) << knob << "\n" << e.text;
    }
  }
  const double t0 = e.plan["iteration_time_s"].get<double>();
  const double t1 = e.back["as_is"]["iteration_time_s"].get<double>();
  EXPECT_NEAR(t1 / t0, 1.0, time_tolerance) << e.text;
}

const std::vector<std::string> kMegatronKnobs = {"moe_shared_expert_overlap",
                                                 "use_precision_aware_optimizer",
                                                 "tp",
                                                 "pp",
                                                 "cp",
                                                 "dp",
                                                 "ep",
                                                 "vpp",
                                                 "micro_batch",
                                                 "global_batch",
                                                 "seq_len",
                                                 "recompute",
                                                 "recompute_layers",
                                                 "sequence_parallel",
                                                 "zero",
                                                 "stage_layers",
                                                 "tp_comm_overlap",
                                                 "overlap_param_gather",
                                                 "overlap_grad_reduce",
                                                 "overlap_p2p_comm",
                                                 "precision",
                                                 "fp8_param_gather",
                                                 "etp",
                                                 "shard_group",
                                                 "attention",
                                                 "stack"};

// Uneven stages (80 layers on 6 stages; DeepSeek's 61 on 32, with its dense layers, shared
// expert and MoE frequency) go out as Megatron-Core's layout and come back as the same split.
// Megatron pads the vocabulary to 128 × tp, which the plan priced unpadded: within 1 %.
TEST(CliExport, MegatronUnevenStagesRoundTrip) {
  const Exported llama = round_trip(
      "--model llama3-70b --cluster dgx-h100 --devices 48 --batch 96 --pp 6 --seq-len 8192 "
      "--memory-headroom 0%",
      "megatron", "--cluster dgx-h100");
  EXPECT_NE(llama.text.find("--pipeline-model-parallel-layout \"Et*13|t*14|"), std::string::npos)
      << llama.text;
  EXPECT_NE(llama.text.find("--normalization RMSNorm"), std::string::npos);
  EXPECT_NE(llama.text.find("--rotary-base 500000"), std::string::npos);
  EXPECT_NE(llama.text.find("\nCUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node=8 "
                            "--nnodes=6 pretrain_gpt.py"),
            std::string::npos)
      << llama.text;
  expect_same_plan(llama, kMegatronKnobs, 0.01);
  // The vocabulary priced, not GPT-2's (pretrain_gpt.py's default tokenizer ignores
  // --vocab-size), and data and a length so the launch runs as written.
  for (const char* want : {"--tokenizer-type NullTokenizer \\\n--vocab-size 128256 \\\n",
                           "--mock-data \\\n", "--train-iters 100 \\\n"})
    EXPECT_NE(llama.text.find(want), std::string::npos) << want << "\n" << llama.text;
  const Exported deepseek = round_trip(
      "--model deepseek-v3-like --cluster dgx-h100 --devices 1024 --batch 1024 --pp 32 "
      "--seq-len 4096",
      "megatron", "--cluster dgx-h100");
  for (const char* want :
       {"--moe-layer-freq \"([0]*3+[1]*58)\"", "--ffn-hidden-size 18432",
        "--moe-ffn-hidden-size 2048", "--moe-shared-expert-intermediate-size 2048"})
    EXPECT_NE(deepseek.text.find(want), std::string::npos) << want << "\n" << deepseek.text;
  expect_same_plan(deepseek, kMegatronKnobs, 0.01);
}

// NeMo's recipe: the same plans as YAML, read back by `--from nemo` into the same knobs and time
// (DeepSeek-like models have no NeMo recipe keys for their dense width pattern beyond
// moe_layer_freq, which is written; Mixtral's experts go out with their parallelism).
TEST(CliExport, NemoRoundTrip) {
  const Exported llama = round_trip(
      "--model llama3-70b --cluster dgx-h100 --devices 48 --batch 96 --pp 6 --seq-len 8192 "
      "--memory-headroom 0%",
      "nemo", "--cluster dgx-h100");
  // NeMo 1.x sets the first and last stages' layers and splits the rest evenly (it never reads
  // Megatron-Core's layout): 80 layers on 6 stages go as 14 | 13 × 4 | 14, priced so.
  for (const char* want :
       {"num_layers_in_first_pipeline_stage: 14\n", "num_layers_in_last_pipeline_stage: 14\n",
        // What NeMo needs to build and run it as priced (engine-check's refusals before):
        // O2 for bf16 weights with fp32 main parameters, Megatron-Core's distributed optimizer
        // for ZeRO 1, a tokenizer it can build, the vocabulary by the key NeMo reads.
        "megatron_amp_O2: true\n", "name: mcore_distributed_optim\n", "library: huggingface\n",
        "type: meta-llama/Meta-Llama-3-70B\n", "override_vocab_size: 128256\n"})
    EXPECT_NE(llama.text.find(want), std::string::npos) << want << "\n" << llama.text;
  EXPECT_EQ(llama.text.find("pipeline_model_parallel_layout"), std::string::npos) << llama.text;
  expect_same_plan(llama, kMegatronKnobs, 0.01);
  // Overlapped point-to-point needs batched p2p off (Megatron-Core refuses both).
  if (llama.text.find("overlap_p2p_comm: true") != std::string::npos) {
    EXPECT_NE(llama.text.find("batch_p2p_comm: false"), std::string::npos) << llama.text;
  }
  const Exported mixtral =
      round_trip("--model mixtral-8x7b --cluster dgx-h100 --devices 64 --batch 256 --seq-len 4096",
                 "nemo", "--cluster dgx-h100");
  EXPECT_NE(mixtral.text.find("num_moe_experts: 8"), std::string::npos) << mixtral.text;
  expect_same_plan(mixtral, kMegatronKnobs, 0.01);
  // 61 layers on 32 stages cannot be a first | even middle | last split; on 4 they can.
  const Outcome refused =
      run("plan --model deepseek-v3-like --cluster dgx-h100 --devices 1024 --batch 1024 --pp 32 "
          "--seq-len 4096 --export nemo");
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("NeMo sets only the first and the last stage's layers"),
            std::string::npos)
      << refused.out;
  const Exported deepseek = round_trip(
      "--model deepseek-v3-like --cluster dgx-h100 --devices 1024 --batch 1024 --pp 4 "
      "--seq-len 4096",
      "nemo", "--cluster dgx-h100");
  EXPECT_NE(deepseek.text.find("moe_layer_freq: [0, 0, 0, 1, 1,"), std::string::npos)
      << deepseek.text;
  expect_same_plan(deepseek, kMegatronKnobs, 0.01);
}

// FP8 with FP8 parameters and bf16 gradient reduction goes out in each engine's spelling and
// comes back as the same plan, priced the same.
TEST(CliExport, Fp8ParametersRoundTrip) {
  for (const char* engine : {"megatron", "nemo"}) {
    const Exported e = round_trip(
        "--model llama3-8b --cluster dgx-h100 --devices 8 --batch 128 --seq-len 8192 "
        "--precision fp8 --fp8-param-gather --grad-reduce-dtype bf16",
        engine, "--cluster dgx-h100");
    EXPECT_EQ(e.plan["config"]["fp8_param_gather"], true) << e.text;
    EXPECT_NE(
        e.text.find(std::string(engine) == "megatron" ? "--fp8-param-gather" : "fp8_params: true"),
        std::string::npos)
        << e.text;
    expect_same_plan(e, kMegatronKnobs, 0.01);
  }
}

// Megatron-Core's precision-aware optimizer (bf16 moments, as DeepSeek-V3's recipe) goes out in
// Megatron-LM's options and Megatron-Bridge's overrides and comes back as the same plan, priced
// the same, its optimizer state half fp32 Adam's.
TEST(CliExport, PrecisionAwareOptimizerRoundTrip) {
  for (const char* engine : {"megatron", "bridge"}) {
    const Exported e = round_trip(
        "--model llama3-8b --cluster dgx-h100 --devices 8 --batch 64 --optimizer-moments bf16",
        engine, "--cluster dgx-h100");
    EXPECT_EQ(e.plan["config"]["optimizer_moments"], "bf16") << e.text;
    EXPECT_EQ(e.back["as_is"]["config"]["optimizer_moments"], "bf16") << e.text;
    EXPECT_NE(e.text.find(std::string(engine) == "megatron"
                              ? "--use-precision-aware-optimizer \\\n--exp-avg-dtype bf16"
                              : "optimizer.exp_avg_dtype=bf16"),
              std::string::npos)
        << e.text;
    expect_same_plan(e, kMegatronKnobs, 0.01);
  }
  // Adam's fp32 moments take twice the bytes.
  const Outcome fp32 =
      run("evaluate --model llama3-8b --cluster dgx-h100 --devices 8 --batch 64 --tp 1 --zero 1 "
          "--json");
  const Outcome bf16 =
      run("evaluate --model llama3-8b --cluster dgx-h100 --devices 8 --batch 64 --tp 1 --zero 1 "
          "--optimizer-moments bf16 --json");
  ASSERT_EQ(fp32.exit_code, 0) << fp32.out;
  ASSERT_EQ(bf16.exit_code, 0) << bf16.out;
  const double a = Json::parse(fp32.out)["memory"]["optimizer_bytes"].get<double>(),
               b = Json::parse(bf16.out)["memory"]["optimizer_bytes"].get<double>();
  EXPECT_NEAR(a / b, 2.0, 1e-9);
  // With fp32 moments (--precision-aware-optimizer): the main parameters' remainders only,
  // 10 bytes of 12, written and read back as such.
  for (const char* engine : {"megatron", "bridge"}) {
    const Exported e = round_trip(
        "--model llama3-8b --cluster dgx-h100 --devices 8 --batch 64 --precision-aware-optimizer",
        engine, "--cluster dgx-h100");
    EXPECT_EQ(e.plan["config"]["use_precision_aware_optimizer"], true) << e.text;
    EXPECT_EQ(e.back["as_is"]["config"]["use_precision_aware_optimizer"], true) << e.text;
    EXPECT_FALSE(e.back["as_is"]["config"].contains("optimizer_moments")) << e.text;
    EXPECT_NE(e.text.find(std::string(engine) == "megatron"
                              ? "--use-precision-aware-optimizer"
                              : "optimizer.use_precision_aware_optimizer=true"),
              std::string::npos)
        << e.text;
    EXPECT_EQ(e.text.find(std::string(engine) == "megatron" ? "exp-avg" : "exp_avg"),
              std::string::npos);
    expect_same_plan(e, kMegatronKnobs, 0.01);
  }
  const Outcome aware =
      run("evaluate --model llama3-8b --cluster dgx-h100 --devices 8 --batch 64 --tp 1 --zero 1 "
          "--precision-aware-optimizer --json");
  ASSERT_EQ(aware.exit_code, 0) << aware.out;
  EXPECT_NEAR(Json::parse(aware.out)["memory"]["optimizer_bytes"].get<double>() / a, 10.0 / 12,
              1e-9);
  // Not on an engine without it, and not without the distributed optimizer.
  for (const std::string knob : {"--optimizer-moments bf16", "--precision-aware-optimizer"})
    EXPECT_EQ(run("plan --model llama3-8b --cluster dgx-h100 --devices 8 --batch 64 " + knob +
                  " --export nemo")
                  .exit_code,
              2)
        << knob;
  EXPECT_EQ(run("evaluate --model llama3-8b --cluster dgx-h100 --devices 8 --batch 64 --tp 1 "
                "--zero 0 --optimizer-moments bf16")
                .exit_code,
            2);
}

// Megatron-Core's shared-expert overlap: on where it applies (shared experts, ep > 1), written
// to Megatron-LM and Bridge and read back at the same price; never offered for NeMo's YAML.
TEST(CliExport, SharedExpertOverlapRoundTrip) {
  const std::string request =
      "--model deepseek-v3-like --cluster dgx-h100 --devices 256 --batch 512 --pp 8 --ep 8 "
      "--seq-len 4096";
  for (const char* engine : {"megatron", "bridge"}) {
    const Exported e = round_trip(request, engine, "--cluster dgx-h100");
    EXPECT_EQ(e.plan["config"]["moe_shared_expert_overlap"], true) << e.text;
    EXPECT_EQ(e.back["as_is"]["config"]["moe_shared_expert_overlap"], true) << e.text;
    EXPECT_NE(
        e.text.find(std::string(engine) == "megatron" ? "--moe-shared-expert-overlap"
                                                      : "model.moe_shared_expert_overlap=true"),
        std::string::npos)
        << e.text;
    expect_same_plan(e, kMegatronKnobs, 0.01);
  }
  const Outcome nemo = run("plan " + request + " --export nemo --json");
  ASSERT_EQ(nemo.exit_code, 0) << nemo.out;
  EXPECT_EQ(nemo.out.find("moe_shared_expert_overlap"), std::string::npos) << nemo.out;
  EXPECT_EQ(run("plan " + request + " --shared-expert-overlap --export nemo").exit_code, 2);
  // Off, the all-to-all is exposed in full: slower.
  const auto time_of = [](const Outcome& o) {
    return Json::parse(o.out)["iteration_time_s"].get<double>();
  };
  const std::string config =
      "evaluate --model deepseek-v3-like --cluster dgx-h100 --devices 256 --batch 512 --pp 8 "
      "--ep 8 --tp 2 --seq-len 4096 --json";
  const Outcome on = run(config), off = run(config + " --no-shared-expert-overlap");
  ASSERT_EQ(on.exit_code, 0) << on.out;
  ASSERT_EQ(off.exit_code, 0) << off.out;
  EXPECT_LT(time_of(on), time_of(off));
}

// A plan whose engine cannot express its model still prints, with the reason its launch is
// not written (plan used to fail outright for Gemma 2 and GPT-OSS with no export asked for);
// asked for that export, it is refused for that engine alone.
TEST(CliExport, APlanItsEngineCannotExpressStillPrints) {
  const std::string gemma =
      std::string(PARAPLAN_SOURCE_DIR) + "/tests/data/hf-configs/gemma-2-9b/config.json";
  const Outcome plan = run("plan --model " + gemma + " --cluster dgx-h100 --devices 64");
  EXPECT_EQ(plan.exit_code, 0) << plan.out;
  EXPECT_NE(plan.out.find("best plan:"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("no Megatron-LM launch for this plan: gemma-2-9b has soft-capped "
                          "logits"),
            std::string::npos)
      << plan.out;
  const Outcome exported =
      run("plan --model " + gemma + " --cluster dgx-h100 --devices 64 --export megatron");
  EXPECT_EQ(exported.exit_code, 2) << exported.out;
  EXPECT_NE(exported.out.find("soft-capped logits"), std::string::npos) << exported.out;
}

const std::vector<std::string> kTorchtitanKnobs = {"tp",
                                                   "pp",
                                                   "cp",
                                                   "dp",
                                                   "ep",
                                                   "vpp",
                                                   "micro_batch",
                                                   "global_batch",
                                                   "seq_len",
                                                   "recompute",
                                                   "recompute_layers",
                                                   "sequence_parallel",
                                                   "zero",
                                                   "stage_layers",
                                                   "fused_elementwise",
                                                   "grad_reduce_dtype",
                                                   "precision",
                                                   "stack"};

// torchtitan's TOML: FSDP, a pipeline with the planned split as model parts, interleaving,
// checkpointing of every N-th layer, pure bf16 and torch.compile, read back exactly.
TEST(CliExport, TorchtitanRoundTrip) {
  const Exported fsdp =
      round_trip("--model llama3-8b --cluster dgx-h100 --devices 64 --batch 512 --seq-len 8192",
                 "torchtitan", "--cluster dgx-h100");
  EXPECT_NE(fsdp.text.find("flavor = \"8B\""), std::string::npos) << fsdp.text;
  expect_same_plan(fsdp, kTorchtitanKnobs);
  const Exported pipeline = round_trip(
      "--model llama3-70b --cluster dgx-h100 --seq-len 8192 --pp 6 --tp 4 --devices 48 --batch 96",
      "torchtitan", "--cluster dgx-h100");
  EXPECT_NE(pipeline.text.find("module_fqns_per_model_part"), std::string::npos);
  expect_same_plan(pipeline, kTorchtitanKnobs);
  const Exported interleaved = round_trip(
      "--model llama3-8b --cluster dgx-h100 --seq-len 4096 --pp 4 --vpp 2 --tp 2 "
      "--devices 16 --batch 64 --recompute 2 --grad-reduce-dtype bf16 --loss-dtype bf16",
      "torchtitan", "--cluster dgx-h100");
  EXPECT_NE(interleaved.text.find("Interleaved1F1B"), std::string::npos) << interleaved.text;
  EXPECT_NE(interleaved.text.find("selective_ac_option = \"4\""), std::string::npos)
      << interleaved.text;
  expect_same_plan(interleaved, kTorchtitanKnobs);
  // A model torchtitan has no flavor for is refused for torchtitan (its [model] table would be
  // empty and torchtitan would train its debug model); a config.json of a flavor's shape is it.
  const Outcome mixtral =
      run("plan --model mixtral-8x7b --cluster dgx-h100 --devices 32 --batch 128 --seq-len 4096 "
          "--stack fsdp --export torchtitan");
  EXPECT_EQ(mixtral.exit_code, 2) << mixtral.out;
  EXPECT_NE(mixtral.out.find("mixtral-8x7b is none of the torchtitan models paraplan writes"),
            std::string::npos)
      << mixtral.out;
  const Exported hf = round_trip(
      "--model " + std::string(PARAPLAN_SOURCE_DIR) +
          "/tests/data/hf-configs/llama-3.1-8b/config.json --cluster dgx-h100 --devices 8 "
          "--batch 64 --seq-len 8192",
      "torchtitan", "--cluster dgx-h100");
  EXPECT_NE(hf.text.find("flavor = \"8B\""), std::string::npos) << hf.text;
}

// DeepSeek-V3 as Megatron-Bridge lays it out (pp 8 × vpp 4: 61 layers and the MTP module over
// 32 uneven virtual stages): given to --stage-layers in Megatron-Core's notation, priced, exported
// as that layout (no other virtual-stage option beside it: validate_args takes one) and read back
// as the same plan at the same price.
TEST(CliExport, UnevenVirtualStagesRoundTrip) {
  const std::string request =
      "--model " + std::string(PARAPLAN_SOURCE_DIR) +
      "/tests/data/hf-configs/deepseek-v3/config.json --cluster dgx-h100 --devices 1024 --tp 2 "
      "--pp 8 --ep 64 --batch 8192 --seq-len 4096 --micro-batch 1 --recompute full --zero 1 "
      "--stage-layers \"Et*3|(tt|)*29,m|L\"";
  const Outcome priced = run("evaluate " + request + " --json");
  ASSERT_EQ(priced.exit_code, 0) << priced.out;
  const Json plan = Json::parse(priced.out);
  EXPECT_EQ(plan["config"]["vpp"], 4);
  EXPECT_EQ(plan["config"]["stage_layers"], Json::parse("[9, 8, 8, 8, 8, 8, 6, 6]"));
  const Outcome exported = run("evaluate " + request + " --export megatron");
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  EXPECT_NE(exported.out.find("--pipeline-model-parallel-layout \"Et*3|t*2|"), std::string::npos)
      << exported.out;
  EXPECT_NE(exported.out.find("t*2||,m,L\""), std::string::npos) << exported.out;
  EXPECT_EQ(exported.out.find("virtual-pipeline-stage"), std::string::npos) << exported.out;
  const std::string file = write_temp("exported_deepseek_v3_layout.sh", exported.out);
  const Outcome back = run("evaluate --from megatron " + file + " --cluster dgx-h100 --json");
  ASSERT_EQ(back.exit_code, 0) << back.out;
  const Json as_is = Json::parse(back.out)["as_is"];
  EXPECT_EQ(as_is["config"]["stage_layers"], plan["config"]["stage_layers"]);
  EXPECT_EQ(as_is["config"]["virtual_stage_layers"], plan["config"]["virtual_stage_layers"]);
  EXPECT_NEAR(as_is["iteration_time_s"].get<double>() / plan["iteration_time_s"].get<double>(), 1.0,
              1e-9);
  // A layout whose virtual stages do not match --vpp is refused, naming both.
  const Outcome vpp = run("evaluate " + request + " --vpp 2");
  EXPECT_EQ(vpp.exit_code, 2) << vpp.out;
  EXPECT_NE(vpp.out.find("4 virtual stages per rank, but --vpp is 2"), std::string::npos)
      << vpp.out;
}

// torchtitan's current configuration system (b5bcd76): a Python recipe written by the launch
// script, with the plan's degrees and batch in tokens, read back as the same plan at the same
// price (FSDP; a pipeline with its split; interleaving with pure bf16, async TP and float8; HSDP;
// a MoE flavor with experts); what it cannot express is refused for it alone, naming why (exit
// 2, as for every engine's export).
TEST(CliExport, TorchtitanRecipeRoundTrip) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--model llama3-8b --cluster dgx-h100 --devices 64 --batch 512 --seq-len 8192",
       "config = llama3_8b()"},
      // The search keeps to what the recipe expresses: on 8 GPUs the torchtitan engine's best
      // recomputes one layer in N, which b5bcd76 cannot write (the export was refused).
      {"--model llama3-8b --cluster dgx-h100 --devices 8 --batch 64", "config = llama3_8b()"},
      {"--model llama3-70b --cluster dgx-h100 --seq-len 8192 --pp 6 --tp 4 --devices 48 "
       "--batch 96 --recompute full",
       "pipeline_parallel_degree=6,"},
      {"--model llama3-8b --cluster dgx-h100 --seq-len 4096 --pp 4 --vpp 2 --tp 2 --devices 16 "
       "--batch 64 --grad-reduce-dtype bf16 --loss-dtype bf16 --compile --tp-comm-overlap "
       "--precision fp8",
       "Interleaved1F1B"},
      {"--model llama3-8b --stack fsdp --cluster dgx-h100 --devices 32 --tp 1 --batch 128 "
       "--seq-len 8192 --shard-group 8",
       "data_parallel_replicate_degree=4,"},
      {"--model " + std::string(PARAPLAN_SOURCE_DIR) +
           "/tests/data/hf-configs/deepseek-v2-lite/config.json --stack fsdp --cluster dgx-h100 "
           "--devices 16 --ep 8 --batch 128 --seq-len 4096",
       "config = deepseek_v3_16b()"}};
  for (const auto& [request, written] : cases) {
    SCOPED_TRACE(request);
    const Exported e = round_trip(request, "torchtitan-recipe", "--cluster dgx-h100");
    EXPECT_NE(e.text.find(written), std::string::npos) << e.text;
    EXPECT_NE(e.text.find("-m torchtitan.train --module paraplan_recipe --config paraplan_plan"),
              std::string::npos);
    expect_same_plan(e, kTorchtitanKnobs);
  }
  const Outcome partial =
      run("plan --model llama3-8b --cluster dgx-h100 --devices 8 --batch 64 --recompute 2 "
          "--export torchtitan-recipe");
  EXPECT_EQ(partial.exit_code, 2) << partial.out;
  EXPECT_NE(partial.out.find("checkpoints every block (FullAC) or none"), std::string::npos)
      << partial.out;
}

// torchtitan's own configuration functions are read by name (MODULE:FUNCTION), from the values
// tools/torchtitan/registry.py took from their source: Llama 3 70B's tp 8 with full
// checkpointing, 405B's float8 and async TP; a function of the user's that starts from one keeps
// what it does not change.
TEST(CliExport, TorchtitanConfigurationFunctionsAreRead) {
  const Outcome l70 =
      run("evaluate --from torchtitan-recipe llama3:llama3_70b --cluster dgx-h100 --devices 64 "
          "--json");
  ASSERT_EQ(l70.exit_code, 0) << l70.out;
  const Json as_is = Json::parse(l70.out)["as_is"]["config"];
  EXPECT_EQ(as_is["tp"], 8);
  EXPECT_EQ(as_is["dp"], 8);
  EXPECT_EQ(as_is["recompute"], "full");
  EXPECT_EQ(as_is["seq_len"], 8192);
  EXPECT_EQ(as_is["micro_batch"], 8);  // 8 × 8192 tokens per forward
  const Outcome l405 =
      run("evaluate --from torchtitan-recipe llama3:llama3_405b --cluster dgx-h100 --devices 512 "
          "--json");
  ASSERT_EQ(l405.exit_code, 0) << l405.out;
  const Json big = Json::parse(l405.out)["as_is"]["config"];
  EXPECT_EQ(big["precision"], "fp8");
  EXPECT_EQ(big["tp_comm_overlap"], true);
  const std::string mine = write_temp("my_titan_recipe.py",
                                      "from torchtitan.models.llama3.config_registry import "
                                      "llama3_70b\n\n\ndef mine():\n"
                                      "    config = llama3_70b()\n"
                                      "    config.parallelism.pipeline_parallel_degree = 2\n"
                                      "    config.parallelism.num_pp_microbatches = 2 * 4\n"
                                      "    return config\n");
  const Outcome derived =
      run("evaluate --from torchtitan-recipe " + mine + " --cluster dgx-h100 --devices 64 --json");
  ASSERT_EQ(derived.exit_code, 0) << derived.out;
  const Json d = Json::parse(derived.out)["as_is"]["config"];
  EXPECT_EQ(d["tp"], 8);
  EXPECT_EQ(d["pp"], 2);
  EXPECT_EQ(d["dp"], 4);
  EXPECT_EQ(d["global_batch"], 8 * 8 * 4);  // 8 sequences × 8 pipeline micro-batches × 4 ranks
  const Outcome unknown = run("evaluate --from torchtitan-recipe llama3:llama3_9b --devices 8");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("MODULE:FUNCTION"), std::string::npos) << unknown.out;
  const std::string branchy =
      write_temp("branchy_titan_recipe.py", "def f():\n    if True:\n        config = None\n");
  const Outcome refused = run("evaluate --from torchtitan-recipe " + branchy + " --devices 8");
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(
      refused.out.find("branchy_titan_recipe.py:2: a statement paraplan does not follow ('if')"),
      std::string::npos)
      << refused.out;
}

// torchtitan's async tensor parallelism is the fsdp stack's tensor-parallel overlap: exported as
// enable_async_tensor_parallel, read back as the same plan at the same price (its 405B job was
// refused for it).
TEST(CliExport, TorchtitanAsyncTensorParallelRoundTrip) {
  const Exported e = round_trip(
      "--model llama3-8b --stack fsdp --cluster dgx-h100 --devices 16 --tp 2 --batch 64 "
      "--seq-len 8192 --tp-comm-overlap",
      "torchtitan", "--cluster dgx-h100");
  EXPECT_NE(e.text.find("enable_async_tensor_parallel = true"), std::string::npos) << e.text;
  EXPECT_EQ(e.back["as_is"]["config"]["tp_comm_overlap"], true) << e.text;
  expect_same_plan(e, kTorchtitanKnobs);
}

// Expert tensor parallelism goes out as Megatron-LM's --expert-tensor-parallel-size and reads
// back as the same plan; NeMo's recipe has no key for it and is refused naming the knob.
TEST(CliExport, ExpertTensorParallelRoundTrip) {
  const std::string request =
      "--model mixtral-8x7b --cluster dgx-h100 --devices 64 --tp 4 --pp 2 --ep 8 "
      "--sequence-parallel --etp 1 --batch 256 --seq-len 4096";
  const Exported e = round_trip(request, "megatron", "--cluster dgx-h100");
  EXPECT_NE(e.text.find("--expert-tensor-parallel-size 1"), std::string::npos) << e.text;
  EXPECT_EQ(e.back["as_is"]["config"]["etp"], 1) << e.text;
  expect_same_plan(e, kMegatronKnobs);
  const Outcome nemo = run("plan " + request + " --export nemo");
  EXPECT_NE(nemo.exit_code, 0) << nemo.out;
  EXPECT_NE(nemo.out.find("--etp"), std::string::npos) << nemo.out;
}

// DeepSpeed's MiCS is HSDP on the deepspeed stack: mics_shard_size in the JSON, read back as the
// same plan.
TEST(CliExport, DeepSpeedMicsRoundTrip) {
  const Exported e = round_trip(
      "--model llama3-8b --cluster dgx-a100 --devices 32 --stack deepspeed --zero 3 "
      "--shard-group 8 --batch 256 --seq-len 4096",
      "deepspeed", "--cluster dgx-a100");
  EXPECT_NE(e.text.find("\"mics_shard_size\": 8"), std::string::npos) << e.text;
  EXPECT_EQ(e.back["as_is"]["config"]["shard_group"], 8) << e.text;
  expect_same_plan(e, kMegatronKnobs);
}

// HSDP: sharded within one node's 8 ranks, replicated across the 4 nodes; torchtitan's two
// degrees carry it and read back as the same plan.
TEST(CliExport, TorchtitanHybridShardingRoundTrip) {
  const Exported e = round_trip(
      "--model llama3-8b --stack fsdp --cluster dgx-h100 --devices 32 --tp 1 --batch 128 "
      "--seq-len 8192 --shard-group 8",
      "torchtitan", "--cluster dgx-h100");
  EXPECT_NE(e.text.find("data_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 8"),
            std::string::npos)
      << e.text;
  EXPECT_EQ(e.back["as_is"]["config"]["shard_group"], 8) << e.text;
  expect_same_plan(e, kTorchtitanKnobs);
}

// FSDP's float8 all-gather: torchtitan's enable_fsdp_float8_all_gather, the gathers in float8,
// read back as the same plan.
TEST(CliExport, TorchtitanFloat8AllGatherRoundTrip) {
  const Exported e = round_trip(
      "--model llama3-8b --stack fsdp --cluster dgx-h100 --devices 16 --tp 1 --zero 3 --batch 64 "
      "--seq-len 8192 --precision fp8 --fp8-param-gather",
      "torchtitan", "--cluster dgx-h100");
  EXPECT_NE(e.text.find("enable_fsdp_float8_all_gather = true"), std::string::npos) << e.text;
  EXPECT_EQ(e.back["as_is"]["config"]["fp8_param_gather"], true) << e.text;
  expect_same_plan(e, kTorchtitanKnobs);
}

// A config.json of a torchtitan flavor's shape goes out as that flavor (DeepSeek-V2-Lite is
// deepseek_v3's 16B) and reads back as the same plan.
TEST(CliExport, TorchtitanDeepSeekFlavorRoundTrip) {
  const Exported e = round_trip("--model " + std::string(PARAPLAN_SOURCE_DIR) +
                                    "/tests/data/hf-configs/deepseek-v2-lite/config.json "
                                    "--stack fsdp --cluster dgx-h100 --devices 16 --ep 8 "
                                    "--batch 128 --seq-len 4096",
                                "torchtitan", "--cluster dgx-h100");
  EXPECT_NE(e.text.find("name = \"deepseek_v3\"\nflavor = \"16B\""), std::string::npos) << e.text;
  expect_same_plan(e, kTorchtitanKnobs);
}

// Megatron-DeepSpeed: the script writes ds_config.json and launches pretrain_gpt.py with the
// plan's parallel sizes (DeepSpeed's batch assertion then holds: train_batch_size = micro ×
// accumulation × data-parallel ranks of that grid); `--from deepspeed` reads both back.
TEST(CliExport, DeepSpeedRoundTrip) {
  const Exported dp =
      round_trip("--model llama3-8b --cluster dgx-h100 --devices 64 --batch 512 --seq-len 8192",
                 "deepspeed", "--cluster dgx-h100");
  EXPECT_NE(dp.text.find("cat > ds_config.json <<'EOF'"), std::string::npos) << dp.text;
  EXPECT_NE(dp.text.find("--deepspeed_config ds_config.json"), std::string::npos) << dp.text;
  expect_same_plan(dp, kMegatronKnobs);
  const Exported pipeline = round_trip(
      "--model llama3-70b --cluster dgx-h100 --devices 64 --batch 128 --seq-len 4096 "
      "--pp 4 --tp 8 --zero 1 --recompute full",
      "deepspeed", "--cluster dgx-h100");
  EXPECT_NE(pipeline.text.find("\"number_checkpoints\": 20"), std::string::npos) << pipeline.text;
  EXPECT_NE(pipeline.text.find("--checkpoint-activations"), std::string::npos);
  expect_same_plan(pipeline, kMegatronKnobs, 0.01);
  // 80 layers over 6 stages: DeepSpeed's own split, planned, written and read back so.
  const Exported uneven =
      round_trip("--model llama3-70b --cluster dgx-h100 --devices 48 --batch 96 --pp 6",
                 "deepspeed", "--cluster dgx-h100");
  EXPECT_EQ(uneven.back["as_is"]["config"]["stage_layers"], Json::parse("[14,14,13,13,13,13]"))
      << uneven.text;
  expect_same_plan(uneven, kMegatronKnobs, 0.01);
  // What Megatron-DeepSpeed does not run as priced is refused, with the reason.
  const Outcome cp =
      run("evaluate --model llama3-8b --devices 8 --cp 2 --batch 8 --export deepspeed");
  EXPECT_EQ(cp.exit_code, 2) << cp.out;
  EXPECT_NE(cp.out.find("Ulysses"), std::string::npos) << cp.out;
}

}  // namespace
