// `paraplan evaluate --from megatron FILE`: the user's own launch priced as it is, the best plan
// on the same devices and batch, the change as a diff of the user's arguments; bad launches as one
// line and exit 2; the export read back gives the configuration that was exported.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "api/launch.h"
#include "cli/cli_test_support.h"
#include "engines/engine_export.h"
#include "engines/megatron_args.h"
#include "zoo/llm_models.h"

namespace {

using paraplan::testing_support::Outcome;
using paraplan::testing_support::run;
using paraplan::testing_support::run_shell;

const std::string kExample =
    std::string(PARAPLAN_SOURCE_DIR) + "/docs/examples/megatron_llama3_8b.sh";

std::string write(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliLaunch, PricesTheLaunchAndDiffsItAgainstTheBestPlan) {
  Outcome r = run("evaluate --from megatron " + kExample + " --cluster dgx-h100 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["from"]["world_size"], 64);
  EXPECT_EQ(j["as_is"]["config"]["tp"], 8);
  EXPECT_EQ(j["as_is"]["config"]["dp"], 8);
  const double as_is = j["as_is"]["iteration_time_s"], best = j["best"]["iteration_time_s"];
  EXPECT_LE(best, as_is);
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), as_is / best);
  ASSERT_FALSE(j["diff"].empty());
  for (const auto& line : j["diff"]) {
    const std::string l = line;
    EXPECT_TRUE(l.rfind("- --", 0) == 0 || l.rfind("+ --", 0) == 0) << l;
  }
  // In words, with --explain; and from standard input, the same document.
  Outcome words = run("evaluate --from megatron " + kExample + " --cluster dgx-h100 --explain");
  ASSERT_EQ(words.exit_code, 0) << words.out;
  EXPECT_NE(words.out.find("ignored (no effect on time or memory): "), std::string::npos);
  EXPECT_NE(words.out.find("the change ("), std::string::npos) << words.out;
  Outcome piped = run_shell("cat " + kExample + " | " + PARAPLAN_BINARY +
                            " evaluate --from megatron - --cluster dgx-h100 --json");
  ASSERT_EQ(piped.exit_code, 0) << piped.out;
  auto p = nlohmann::json::parse(piped.out);
  EXPECT_EQ(p["from"]["source"], "standard input");
  p["from"]["source"] = j["from"]["source"];
  // The model read from a file is named after it; from standard input, after the reader.
  EXPECT_EQ(j["as_is"]["model"], "megatron_llama3_8b");
  EXPECT_EQ(p["as_is"]["model"], "megatron-args");
  for (const char* side : {"as_is", "best"}) p[side]["model"] = j[side]["model"];
  EXPECT_EQ(p, j);
}

TEST(CliLaunch, TheNemoRecipeOfTheSameJobIsPricedTheSameAndDiffedInItsKeys) {
  const std::string recipe =
      std::string(PARAPLAN_SOURCE_DIR) + "/docs/examples/nemo_llama3_8b.yaml";
  Outcome nemo = run("evaluate --from nemo " + recipe + " --cluster dgx-h100 --json");
  ASSERT_EQ(nemo.exit_code, 0) << nemo.out;
  Outcome megatron = run("evaluate --from megatron " + kExample + " --cluster dgx-h100 --json");
  ASSERT_EQ(megatron.exit_code, 0) << megatron.out;
  const auto n = nlohmann::json::parse(nemo.out), m = nlohmann::json::parse(megatron.out);
  EXPECT_EQ(n["as_is"]["iteration_time_s"], m["as_is"]["iteration_time_s"]);
  EXPECT_EQ(n["best"]["iteration_time_s"], m["best"]["iteration_time_s"]);
  ASSERT_FALSE(n["diff"].empty());
  for (const auto& line : n["diff"]) {
    const std::string l = line;
    EXPECT_TRUE(l.rfind("- model.", 0) == 0 || l.rfind("+ model.", 0) == 0) << l;
  }
}

