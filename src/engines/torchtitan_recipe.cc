// torchtitan b5bcd76's configuration, from its source: Trainer.Config (torchtitan/trainer.py),
// TrainingConfig, ParallelismConfig and CompileConfig (torchtitan/config/configs.py), FullAC and
// SelectiveAC (torchtitan/distributed/activation_checkpoint.py), Float8LinearConverter
// (torchtitan/components/quantization/float8.py), each model's model_registry and config
// registry (torchtitan/models/*/), the pipeline's module names (distributed/pipeline_parallel.py)
// and run_train.sh's launch.
#include "engines/torchtitan_recipe.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "engines/engine_export.h"
#include "engines/torchtitan_config.h"
#include "engines/torchtitan_flavors.h"
#include "ir/engine_rules.h"
#include "ir/error.h"

namespace paraplan::engines {
namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw FieldError("export", " torchtitan-recipe: " + why);
}

// What b5bcd76 cannot express of what the torchtitan engine rules allow (238fa99's TOML could).
void refuse_inexpressible(const TrainingConfig& t) {
  if (t.recompute == Recompute::kFull && t.recompute_layers > 0)
    refuse(fmt::format(
        "torchtitan {} checkpoints every block (FullAC) or none; its per-layer frequency "
        "(238fa99's selective_ac_option = N) is gone, so {} of the layers recomputed cannot be "
        "written; plan with --recompute full or selective, or export torchtitan for 238fa99",
        kTorchtitanRecipeCommit, t.recompute_layers));
  if (t.fp8_param_gather)
    refuse(
        fmt::format("torchtitan {}'s float8 converter has no float8 all-gather (FSDP gathers "
                    "bf16 weights); plan with --no-fp8-params",
                    kTorchtitanRecipeCommit));
  if (t.bf16_gradient_reduction && t.fp32_loss)
    refuse(fmt::format(
        "torchtitan {} reduces gradients in float32 only (training.mixed_precision_reduce) "
        "unless the whole run is bf16 (training.dtype = \"bfloat16\", with a bf16 loss)",
        kTorchtitanRecipeCommit));
}

// The model parts of a pipeline, one per (virtual) stage, by torchtitan's module names.
std::string model_parts(const TransformerConfig& model, const TrainingConfig& t) {
  return "        module_fqns_per_model_part=[\n" +
         torchtitan_parts_lines(virtual_split(t, static_cast<int>(model.num_layers)), "lm_head",
                                "            ") +
         "        ],\n";
}

std::string py_bool(bool b) { return b ? "True" : "False"; }

