// Helpers of the transformer commands.
#include "cli/transformer_common.h"

#include "io/transformer_json.h"
#include "ir/error.h"

namespace paraplan::cli {

void add_transformer_knob_flags(CLI::App* cmd, TransformerKnobs& k, bool for_plan) {
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

LlmSearchSettings search_settings(const TransformerKnobs& k, int devices, std::int64_t batch,
                                  bool uniform_stages) {
  LlmSearchSettings s;
  s.devices = devices;
  s.global_batch = batch;
  s.seq_len = k.seq_len > 0 ? k.seq_len : 2048;
  if (k.tp) s.tp = k.tp;
  if (k.cp) s.cp = k.cp;
  if (k.pp) s.pp = k.pp;
  if (k.dp) s.dp = k.dp;
  if (k.ep) s.ep = k.ep;
  if (k.vpp) s.vpp = k.vpp;
  if (k.micro_batch) s.micro_batch = k.micro_batch;
  if (!k.recompute.empty()) {
    const RecomputeChoice rc = parse_recompute(k.recompute);
    s.recompute = rc.kind;
    if (rc.kind == Recompute::kFull) s.recompute_layers = rc.layers;
  }
  if (k.sequence_parallel) s.sequence_parallel = true;
  if (k.zero >= 0) s.zero_stage = k.zero;
  if (k.overlap_on || k.overlap_off) s.overlap_grad_reduce = k.overlap_on;
  s.attention = io::attention_from_text(k.attention).value_or(Attention::kFlash);  // CLI checked it
  s.moe_capacity_factor = k.moe_capacity_factor;
  if (!k.stage_layers.empty())
    throw Error(
        ErrorKind::kUsage, "",
        "--stage-layers is a setting of evaluate; plan searches the split (--uniform-stages "
        "keeps it even)");
  s.balance_stages = !uniform_stages;
  return s;
}

RecomputeChoice parse_recompute(const std::string& text) {
  if (text == "none") return {Recompute::kNone, 0};
  if (text == "selective") return {Recompute::kSelective, 0};
  if (text == "full") return {Recompute::kFull, 0};
  if (!text.empty() && text.size() < 7 &&
      text.find_first_not_of("0123456789") == std::string::npos && std::stoi(text) > 0)
    return {Recompute::kFull, std::stoi(text)};
  throw Error(ErrorKind::kUsage, "",
              "--recompute must be none, selective, full or a number of layers N >= 1 (got \"" +
                  text + "\")");
}

std::string recompute_text(const TrainingConfig& t) { return io::recompute_text(t); }

std::vector<int> parse_stage_layers(const std::string& text) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    if (item.empty() || item.size() > 6 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      throw Error(
          ErrorKind::kUsage, "",
          "--stage-layers: expected layer counts separated by commas, e.g. 9,8,8,7 (got \"" + text +
              "\")");
    out.push_back(std::stoi(item));
    pos = end + 1;
  }
  return out;
}

}  // namespace paraplan::cli