TEST(CliLaunch, ADeepSpeedConfigIsPricedAsEvaluatePricesItAndSearchedAsDataParallelism) {
  const std::string ds =
      std::string(PARAPLAN_SOURCE_DIR) + "/docs/examples/deepspeed_llama3_8b.json";
  Outcome r = run("evaluate --from deepspeed " + ds +
                  " --model llama3-8b --seq-len 8192 --cluster dgx-h100 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Outcome e = run(
      "evaluate --model llama3-8b --cluster dgx-h100 --stack deepspeed --zero 3 --recompute full "
      "--micro-batch 1 --batch 512 --seq-len 8192 --devices 64 --overlap-grad-reduce "
      "--grad-reduce-dtype bf16 --json");
  ASSERT_EQ(e.exit_code, 0) << e.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["as_is"]["iteration_time_s"], nlohmann::json::parse(e.out)["iteration_time_s"]);
  const auto best = j["best"]["config"];
  EXPECT_EQ(best["tp"].get<int>() * best["pp"].get<int>() * best["cp"].get<int>(), 1);
  EXPECT_LE(j["best"]["iteration_time_s"].get<double>(),
            j["as_is"]["iteration_time_s"].get<double>());
  for (const auto& line : j["diff"]) {
    const std::string l = line;
    EXPECT_TRUE(l.rfind("- ", 0) == 0 || l.rfind("+ ", 0) == 0) << l;
    EXPECT_EQ(l.find("--"), std::string::npos) << l;
  }
  Outcome no_seq = run("evaluate --from deepspeed " + ds + " --model llama3-8b");
  EXPECT_EQ(no_seq.exit_code, 2) << no_seq.out;
  EXPECT_NE(no_seq.out.find("sequence length"), std::string::npos) << no_seq.out;
}

// DeepSpeed's batch as DeepSpeed resolves it: the micro-batch from train_batch_size ÷
// (accumulation × ranks), or from --micro-batch where the Hugging Face Trainer's "auto" stands,
// the accumulation following; a flag never restates what the file gives.
TEST(CliLaunch, ADeepSpeedBatchResolvesAsDeepSpeedDoes) {
  const std::string base = R"("bf16": {"enabled": true}, "zero_optimization": {"stage": 1}, )";
  const std::string derived =
      write("ds_derived.json",
            "{" + base + R"("train_batch_size": 512, "gradient_accumulation_steps": 4})");
  const std::string hf = write(
      "ds_auto.json",
      "{" + base +
          R"("train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"})");
  const std::string common =
      " --model llama3-8b --seq-len 4096 --cluster dgx-h100 --devices 16 --json";
  Outcome r = run("evaluate --from deepspeed " + derived + common);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto config = nlohmann::json::parse(r.out)["as_is"]["config"];
  EXPECT_EQ(config["micro_batch"], 8);  // 512 ÷ (4 × 16)
  EXPECT_EQ(config["global_batch"], 512);
  Outcome a = run("evaluate --from deepspeed " + hf + common + " --micro-batch 2 --batch 256");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  config = nlohmann::json::parse(a.out)["as_is"]["config"];
  EXPECT_EQ(config["micro_batch"], 2);
  EXPECT_EQ(config["global_batch"], 256);  // 2 × 8 steps × 16
  Outcome missing = run("evaluate --from deepspeed " + hf + common);
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_NE(missing.out.find("is \"auto\""), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find("--micro-batch"), std::string::npos) << missing.out;
  Outcome twice = run("evaluate --from deepspeed " + derived + common + " --batch 512");
  EXPECT_EQ(twice.exit_code, 2) << twice.out;
  EXPECT_NE(twice.out.find("leave it out"), std::string::npos) << twice.out;
}

TEST(CliLaunch, TheModelFromItsNameIsPricedAsEvaluatePricesIt) {
  const std::string args = write(
      "launch_no_shape.txt",
      "--seq-length 8192 --micro-batch-size 1 --global-batch-size 256 --bf16 "
      "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --sequence-parallel "
      "--recompute-granularity selective --use-distributed-optimizer --overlap-grad-reduce\n");
  Outcome r = run("evaluate --from megatron " + args +
                  " --model llama3-8b --cluster dgx-h100 --devices 32 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Outcome e = run(
      "evaluate --model llama3-8b --cluster dgx-h100 --devices 32 --seq-len 8192 --micro-batch 1 "
      "--batch 256 --tp 4 --pp 2 --sequence-parallel --recompute selective --zero 1 "
      "--overlap-grad-reduce --no-tp-comm-overlap --no-overlap-param-gather --json");
  ASSERT_EQ(e.exit_code, 0) << e.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["as_is"]["iteration_time_s"],
            nlohmann::json::parse(e.out)["iteration_time_s"]);
}

