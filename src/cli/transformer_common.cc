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
                         "Overlap the data-parallel gradient reduction with the backward pass "
                         "(default with --stack megatron or fsdp)"));
  CLI::Option* off = cmd->add_flag("--no-overlap-grad-reduce", k.overlap_off,
                                   for_plan ? "Transformer: fix gradient-reduce overlap off"
                                            : "Do not overlap the gradient reduction (default "
                                              "with --stack deepspeed)");
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
  cmd->add_option("--stack", k.stack,
                  "Training stack: megatron (Megatron-Core/NeMo: fused kernels, cuDNN attention, "
                  "its overlaps; default), fsdp (PyTorch FSDP: eager element-wise kernels, "
                  "FlashAttention-2, prefetched gathers; ZeRO 3 unless --zero) or deepspeed "
                  "(Megatron-DeepSpeed: fused kernels, FlashAttention-2, no overlaps)")
      ->check(CLI::IsMember({"megatron", "fsdp", "deepspeed"}));
  auto on_off = [&](const std::string& name, int& value, const std::string& what) {
    CLI::Option* yes = cmd->add_flag_callback(
        "--" + name, [&value] { value = 1; },
        "Megatron stack: " + what + " (default: on where it applies)");
    CLI::Option* no = cmd->add_flag_callback(
        "--no-" + name, [&value] { value = 0; }, "Megatron stack: do not " + what);
    yes->excludes(no);
  };
  on_off("tp-comm-overlap", k.tp_comm_overlap,
         "overlap tensor-parallel communication with the GEMMs (userbuffers; needs "
         "--sequence-parallel)");
  on_off("overlap-p2p-comm", k.overlap_p2p_comm,
         "overlap pipeline sends with compute (interleaved schedule, --vpp > 1)");
  on_off("overlap-param-gather", k.overlap_param_gather,
         "overlap the distributed optimizer's parameter all-gather with the forward (--zero 1)");
  cmd->add_option("--precision", k.precision,
                  "Precision of the transformer layers' matrix products: bf16 (default) or fp8 "
                  "(Transformer Engine's recipe; H100, H200)")
      ->check(CLI::IsMember({"bf16", "fp8"}));
  cmd->add_option("--grad-reduce-dtype", k.grad_reduce_dtype,
                  "Precision of the data-parallel gradient reduction: fp32 (default) or bf16 "
                  "(FSDP's pure bf16 mixed precision, Composer's PURE)")
      ->check(CLI::IsMember({"bf16", "fp32"}));
  cmd->add_option("--loss-dtype", k.loss_dtype,
                  "Precision of the logits the loss keeps: fp32 (default) or bf16 (default with "
                  "--stack fsdp --grad-reduce-dtype bf16: pure bf16, no autocast)")
      ->check(CLI::IsMember({"bf16", "fp32"}));
  if (!for_plan)  // plan and frontier have their own --memory, which reaches the knobs
    cmd->add_option("--memory", k.memory,
                    "Memory per device, overriding the cluster's: 40GiB (2^30 bytes), 80GB "
                    "(10^9) or a number of bytes");
  cmd->add_option("--memory-headroom", k.memory_headroom,
                  "Memory per device kept free: a share (5%) or a size (2GiB, 2GB); plans must "
                  "fit in the rest");
  cmd->add_option("--calibration", k.calibration,
                  "Calibration file (JSON or YAML, docs/formats.md); default: the shipped one "
                  "for the cluster's device (A100, H100, H200)");
}

}  // namespace paraplan::cli
