// Helpers of the transformer commands.
#include "cli/transformer_common.h"

#include "io/transformer_json.h"
#include "ir/error.h"

namespace paraplan::cli {

void add_transformer_knob_flags(CLI::App* cmd, api::TransformerKnobs& k, bool for_plan) {
  auto help = [&](const std::string& plan_text, const std::string& evaluate_text) {
    return for_plan ? "Transformer: fix " + plan_text : evaluate_text;
  };
  cmd->add_option("--seq-len", k.seq_len,
                  (for_plan ? "Transformer: s" : "S") +
                      std::string("equence length in tokens (default 2048)"))
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--micro-batch", k.micro_batch,
                  help("the micro-batch (sequences)", "Sequences per micro-batch (default 1)"))
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--tp", k.tp,
                  help("the tensor-parallel size", "Tensor-parallel size (default 1)"))
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--cp", k.cp,
                  help("the context-parallel size", "Context-parallel size (default 1)"))
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--pp", k.pp, help("the pipeline-parallel size", "Pipeline stages (default 1)"))
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option(
         "--dp", k.dp,
         help("the data-parallel size", "Data-parallel size (default devices ÷ (tp × cp × pp))"))
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option(
         "--ep", k.ep,
         help("the expert-parallel size (MoE)", "Expert-parallel size, MoE models (default 1)"))
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--vpp", k.vpp,
                  help("the virtual stages per device (interleaved 1F1B)",
                       "Virtual stages per device: interleaved 1F1B when > 1 (default 1)"))
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--recompute", k.recompute,
                  help("recomputation: none, selective, full or N layers per stage",
                       "Activation recomputation: none, selective, full (default) or N (full "
                       "recomputation of N layers per stage)"));
  cmd->add_flag("--sequence-parallel", k.sequence_parallel,
                help("sequence parallelism on", "Megatron sequence parallelism"));
  cmd->add_option("--zero", k.zero,
                  help("the ZeRO stage 0-3", "ZeRO stage 0-3 (1 = distributed optimizer)"))
      ->check(CLI::Range(0, 3));
  CLI::Option* on =
      cmd->add_flag("--overlap-grad-reduce", k.overlap_on,
                    help("gradient-reduce overlap on",
                         "Overlap the data-parallel gradient reduction with the backward pass"));
  CLI::Option* off = cmd->add_flag("--no-overlap-grad-reduce", k.overlap_off,
                                   for_plan ? "Transformer: fix gradient-reduce overlap off"
                                            : "Do not overlap the gradient reduction (default)");
  on->excludes(off);
  cmd->add_option("--attention", k.attention,
                  "Attention kernel: flash (FlashAttention: no s × s scores in memory; default) or "
                  "standard (materialised scores, as 2023 Megatron-DeepSpeed)")
      ->check(CLI::IsMember({"flash", "standard"}));
  cmd->add_option("--moe-capacity-factor", k.moe_capacity_factor,
                  "MoE token dropping: each expert takes at most this multiple of its mean share "
                  "of the tokens, padded to it (Megatron's --moe-expert-capacity-factor with "
                  "--moe-pad-expert-input-to-capacity); default dropless")
      ->check(CLI::Range(1.0, 1024.0));
  cmd->add_option("--stage-layers", k.stage_layers,
                  help("the layers per pipeline stage, e.g. 9,8,8,7",
                       "Layers per pipeline stage, e.g. 9,8,8,7 (default: as even as possible)"));
  cmd->add_option("--calibration", k.calibration,
                  "Calibration file (JSON or YAML, docs/formats.md); default: the shipped one "
                  "for the cluster's device (A100, H100, H200)");
}

const std::vector<std::string>& transformer_knob_flags() {
  static const std::vector<std::string> flags = {"--seq-len",
                                                 "--micro-batch",
                                                 "--tp",
                                                 "--cp",
                                                 "--pp",
                                                 "--dp",
                                                 "--ep",
                                                 "--vpp",
                                                 "--recompute",
                                                 "--sequence-parallel",
                                                 "--zero",
                                                 "--overlap-grad-reduce",
                                                 "--no-overlap-grad-reduce",
                                                 "--attention",
                                                 "--moe-capacity-factor",
                                                 "--stage-layers",
                                                 "--calibration"};
  return flags;
}

}  // namespace paraplan::cli