TEST(CliLaunch, PlanFromALaunchExportsTheBestPlan) {
  Outcome r = run("plan --from megatron " + kExample + " --cluster dgx-h100 --export megatron");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // The export is the best plan: read back, it has the best plan's sizes.
  Outcome j = run("plan --from megatron " + kExample + " --cluster dgx-h100 --json");
  const auto best = nlohmann::json::parse(j.out)["best"]["config"];
  const paraplan::engines::LaunchConfig back =
      paraplan::engines::read_megatron_args(r.out, "exported");
  EXPECT_EQ(back.training.tp, best["tp"].get<int>());
  EXPECT_EQ(back.training.pp, best["pp"].get<int>());
  EXPECT_EQ(back.training.micro_batch, best["micro_batch"].get<int>());
  EXPECT_EQ(back.training.seq_len, 8192);
  EXPECT_EQ(back.training.global_batch, 512);
}

TEST(CliLaunch, BadLaunchesAreOneLineAndExitTwo) {
  const std::string typo = write("launch_typo.txt",
                                 "--seq-length 2048 --micro-batch-size 1 --bf16\n"
                                 "--tensor-model-paralel-size 2\n");
  const std::string tp3 = write("launch_tp3.txt",
                                "--seq-length 2048 --micro-batch-size 1 --bf16 "
                                "--tensor-model-parallel-size 3\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"evaluate --from megatron " + typo + " --model llama3-8b --devices 8",
       "launch_typo.txt:2: --tensor-model-paralel-size"},
      {"evaluate --from megatron " + tp3 + " --model llama3-8b --devices 8",
       "= 3 does not divide the world size 8"},
      {"evaluate --from megatron " + tp3 + " --model llama3-8b", "devices"},
      {"evaluate --from colossalai " + tp3, "colossalai: expected megatron"},
      {"plan --from megatron " + kExample + " --cluster dgx-h100 --export torchtitan",
       "searched for the launch's engine"},
      {"evaluate --from megatron " + kExample + " --tp 2", "--tp"},
      {"evaluate --from megatron " + kExample + " --model llama3-8b", "leave it out"},
      {"evaluate --from megatron " + kExample + " --devices 16", "the launch runs 64 processes"},
      {"evaluate --model llama3-8b --explain", "--explain"}};
  for (const auto& [args, message] : cases) {
    Outcome r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
  }
}

// What `--export megatron` writes, read back, is the configuration exported.
TEST(CliLaunch, MegatronExportReadsBackAsTheSameConfiguration) {
  using namespace paraplan;
  const TransformerConfig model = *zoo::llm_model("llama3-70b");
  TrainingConfig t;
  t.tp = 8;
  t.pp = 4;
  t.cp = 2;
  t.dp = 2;
  t.vpp = 5;
  t.micro_batch = 2;
  t.global_batch = 256;
  t.seq_len = 8192;
  t.recompute = Recompute::kFull;
  t.recompute_layers = 2;
  t.sequence_parallel = true;
  t.zero_stage = 1;
  t.overlap_grad_reduce = t.overlap_param_gather = t.tp_comm_overlap = true;
  t.overlap_p2p_comm = false;
  t.fp8 = true;
  t.dropout = false;
  const engines::LaunchConfig back =
      engines::read_megatron_args(engines::megatron_arguments(model, t), "exported");
  ASSERT_TRUE(back.model.has_value());
  EXPECT_EQ(back.model->num_layers, model.num_layers);
  EXPECT_EQ(back.model->hidden_size, model.hidden_size);
  EXPECT_EQ(back.model->ffn_hidden_size, model.ffn_hidden_size);
  EXPECT_EQ(back.model->num_kv_heads, model.num_kv_heads);
  EXPECT_EQ(back.model->vocab_size, model.vocab_size);
  EXPECT_EQ(back.model->gated_mlp, model.gated_mlp);
  EXPECT_EQ(back.model->tied_embeddings, model.tied_embeddings);
  EXPECT_EQ(back.model->biases, model.biases);
  const TrainingConfig& r = back.training;
  EXPECT_EQ(r.tp, t.tp);
  EXPECT_EQ(r.pp, t.pp);
  EXPECT_EQ(r.cp, t.cp);
  EXPECT_EQ(back.layers_per_virtual_stage * t.pp * t.vpp, model.num_layers);
  EXPECT_EQ(r.micro_batch, t.micro_batch);
  EXPECT_EQ(r.global_batch, t.global_batch);
  EXPECT_EQ(r.seq_len, t.seq_len);
  EXPECT_EQ(r.recompute, t.recompute);
  EXPECT_EQ(r.recompute_layers, t.recompute_layers);
  EXPECT_EQ(r.sequence_parallel, t.sequence_parallel);
  EXPECT_EQ(r.zero_stage, t.zero_stage);
  EXPECT_EQ(r.overlap_grad_reduce, t.overlap_grad_reduce);
  EXPECT_EQ(r.overlap_param_gather, t.overlap_param_gather);
  EXPECT_EQ(r.tp_comm_overlap, t.tp_comm_overlap);
  EXPECT_EQ(r.overlap_p2p_comm, t.overlap_p2p_comm);
  EXPECT_EQ(r.fp8, t.fp8);
  EXPECT_EQ(r.dropout, t.dropout);
  // With vpp resolved, the searched options are the same: no diff.
  TrainingConfig resolved = r;
  resolved.dp = t.dp;
  resolved.vpp = t.vpp;
  EXPECT_TRUE(api::launch_diff("megatron", model, t, resolved).empty());
}

