// The training stack end to end: what `validate` prices for a measured run is what a user gets
// from `paraplan evaluate` with the run's stack, model file and settings — no hidden per-data-set
// knobs (docs/cost-models.md, "Training stacks").
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_test_support.h"
#include "io/mpt_reader.h"
#include "io/single_gpu_runs.h"
#include "io/vtrain_reader.h"
#include "validate/single_gpu.h"
#include "validate/vtrain.h"

namespace paraplan {
namespace {

using testing_support::run;
using testing_support::write_temp;

std::string recompute_flag(Recompute r) {
  return r == Recompute::kFull ? "full" : r == Recompute::kSelective ? "selective" : "none";
}

nlohmann::json evaluate(const std::string& args) {
  const auto o = run("evaluate " + args + " --json");
  EXPECT_EQ(o.exit_code, 0) << args << "\n" << o.out;
  return o.exit_code == 0 ? nlohmann::json::parse(o.out) : nlohmann::json::object();
}

// Every MPT row: its config.json (MPT's own keys) and settings on the fsdp stack.
TEST(Stacks, EvaluateFsdpEqualsValidateOnEveryMptRow) {
  const auto table = io::read_mpt_table(std::string(PARAPLAN_DATA) + "/mpt/mpt_a100.tsv");
  const auto scored = validate::score_runs(table.runs);
  ASSERT_EQ(scored.size(), 139u);
  for (const auto& s : scored) {
    const io::MeasuredRun& r = s.run;
    const std::string model =
        write_temp("mpt-" + std::to_string(r.line) + ".json", io::mpt_config_json(r).dump());
    const std::string args = fmt::format(
        "--stack fsdp --model {} --cluster dgx-a100 --memory {:.0f} --devices {} --dp {} --batch "
        "{} --micro-batch {} --seq-len {} --zero {} --recompute {} --attention flash "
        "--grad-reduce-dtype {} --loss-kernel {}",
        model, r.device_memory_bytes, r.gpus, r.dp, r.global_batch, r.micro_batch, r.seq_len,
        r.zero_stage, recompute_flag(r.recompute), r.bf16_gradient_reduction ? "bf16" : "fp32",
        r.fused_loss ? "fused" : "eager");
    const auto j = evaluate(args);
    if (j.empty()) continue;
    EXPECT_EQ(j["iteration_time_s"].get<double>(), s.predicted_s) << "line " << r.line;
    EXPECT_EQ(j["memory"]["peak_bytes"].get<double>(), s.predicted_peak_bytes) << "line " << r.line;
    EXPECT_EQ(j["fits"].get<bool>(), s.fits) << "line " << r.line;
  }
}

// Plain PyTorch on one H100: what users type (`--stack fsdp --devices 1` with the run's
// config.json) prices each run as validate does, verdict included.
TEST(Stacks, EvaluateFsdpOnOneDeviceEqualsValidateOnEverySingleGpuRun) {
  const std::string folder = std::string(PARAPLAN_DATA) + "/h100-single-gpu";
  const auto scored = validate::score_single_gpu(io::read_single_gpu_runs(folder));
  for (const auto& s : scored) {
    const io::SingleGpuRun& r = s.run;
    const auto j = evaluate(fmt::format(
        "--stack fsdp --model {}/configs/{}.json --cluster dgx-h100 --devices 1 --batch {} "
        "--micro-batch {} --seq-len {} --recompute {}{}",
        folder, r.model_name, r.batch, r.micro_batch, r.seq_len, recompute_flag(r.recompute),
        r.compiled ? " --compile" : ""));
    if (j.empty()) continue;
    EXPECT_EQ(j["iteration_time_s"].get<double>(), s.predicted.iteration_time_s) << r.place;
    EXPECT_EQ(j["memory"]["peak_bytes"].get<double>(), s.predicted.memory.peak_bytes) << r.place;
    EXPECT_EQ(j["fits"].get<bool>(), r.ran) << r.place;
  }
}

// vTrain's Megatron-DeepSpeed runs (every multi-node run, every 16th single-node one): a GPT-2
// config.json of the run's shape on the deepspeed stack.
TEST(Stacks, EvaluateDeepSpeedEqualsValidateOnVtrainRows) {
  const auto runs = io::read_vtrain_folder(std::string(PARAPLAN_DATA) + "/vtrain");
  std::vector<io::MeasuredRun> sample = runs.multi;
  for (std::size_t i = 0; i < runs.single.size(); i += 16) sample.push_back(runs.single[i]);
  const auto scored = validate::score_runs(sample);
  for (const auto& s : scored) {
    const io::MeasuredRun& r = s.run;
    const nlohmann::json config = {{"model_type", "gpt2"},     {"n_embd", r.hidden},
                                   {"n_layer", r.layers},      {"n_head", r.heads},
                                   {"n_positions", r.seq_len}, {"vocab_size", r.vocab}};
    const std::string model =
        write_temp(fmt::format("gpt-{}-{}.json", r.set, r.line), config.dump());
    const std::string args = fmt::format(
        "--stack deepspeed --model {} --cluster {} --memory {:.0f} --devices {} --tp {} --pp {} "
        "--dp {} --batch {} --micro-batch {} --seq-len {} --zero {} --recompute {} --attention {}",
        model, r.cluster, r.device_memory_bytes, r.gpus, r.tp, r.pp, r.dp, r.global_batch,
        r.micro_batch, r.seq_len, r.zero_stage, recompute_flag(r.recompute),
        r.attention == Attention::kFlash ? "flash" : "standard");
    const auto j = evaluate(args);
    if (j.empty()) continue;
    EXPECT_EQ(j["iteration_time_s"].get<double>(), s.predicted_s) << r.set << " line " << r.line;
    EXPECT_EQ(j["memory"]["peak_bytes"].get<double>(), s.predicted_peak_bytes)
        << r.set << " line " << r.line;
  }
}

TEST(Stacks, OverlapsOutsideTheirStackOrShapeAreRefusedByFlag) {
  const std::string base = "--model llama3-8b --cluster dgx-h100 --devices 8 --batch 64 ";
  auto refused = [&](const std::string& flags, const std::string& needle) {
    const auto o = run("evaluate " + base + flags);
    EXPECT_EQ(o.exit_code, 2) << flags << "\n" << o.out;
    EXPECT_NE(o.out.find(needle), std::string::npos) << o.out;
  };
  // The fsdp stack's tensor-parallel overlap is torchtitan's async TP: the same shape rule.
  refused("--stack fsdp --tp-comm-overlap", "--tp-comm-overlap: needs --tp 2 or more");
  refused("--stack deepspeed --tp-comm-overlap",
          "--tp-comm-overlap: applies to the megatron or fsdp stack only, not --stack "
          "deepspeed");
  refused("--compile", "--compile: applies to the fsdp stack only, not --stack megatron");
  refused("--tp 2 --tp-comm-overlap", "needs --tp 2 or more and --sequence-parallel");
  refused("--overlap-p2p-comm", "interleaved schedule");
  refused("--zero 0 --overlap-param-gather", "distributed optimizer");
  refused("--stack torch", "--stack");
  refused("--grad-reduce-dtype fp16", "--grad-reduce-dtype");
  refused("--memory-headroom 100%", "--memory-headroom");
  const auto a100 =
      run("evaluate --model llama3-8b --cluster dgx-a100 --devices 8 --precision fp8");
  EXPECT_EQ(a100.exit_code, 2) << a100.out;
  EXPECT_NE(a100.out.find("--precision fp8: FP8 matrix products need FP8 tensor cores"),
            std::string::npos)
      << a100.out;
}

TEST(Stacks, MegatronOverlapsHideCommunicationAndHeadroomTightensTheVerdict) {
  const std::string base =
      "--model llama3-70b --cluster dgx-h100 --devices 64 --batch 128 --seq-len 8192 --tp 4 "
      "--pp 4 --cp 2 --vpp 5 --recompute none --sequence-parallel --zero 1";
  const auto on = evaluate(base);
  const auto off = evaluate(base +
                            " --no-tp-comm-overlap --no-overlap-p2p-comm --no-overlap-param-gather "
                            "--no-overlap-grad-reduce");
  ASSERT_FALSE(on.empty());
  ASSERT_FALSE(off.empty());
  EXPECT_TRUE(on["config"]["tp_comm_overlap"].get<bool>());
  EXPECT_TRUE(on["config"]["overlap_p2p_comm"].get<bool>());
  EXPECT_TRUE(on["config"]["overlap_param_gather"].get<bool>());
  EXPECT_LT(on["iteration_time_s"].get<double>(), 0.95 * off["iteration_time_s"].get<double>());
  const double peak = on["memory"]["peak_bytes"].get<double>();
  const double device = on["memory"]["device_memory_bytes"].get<double>();
  EXPECT_TRUE(on["fits"].get<bool>());
  const double headroom = device - peak + (1 << 20);  // leaves a MiB less than the peak
  const auto tight = evaluate(base + fmt::format(" --memory-headroom {:.0f}", headroom));
  ASSERT_FALSE(tight.empty());
  EXPECT_FALSE(tight["fits"].get<bool>());
  EXPECT_EQ(tight["memory"]["headroom_bytes"].get<double>(), headroom);
}

// Megatron-DeepSpeed's pipeline splits the layers itself (DeepSpeed's partition_balanced: the
// first stages one layer more): planned, evaluated and read with that split, not the middle-heavy
// one the other stacks' search starts from.
TEST(Stacks, DeepSpeedPipelinesRunDeepSpeedsOwnSplit) {
  const std::string knobs =
      "--model llama3-70b --cluster dgx-h100 --devices 48 --batch 96 --pp 6 --stack deepspeed";
  const auto plan = run("plan " + knobs + " --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.out;
  const nlohmann::json planned = nlohmann::json::parse(plan.out);
  const nlohmann::json& config =
      planned.contains("best") ? planned["best"]["config"] : planned["config"];
  EXPECT_EQ(config["stage_layers"], nlohmann::json::parse("[14,14,13,13,13,13]")) << plan.out;
  const nlohmann::json evaluated = evaluate(knobs);
  ASSERT_FALSE(evaluated.empty());
  EXPECT_EQ(evaluated["config"]["stage_layers"], nlohmann::json::parse("[14,14,13,13,13,13]"));
  // Another split is refused for it, naming why.
  const auto other = run("evaluate " + knobs + " --stage-layers 13,14,14,13,13,13");
  EXPECT_EQ(other.exit_code, 2) << other.out;
  EXPECT_NE(other.out.find("splits the transformer layers over the stages itself"),
            std::string::npos)
      << other.out;
}

}  // namespace
}  // namespace paraplan