std::string recipe_module(const TransformerConfig& model, const TrainingConfig& t,
                          const TorchtitanFlavor& f, bool hopper_or_newer) {
  const auto [replicate, shard] = torchtitan_degrees(t);
  const std::int64_t microbatch_tokens = t.micro_batch * t.seq_len;
  std::string imports =
      "from torchtitan.components.data import ConcatThenSplitPackingConfig, GrainDataLoader\n";
  if (t.fp8) imports += "from torchtitan.components.quantization import Float8LinearConverter\n";
  imports += "from torchtitan.config import CompileConfig, ParallelismConfig\n";
  if (t.recompute != Recompute::kNone)
    imports += fmt::format("from torchtitan.distributed.activation_checkpoint import {}\n",
                           t.recompute == Recompute::kFull ? "FullAC" : "SelectiveAC");
  imports += "from torchtitan.hf_datasets.text_datasets import DATASETS\n";
  imports += fmt::format("from torchtitan.models.{} import model_registry\n", f.name);
  imports +=
      fmt::format("from torchtitan.models.{}.config_registry import {}\n", f.name, f.baseline);
  std::string out = fmt::format(
      "\"\"\"{} on {} GPUs as paraplan planned it: a torchtitan {} configuration.\"\"\"\n",
      model.name, t.devices(), kTorchtitanRecipeCommit);
  out += imports + "\n\ndef paraplan_plan():\n";
  out += fmt::format("    config = {}()\n", f.baseline);
  // FlexAttention: torchtitan's language models run no SDPA; its flash backend is the
  // FlashAttention-3-class kernel priced on Hopper and Blackwell.
  out += fmt::format("    config.model_spec = model_registry(\"{}\", attn_backend=\"{}\"", f.flavor,
                     hopper_or_newer ? "flex_flash" : "flex");
  if (t.fp8)
    out += fmt::format(
        ",\n        converters=[Float8LinearConverter.Config(recipe_name=\"rowwise\", "
        "model_compile_enabled={})]",
        py_bool(t.fused_elementwise));
  out += ")\n";
  out +=
      "    # Data: torchtitan's in-repository C4 sample and test tokenizer, so it runs without\n"
      "    # downloads (the model's vocabulary is its flavor's); for your run set the dataset,\n"
      "    # hf_assets_path (scripts/download_hf_assets.py) and training.steps.\n"
      "    config.hf_assets_path = \"./tests/assets/tokenizer\"\n"
      "    config.dataloader = GrainDataLoader.Config(\n"
      "        dataset=ConcatThenSplitPackingConfig(dataset=DATASETS[\"c4_test\"]))\n"
      "    config.training.steps = 100\n";
  out += fmt::format("    config.training.max_context_length = {}\n", t.seq_len);
  out += fmt::format(
      "    config.training.num_tokens_per_microbatch_per_dp_rank = {}  # {} × {} tokens\n",
      microbatch_tokens, t.micro_batch, t.seq_len);
  out += fmt::format("    config.training.num_tokens_per_train_step = {}  # {} × {} tokens\n",
                     t.global_batch * t.seq_len, t.global_batch, t.seq_len);
  out += fmt::format("    config.training.dtype = \"{}\"\n",
                     t.bf16_gradient_reduction && !t.fp32_loss ? "bfloat16" : "float32");
  out += "    config.training.mixed_precision_param = \"bfloat16\"\n";
  out +=
      "    # Priced without CUDA graphs (and they do not run with pipelines or expert "
      "parallelism)\n"
      "    config.training.disable_cuda_graphs = True\n";
  out += "    config.parallelism = ParallelismConfig(\n";
  out += fmt::format("        data_parallel_replicate_degree={},\n", replicate);
  out += fmt::format("        data_parallel_shard_degree={},\n", shard);
  out += fmt::format("        fsdp_reshard_after_forward=\"{}\",\n",
                     t.zero_stage == 2 ? "never" : "always");
  out += fmt::format("        tensor_parallel_degree={},\n", t.tp);
  out += fmt::format("        enable_sequence_parallel={},\n", py_bool(t.tp > 1));
  out += fmt::format("        context_parallel_degree={},\n", t.cp);
  out += fmt::format("        expert_parallel_degree={},\n", t.ep);
  out += fmt::format("        pipeline_parallel_degree={},\n", t.pp);
  if (t.pp > 1) {
    out += fmt::format("        pipeline_parallel_schedule=\"{}\",\n",
                       t.vpp > 1 ? "Interleaved1F1B" : "1F1B");
    out += fmt::format("        num_pp_microbatches={},\n", t.microbatches());
    out += model_parts(model, t);
  }
  out += "    )\n";
  out += fmt::format("    config.activation_checkpoint = {}\n",
                     t.recompute == Recompute::kNone        ? "None"
                     : t.recompute == Recompute::kSelective ? "SelectiveAC.Config()"
                                                            : "FullAC.Config()");
  out += fmt::format(
      "    config.compile = CompileConfig(enable={}, components=[\"model\", \"loss\"],\n"
      "                                   enable_async_tensor_parallel={})\n",
      py_bool(t.fused_elementwise), py_bool(t.tp_comm_overlap));
  return out + "    return config\n";
}

}  // namespace

