// The transformer planner's answers in words: the best plan, the runners-up, how to run it; on
// several device types, the answer against each type alone and the type-blind plan.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/evaluate.h"
#include "api/plan_text.h"
#include "engines/engine_export.h"
#include "io/transformer_json.h"
#include "ir/units.h"

namespace paraplan::api {
namespace {

std::string layer_split(const TrainingConfig& t) {
  if (t.stage_layers.empty()) return "even";
  return fmt::format("{}", fmt::join(t.stage_layers, ","));
}

std::string mixed_knobs_in_words(const MixedConfig& c) {
  TrainingConfig knobs;
  knobs.recompute = c.recompute;
  return fmt::format(
      "micro-batch of {} sequences over each stage's replicas ({} per iteration), recompute {}{}, "
      "ZeRO {}{}",
      c.samples_per_microbatch, c.microbatches(), recompute_text(knobs),
      c.sequence_parallel ? ", sequence parallel" : "", c.zero_stage,
      c.overlap_grad_reduce ? ", gradient reduction overlapped" : "");
}

// The expert-parallel size, with the expert tensor-parallel size after a slash where it is not
// tp ("8/1").
std::string ep_text(const TrainingConfig& t) {
  return t.etp > 0 ? fmt::format("{}/{}", t.ep, t.etp) : fmt::format("{}", t.ep);
}

// ZeRO's stage, with HSDP's shard group after a slash ("3/8").
std::string zero_text(const TrainingConfig& t) {
  return t.shard_group > 0 ? fmt::format("{}/{}", t.zero_stage, t.shard_group)
                           : fmt::format("{}", t.zero_stage);
}

std::string id_spans(const std::vector<int>& ids) {  // {0,1,2,5} -> "0-2,5"
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", ids[i]) : fmt::format("{}-{}", ids[i], ids[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string grouped(double value) {  // 78405 -> "78,405"
  std::string digits = fmt::format("{:.0f}", value), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

std::string plan_in_words(const TrainingConfig& t) {
  std::string s =
      fmt::format("tensor {} × context {} × pipeline {} × data {}", t.tp, t.cp, t.pp, t.dp);
  if (t.ep > 1) s += fmt::format(" (expert {})", t.ep);
  if (t.vpp > 1) s += fmt::format(", {} virtual stages per device", t.vpp);
  const std::string recompute =
      t.recompute == Recompute::kFull && t.recompute_layers > 0
          ? fmt::format("full recomputation of {} layers per stage", t.recompute_layers)
          : "recompute " + recompute_text(t);
  s += fmt::format(", micro-batch {} ({} per pipeline per iteration), {}{}, ZeRO {}{}",
                   t.micro_batch, t.microbatches(), recompute,
                   t.sequence_parallel ? ", sequence parallel" : "", t.zero_stage,
                   t.overlap_grad_reduce ? ", gradient reduction overlapped" : "");
  if (t.tp_comm_overlap) s += ", tensor-parallel communication overlapped";
  if (t.overlap_p2p_comm) s += ", pipeline sends overlapped";
  if (t.overlap_param_gather) s += ", parameter gather overlapped";
  if (t.fp8_param_gather) s += ", FP8 parameters";
  if (t.moe_shared_expert_overlap) s += ", shared experts overlapping the all-to-all";
  if (t.shard_group > 0) s += fmt::format(", sharded within groups of {} (HSDP)", t.shard_group);
  if (t.etp == 1) s += ", experts whole (expert tensor parallel 1)";
  if (t.etp > 1) s += fmt::format(", experts split {} ways (expert tensor parallel)", t.etp);
  s += fmt::format(" ({} stack)", stack_text(t.stack));
  return s;
}

std::string transformer_words(const TransformerPlanRequest& request,
                              const TransformerPlanResult& answer, bool showcase) {
  std::string out;
  const TransformerConfig& model = request.model;
  const Cluster& cluster = request.cluster;
  const std::string& preset = request.cluster_name;
  const LlmSearchSettings& s = request.settings;
  const LlmSearchResult& r = answer.search;
  const std::vector<double>& simulated = answer.simulated_s;
  const DeviceType& device = cluster.device_types[0];
  const LlmCandidate& best = r.top[0];
  const AnalyticResult& b = best.result;
  const TrainingConfig& t = best.config;
  out += fmt::format(
      "{} ({:.1f} B parameters) on {} × {} of {} ({}), global batch {} sequences × {} tokens "
      "({:.2f} M tokens), {} attention\n",
      model.name, model.parameters() / 1e9, s.devices, device.name,
      format_bytes(device.memory_bytes), preset, s.global_batch, s.seq_len,
      static_cast<double>(s.global_batch * s.seq_len) / 1e6, io::attention_text(s.attention));
  out += fmt::format("searched {} configurations in {:.3f} s ({} do not fit in memory){}\n\n",
                     grouped(static_cast<double>(r.evaluated)), r.seconds,
                     grouped(static_cast<double>(r.rejected_memory)),
                     r.timed_out ? "; time limit reached, best so far" : "");
  out += "best plan: " + plan_in_words(t) + "\n";
  out += fmt::format("  iteration time    {:.3f} s predicted{}\n", b.iteration_time_s,
                     simulated[0] >= 0 ? fmt::format(" ({:.3f} s simulated)", simulated[0]) : "");
  out += fmt::format("  throughput        {} tokens/s ({} tokens/s per device)\n",
                     grouped(b.tokens_per_s), grouped(b.tokens_per_s / s.devices));
  out += fmt::format(
      "  MFU               {:.1f} % ({:.1f} TFLOP/s of model FLOPs per device; peak {:.0f} "
      "TFLOP/s)\n",
      100 * b.mfu, b.tflops_per_device, device.peak_flops_per_s / 1e12);
  const MemoryBreakdown& m = b.memory;
  out += fmt::format(
      "  memory per device {} (±{:.1f} %) of {} ({:.1f} %{}) on the fullest stage: weights {}, "
      "gradients {}, optimizer {}, activations {}, buffers {}, allocator fragmentation {}, runtime "
      "reserve {}\n",
      format_bytes(m.peak_bytes), 100 * kPeakBand, format_bytes(device.memory_bytes),
      100 * m.peak_bytes / device.memory_bytes,
      device.memory_headroom_bytes > 0
          ? fmt::format("; plans kept under {}, {} left free for the model's error",
                        format_bytes(device.memory_limit_bytes()),
                        format_bytes(device.memory_headroom_bytes))
          : "",
      format_bytes(m.weights_bytes), format_bytes(m.gradients_bytes),
      format_bytes(m.optimizer_bytes), format_bytes(m.activations_bytes),
      format_bytes(m.buffers_bytes), format_bytes(m.fragmentation_bytes),
      format_bytes(m.reserved_bytes));
  out += fmt::format("  layers per stage  {}\n", layer_split(t));
  if (r.top.size() > 1) {
    out += fmt::format("\nrunners-up{}:\n",
                       request.resimulate > 0
                           ? " (re-ranked by the simulator; simulated seconds in brackets)"
                           : "");
    if (answer.ties > 1)
      out += fmt::format(
          "  ranks 1-{} are ties: within {:.1f} % of the fastest, the {} stack's validated time "
          "error, so the model cannot order them; {}\n",
          answer.ties, 100 * answer.time_band, stack_text(t.stack),
          answer.leaner_chosen ? "the leanest of them (least memory) is recommended"
                               : "the recommended one is also the leanest");
    out += fmt::format(
        "{:>4} {:>3} {:>3} {:>3} {:>5} {:>5} {:>4} {:>3} {:>9} {:>3} {:>4} {:>3} "
        "{:>13} {:>9} {:>6} {:>11}  {}\n",
        "rank", "tp", "cp", "pp", "dp", "ep", "mb", "vpp", "recompute", "sp", "zero", "ovl",
        "iteration (s)", "tokens/s", "MFU", "memory", "layers per stage");
    for (std::size_t i = 1; i < r.top.size(); ++i) {
      const TrainingConfig& c = r.top[i].config;
      const AnalyticResult& ri = r.top[i].result;
      std::string layout = layer_split(c);
      if (simulated[i] >= 0) layout += fmt::format("  [{:.4f} s simulated]", simulated[i]);
      out += fmt::format(
          "{:>4} {:>3} {:>3} {:>3} {:>5} {:>5} {:>4} {:>3} {:>9} {:>3} {:>4} {:>3} "
          "{:>13.4f} {:>9.0f} {:>5.1f}% {:>11}  {}\n",
          i + 1, c.tp, c.cp, c.pp, c.dp, ep_text(c), c.micro_batch, c.vpp, recompute_text(c),
          c.sequence_parallel ? "yes" : "no", zero_text(c), c.overlap_grad_reduce ? "yes" : "no",
          ri.iteration_time_s, ri.tokens_per_s, 100 * ri.mfu, format_bytes(ri.memory.peak_bytes),
          layout);
    }
  }
  // The plan runs on its stack's engine (the search kept to its rules): Megatron-LM's arguments
  // in full; the others' files with --export.
  const Engine engine = stack_engine(t.stack);
  std::string args;
  std::string unexpressed;  // why the engine cannot run the plan as priced
  if (engine == Engine::kMegatronLm) {
    try {
      args = engines::megatron_arguments(model, t, devices_per_node(cluster));
    } catch (const FieldError& e) {
      unexpressed = e.what();
      if (unexpressed.rfind("export ", 0) == 0)  // "export megatron: why" → "why"
        unexpressed = unexpressed.substr(std::min(unexpressed.size(), unexpressed.find(": ") + 2));
    }
  }
  if (!unexpressed.empty()) {
    // The plan stands; only its launch cannot be written (a model Megatron-LM does not build).
    out += fmt::format("\nno Megatron-LM launch for this plan: {}\n", unexpressed);
  } else if (engine == Engine::kMegatronLm) {
    out +=
        "\nrun it with Megatron-LM (pretrain_gpt.py; data, tokenizer and optimizer "
        "arguments are yours):\n";
    for (std::size_t pos = 0; pos < args.size();) {  // one argument per line, indented
      const std::size_t nl = args.find('\n', pos);
      out.append("  ").append(args, pos, nl - pos).append("\n");
      pos = nl == std::string::npos ? args.size() : nl + 1;
    }
  } else {
    out += fmt::format("\nrun it with {} (the {} stack's engine): add --export {} for its {}\n",
                       engine_rules(engine).title, stack_text(t.stack), engine_name(engine),
                       engine == Engine::kTorchtitan ? "job file" : "launch script");
  }
  if (showcase)
    out +=
        "\nthis is the built-in example (llama3-70b; without flags on 64 × dgx-h100). Plan your "
        "own: paraplan plan --model "
        "NAME|config.json --cluster dgx-a100|dgx-h100|h200|FILE --devices N --batch B --seq-len "
        "S "
        "(paraplan plan --help; a layer model or profile as INPUT for the pipeline planner)\n";
  return out;
}

std::string mixed_transformer_words(const MixedTransformerPlanRequest& request,
                                    const MixedTransformerPlanResult& r) {
  std::string out;
  const Cluster& cluster = request.cluster;
  const MixedAnalyticModel mixed(request.model, cluster, request.calibrations, request.devices);
  std::string devices;
  for (std::size_t t = 0; t < cluster.device_types.size(); ++t) {
    const std::size_t n = mixed.devices_of_type()[t].size();
    if (n == 0) continue;
    devices += fmt::format("{}{} × {} ({}, {:.0f} TFLOP/s)", devices.empty() ? "" : " + ", n,
                           cluster.device_types[t].name,
                           format_bytes(cluster.device_types[t].memory_bytes),
                           cluster.device_types[t].peak_flops_per_s / 1e12);
  }
  const MixedSearchSettings& s = request.settings;
  out += fmt::format(
      "{} ({:.1f} B parameters) on {} of {}, global batch {} sequences × {} tokens, {} "
      "attention\n",
      request.model.name, request.model.parameters() / 1e9, devices, request.cluster_name,
      s.global_batch, s.seq_len, io::attention_text(s.attention));
  out += fmt::format(
      "searched {} pipelines over both device types in {:.3f} s ({} skipped by a bound, {} do "
      "not fit in memory)\n\n",
      grouped(static_cast<double>(r.search.evaluated)), r.search.seconds,
      grouped(static_cast<double>(r.search.pruned)),
      grouped(static_cast<double>(r.search.rejected_memory)));
  const double best = r.best_iteration_time_s;
  const auto versus = [&](double t) { return fmt::format("{:+.1f} %", 100 * (t / best - 1)); };
  if (r.best_alone) {
    const SingleTypePlan& alone = r.alone[*r.best_alone];
    out += fmt::format(
        "best plan: the {} {} alone (no pipeline over both types is faster): {}\n  iteration "
        "time {:.3f} s predicted, layers per stage {}\n",
        alone.devices, alone.device_type, plan_in_words(alone.best->config), best,
        layer_split(alone.best->config));
  } else {
    const MixedCandidate& c = r.search.top[0];
    out +=
        "best plan: one pipeline over both device types, " + mixed_knobs_in_words(c.config) + "\n";
    out += fmt::format(
        "  iteration time    {:.3f} s predicted\n  throughput        {} tokens/s\n  MFU        "
        "       {:.1f} % of the devices' summed peak ({:.1f} TFLOP/s of model FLOPs per "
        "device)\n",
        c.result.iteration_time_s, grouped(c.result.tokens_per_s), 100 * c.result.mfu,
        c.result.tflops_per_device);
    out += fmt::format("  {:>5}  {:<6} {:>3} {:>3}  {:<9} {:<11} {:>15}  {}\n", "stage", "device",
                       "tp", "dp", "layers", "devices", "s/micro-batch", "memory per device");
    for (std::size_t i = 0; i < c.result.stages.size(); ++i) {
      const MixedStage& st = c.result.stages[i];
      out +=
          fmt::format("  {:>5}  {:<6} {:>3} {:>3}  {:<9} {:<11} {:>15.5f}  {} of {}\n", i,
                      cluster.device_types[static_cast<std::size_t>(st.device_type)].name, st.tp,
                      st.dp, fmt::format("{}-{}", st.first_layer, st.first_layer + st.layers - 1),
                      id_spans(st.device_ids), st.time_per_microbatch_s,
                      format_bytes(st.memory.peak_bytes), format_bytes(st.memory_limit_bytes));
    }
  }
  out += "\ncompared with:\n";
  if (!r.search.top.empty() && r.best_alone)
    out += fmt::format("  the best pipeline over both types   {:.3f} s ({})\n",
                       r.search.top[0].result.iteration_time_s,
                       versus(r.search.top[0].result.iteration_time_s));
  for (std::size_t i = 0; i < r.alone.size(); ++i) {
    if (r.best_alone && *r.best_alone == i) continue;
    const SingleTypePlan& alone = r.alone[i];
    const std::string who = fmt::format("the {} {} alone", alone.devices, alone.device_type);
    if (alone.best)
      out += fmt::format("  {:<35} {:.3f} s ({}): {}\n", who, alone.best->result.iteration_time_s,
                         versus(alone.best->result.iteration_time_s),
                         plan_in_words(alone.best->config));
    else
      out += fmt::format("  {:<35} no plan fits\n", who);
  }
  const TypeBlindPlan& b = r.blind;
  const std::string who = fmt::format("all {} taken for {}", request.devices, b.device_type);
  if (!b.plan)
    out += fmt::format("  {:<35} no plan fits\n", who);
  else
    out += fmt::format(
        "  {:<35} {:.3f} s on these devices ({}{}; it predicts {:.3f} s), priced {}: {}\n", who,
        b.iteration_time_s, versus(b.iteration_time_s), b.fits ? "" : ", does not fit",
        b.plan->result.iteration_time_s,
        b.priced_as == "stages" ? "stage by stage on the types they land on"
                                : "at the pace of the slowest type",
        plan_in_words(b.plan->config));
  if (!r.best_alone)
    out +=
        "\nMegatron-LM and DeepSpeed give every stage the same data-parallel width; a "
        "pipeline whose widths differ by device type needs a runtime that splits each "
        "micro-batch over a stage's replicas (as `paraplan run` does for pipeline "
        "plans)\n";
  return out;
}

std::string evaluate_words(const TransformerConfig& model, const std::string& cluster_name,
                           const DeviceType& device, const TrainingConfig& t,
                           const AnalyticResult& r) {
  const MemoryBreakdown& m = r.memory;
  return fmt::format(
             "{} on {} × {} ({}), batch {} × {} tokens, micro-batch {}, tp {} cp {} pp {} dp {} "
             "ep {} vpp {}, recompute {}{}, ZeRO {}{}{}, {} attention\n",
             model.name, t.devices(), device.name, cluster_name, t.global_batch, t.seq_len,
             t.micro_batch, t.tp, t.cp, t.pp, t.dp, t.ep, t.vpp, recompute_text(t),
             t.sequence_parallel ? ", sequence parallel" : "", t.zero_stage,
             t.shard_group > 0 ? fmt::format(" sharded within groups of {} (HSDP)", t.shard_group)
                               : "",
             t.overlap_grad_reduce ? ", overlapped gradient reduction" : "",
             io::attention_text(t.attention)) +
         fmt::format("stack: {}{}{}{}{}, gradients reduced in {}{}\n", stack_text(t.stack),
                     t.tp_comm_overlap ? ", tensor-parallel overlap" : "",
                     t.overlap_p2p_comm ? ", pipeline sends overlapped" : "",
                     t.overlap_param_gather ? ", parameter gather overlapped" : "",
                     t.moe_shared_expert_overlap ? ", shared-expert overlap" : "",
                     t.bf16_gradient_reduction ? "bf16" : "fp32",
                     !precision_aware_optimizer(t)
                         ? ""
                         : fmt::format(", Adam's moments in {} (precision-aware optimizer)",
                                       optimizer_moments_text(t.optimizer_moments))) +
         fmt::format(
             "iteration time: {:.4f} s (±{:.1f} %, the {} stack's measured error)   tokens/s: "
             "{:.0f}   TFLOP/s per device: {:.1f}   MFU: {:.1f}%\n",
             r.iteration_time_s, 100 * time_band(t.stack), stack_text(t.stack), r.tokens_per_s,
             r.tflops_per_device, 100 * r.mfu) +
         fmt::format(
             "  pipeline {:.4f} s (bubble {:.4f} s), data-parallel gradient sync {:.4f} s, "
             "optimizer {:.4f} s\n",
             r.pipeline_s, r.bubble_s, r.dp_allreduce_s, r.optimizer_s) +
         fmt::format("  layers per stage: {}\n", fmt::join(r.stage_layers, ",")) +
         fmt::format(
             "memory per device (busiest stage): {} (±{:.1f} %, {:.1f} % at most: the "
             "allocator's peaks of the measured single-GPU runs) of {} ({:.1f} %{}) — {}\n",
             format_bytes(m.peak_bytes), 100 * kPeakBand, 100 * kPeakBandLargest,
             format_bytes(device.memory_bytes), 100 * m.peak_bytes / device.memory_bytes,
             device.memory_headroom_bytes > 0
                 ? fmt::format("; limit {} after {} headroom",
                               format_bytes(device.memory_limit_bytes()),
                               format_bytes(device.memory_headroom_bytes))
                 : "",
             r.fits ? "fits" : "OUT OF MEMORY") +
         fmt::format(
             "  weights {}, gradients {}, optimizer {}, activations {}, buffers {}, allocator "
             "fragmentation {}, runtime reserved {}\n",
             format_bytes(m.weights_bytes), format_bytes(m.gradients_bytes),
             format_bytes(m.optimizer_bytes), format_bytes(m.activations_bytes),
             format_bytes(m.buffers_bytes), format_bytes(m.fragmentation_bytes),
             format_bytes(m.reserved_bytes));
}

}  // namespace paraplan::api