TEST(CliLaunch, AMegatronBridgeLaunchIsPricedAndItsBestPlanExportedForBridge) {
  const std::string example =
      std::string(PARAPLAN_SOURCE_DIR) + "/docs/examples/megatron_bridge_llama3_8b.sh";
  Outcome r = run("evaluate --from bridge " + example + " --cluster dgx-h100 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["from"]["world_size"], 16);
  EXPECT_EQ(j["as_is"]["config"]["tp"], 8);
  EXPECT_EQ(j["as_is"]["config"]["recompute"], "full");
  EXPECT_LT(j["best"]["iteration_time_s"].get<double>(),
            j["as_is"]["iteration_time_s"].get<double>());
  bool tp_line = false;
  for (const auto& line : j["diff"])
    tp_line =
        tp_line || line.get<std::string>().rfind("- model.tensor_model_parallel_size=8", 0) == 0;
  EXPECT_TRUE(tp_line) << j["diff"].dump();
  // The best plan, exported for Bridge, reads back as itself.
  Outcome e = run("plan --from bridge " + example + " --cluster dgx-h100 --export bridge");
  ASSERT_EQ(e.exit_code, 0) << e.out;
  EXPECT_NE(e.out.find("run_recipe.py --recipe vanilla_gpt_pretrain_1gpu_h100_bf16_config"),
            std::string::npos)
      << e.out;
  const std::string exported = write("bridge_best.sh", e.out);
  Outcome back = run("evaluate --from bridge " + exported + " --cluster dgx-h100 --json");
  ASSERT_EQ(back.exit_code, 0) << back.out;
  const auto b = nlohmann::json::parse(back.out);
  EXPECT_DOUBLE_EQ(b["as_is"]["iteration_time_s"].get<double>(),
                   j["best"]["iteration_time_s"].get<double>());
}

// NVIDIA's own recipes as their functions set them: Llama 3.1 405B's counts the embedding and
// the loss as layers of its split (126 + 2 over pp 8 × vpp 2: the first and last virtual stages
// 7 layers, the others 8), which used to be dropped for an even split; DeepSeek-V3's custom
// MixedPrecisionConfig and precision-aware optimizer (bf16 gradient reduction, bf16 moments) are
// priced, and its best plan keeps them.
TEST(CliLaunch, NvidiasRecipesAreReadAsTheyRun) {
  const std::string llama =
      write("llama405.sh",
            "torchrun --nproc-per-node=8 --nnodes=32 scripts/training/run_recipe.py --recipe "
            "llama31_405b_pretrain_256gpu_h100_bf16_config\n");
  Outcome r = run("evaluate --from bridge " + llama + " --cluster dgx-h100 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["as_is"]["config"]["stage_layers"],
            nlohmann::json::parse("[15,16,16,16,16,16,16,15]"));
  EXPECT_EQ(j["as_is"]["config"]["virtual_stage_layers"][0], 7);
  const std::string v3 =
      write("deepseek_v3.sh",
            "torchrun --nproc-per-node=8 --nnodes=128 scripts/training/run_recipe.py --recipe "
            "deepseek_v3_pretrain_1024gpu_h100_bf16_config\n");
  r = run("evaluate --from bridge " + v3 + " --model " + std::string(PARAPLAN_SOURCE_DIR) +
          "/tests/data/hf-configs/deepseek-v3/config.json --cluster dgx-h100 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  for (const char* which : {"as_is", "best"}) {
    EXPECT_EQ(j[which]["config"]["optimizer_moments"], "bf16") << which;
    EXPECT_EQ(j[which]["config"]["grad_reduce_dtype"], "bf16") << which;
  }
}

}  // namespace