std::string torchtitan_recipe(const TransformerConfig& model, const TrainingConfig& t,
                              int devices_per_node, bool hopper_or_newer) {
  if (const auto v =
          rules::engine(engine_rules(Engine::kTorchtitan), t, static_cast<int>(model.num_layers)))
    throw RuleViolation(*v);
  const TorchtitanFlavor* flavor = torchtitan_flavor_of(model);
  if (flavor == nullptr || flavor->baseline == nullptr)
    refuse(fmt::format(
        "{} is none of the models torchtitan {} has a configuration function for that paraplan "
        "writes (llama3 8B, 70B, 405B and its debug model, deepseek_v3's 16B and debug model, "
        "qwen3 0.6B, 1.7B, 14B, 32B and 30B-A3B); export it for megatron or bridge",
        model.name, kTorchtitanRecipeCommit));
  if (t.zero_stage > 0 && t.dp == 1) refuse("ZeRO needs data-parallel ranks to shard over");
  if (!t.fp32_loss && !t.bf16_gradient_reduction)
    refuse("a bf16 loss comes with bf16 gradients (training.dtype = \"bfloat16\")");
  if (t.tp_comm_overlap && !t.fused_elementwise)
    refuse("asynchronous tensor parallelism is a torch.compile pass: plan it with --compile");
  refuse_inexpressible(t);
  const int world = t.devices();
  const TorchrunMachines machines = torchrun_machines(world, devices_per_node);
  std::string out = "#!/usr/bin/env bash\n";
  out += fmt::format(
      "# torchtitan {} (its Python configurations; `--export torchtitan` writes the TOML of "
      "238fa99):\n# writes paraplan_recipe.py, then trains with --module paraplan_recipe "
      "--config paraplan_plan.\n",
      kTorchtitanRecipeCommit);
  out += run_from_comment("torchtitan", machines);
  out += fmt::format(
      "# Check it without GPUs first: MODULE=paraplan_recipe CONFIG=paraplan_plan NGPU={} "
      "COMM_MODE=fake_backend ./run_train.sh\n",
      world);
  out += "set -euo pipefail\ncat > paraplan_recipe.py <<'PARAPLAN_RECIPE'\n";
  out += recipe_module(model, t, *flavor, hopper_or_newer);
  out += "PARAPLAN_RECIPE\n";
  out += "export PYTORCH_ALLOC_CONF=\"expandable_segments:True\"\n";
  out += torchrun_lines(machines);
  out += "  -m torchtitan.train --module paraplan_recipe --config paraplan_plan\n";
  return out;
}

std::vector<std::pair<std::string, std::string>> torchtitan_recipe_searched_options(
    const TrainingConfig& t) {
  auto num = [](auto v) { return fmt::format("{}", v); };
  const auto [replicate, shard] = torchtitan_degrees(t);
  std::vector<std::pair<std::string, std::string>> out = {
      {"parallelism.data_parallel_shard_degree", num(shard)},
      {"parallelism.data_parallel_replicate_degree", num(replicate)},
      {"parallelism.fsdp_reshard_after_forward", t.zero_stage == 2 ? "\"never\"" : "\"always\""},
      {"parallelism.tensor_parallel_degree", num(t.tp)},
      {"parallelism.pipeline_parallel_degree", num(t.pp)},
      {"parallelism.context_parallel_degree", num(t.cp)},
      {"parallelism.expert_parallel_degree", num(t.ep)},
      {"training.num_tokens_per_microbatch_per_dp_rank", num(t.micro_batch * t.seq_len)}};
  if (t.pp > 1) {
    out.emplace_back("parallelism.pipeline_parallel_schedule",
                     t.vpp > 1 ? "\"Interleaved1F1B\"" : "\"1F1B\"");
    out.emplace_back("parallelism.num_pp_microbatches", num(t.microbatches()));
  }
  out.emplace_back("activation_checkpoint", t.recompute == Recompute::kNone ? "None"
                                            : t.recompute == Recompute::kSelective
                                                ? "SelectiveAC.Config()"
                                                : "FullAC.Config()");
  return out;
}

}  // namespace paraplan::engines
