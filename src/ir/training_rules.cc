#include "ir/training_rules.h"

#include <algorithm>
#include <sstream>

namespace paraplan {
namespace {

template <typename T>
std::string str(T v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

Violation broken(Knob knob, std::string rule, std::string value, std::string text,
                 std::vector<std::pair<std::string, std::string>> values = {}) {
  return {knob, std::move(rule), std::move(value), std::move(text), std::move(values)};
}

std::string listed(const std::vector<int>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(v[i]);
  }
  return out;
}

}  // namespace

std::string Violation::render(const std::function<std::string(Knob)>& name) const {
  std::string body = text;
  for (const KnobSpec& k : knob_table()) {
    std::string token = "{";
    token += knob_field(k.knob);
    token += '}';
    for (auto at = body.find(token); at != std::string::npos; at = body.find(token, at))
      body.replace(at, token.size(), name(k.knob));
  }
  std::string out = name(knob);
  if (!value.empty()) {
    out += ' ';
    out += value;
  }
  out += ": ";
  out += body;
  return out;
}

RuleViolation::RuleViolation(Violation v)
    : Error(ErrorKind::kUsage, "", v.render([](Knob k) { return std::string(knob_field(k)); })),
      violation_(std::move(v)) {}

Error RuleViolation::in_file(const std::string& config_place) const {
  std::string place = config_place;
  place += '/';
  place += knob_field(violation_.knob);
  return Error(ErrorKind::kInput, place, what());
}

void apply_stack_defaults(TrainingConfig& t, const StackChoices& fixed,
                          const TransformerConfig* model) {
  const bool megatron = t.stack == Stack::kMegatron, fsdp = t.stack == Stack::kFsdp;
  const bool replicas = t.dp * t.cp > 1;
  t.fused_elementwise = fixed.fused_elementwise.value_or(!fsdp);
  t.overlap_grad_reduce =
      fixed.overlap_grad_reduce.value_or(replicas && t.stack != Stack::kDeepSpeed);
  t.tp_comm_overlap = fixed.tp_comm_overlap.value_or(megatron && t.tp > 1 && t.sequence_parallel);
  t.overlap_p2p_comm = fixed.overlap_p2p_comm.value_or(megatron && t.pp > 1 && t.vpp > 1);
  t.overlap_param_gather = fixed.overlap_param_gather.value_or(megatron && t.zero_stage == 1 &&
                                                               t.overlap_grad_reduce && replicas);
  t.bf16_gradient_reduction = fixed.bf16_gradient_reduction.value_or(false);
  t.fp8_param_gather = fixed.fp8_param_gather.value_or(false);
  t.fp32_loss = fixed.fp32_loss.value_or(!(fsdp && t.bf16_gradient_reduction));
  t.fused_loss = fixed.fused_loss.value_or(false);
  t.optimizer_moments = fixed.optimizer_moments.value_or(OptimizerMoments::kFp32);
  t.precision_aware_optimizer = fixed.precision_aware_optimizer.value_or(false);
  t.moe_shared_expert_overlap = fixed.moe_shared_expert_overlap.value_or(
      megatron && t.ep > 1 && model != nullptr && model->shared_experts > 0);
}

std::string_view stack_text(Stack stack) {
  switch (stack) {
    case Stack::kFsdp:
      return "fsdp";
    case Stack::kDeepSpeed:
      return "deepspeed";
    default:
      return "megatron";
  }
}

std::optional<Stack> stack_from_text(std::string_view text) {
  for (Stack s : {Stack::kMegatron, Stack::kFsdp, Stack::kDeepSpeed})
    if (stack_text(s) == text) return s;
  return std::nullopt;
}

namespace rules {

std::optional<Violation> positive(const TrainingConfig& t) {
  const std::pair<Knob, long long> all[] = {{Knob::kTp, t.tp},
                                            {Knob::kCp, t.cp},
                                            {Knob::kPp, t.pp},
                                            {Knob::kDp, t.dp},
                                            {Knob::kEp, t.ep},
                                            {Knob::kVpp, t.vpp},
                                            {Knob::kGlobalBatch, t.global_batch},
                                            {Knob::kMicroBatch, t.micro_batch},
                                            {Knob::kSeqLen, t.seq_len}};
  for (const auto& [knob, v] : all)
    if (v < 1) return broken(knob, "at_least_one", str(v), "must be at least 1");
  return std::nullopt;
}

std::optional<Violation> tensor_parallel(const TransformerConfig& m, int tp) {
  if (m.num_attention_heads % tp)
    return broken(Knob::kTp, "tp_divides_heads", str(tp),
                  "the " + str(m.num_attention_heads) +
                      " attention heads must be divisible by the "
                      "tensor-parallel size",
                  {{"attention heads", str(m.num_attention_heads)}});
  // Every stack shards the key-value heads (Megatron-Core's query groups) over the tensor-parallel
  // ranks and none replicates them: Megatron-Core and Megatron-DeepSpeed divide the groups by tp,
  // torchtitan views its local heads as n_kv_heads / tp. Multi-head latent attention has no
  // key-value heads to shard.
  if (m.kv_lora_rank == 0 && m.num_kv_heads % tp)
    return broken(Knob::kTp, "tp_divides_kv_heads", str(tp),
                  "the " + str(m.num_kv_heads) +
                      " key-value heads (query groups) must be divisible by the tensor-parallel "
                      "size: every stack shards them and none replicates them",
                  {{"key-value heads", str(m.num_kv_heads)}});
  return std::nullopt;
}

std::optional<Violation> context_parallel(std::int64_t seq_len, int cp) {
  if (cp > 1 && seq_len % (2 * cp))
    return broken(Knob::kCp, "cp_divides_sequence", str(cp),
                  "the sequence length " + str(seq_len) +
                      " must be divisible by 2 × cp (each rank "
                      "holds two chunks for causal load balance)",
                  {{"seq_len", str(seq_len)}});
  return std::nullopt;
}

std::optional<Violation> pipeline(const TransformerConfig& m, int pp) {
  if (pp > m.num_layers)
    return broken(Knob::kPp, "stage_per_layer", str(pp),
                  "more pipeline stages than the model's " + str(m.num_layers) + " layers",
                  {{"layers", str(m.num_layers)}});
  return std::nullopt;
}

std::optional<Violation> batch(std::int64_t global_batch, std::int64_t micro_batch, int dp) {
  if (global_batch % (micro_batch * dp))
    return broken(Knob::kGlobalBatch, "batch_divides", str(global_batch),
                  "the global batch must be divisible by micro-batch × data-parallel size = " +
                      str(micro_batch) + " × " + str(dp),
                  {{"micro_batch", str(micro_batch)}, {"dp", str(dp)}});
  return std::nullopt;
}

std::optional<Violation> sequence_parallel(std::int64_t seq_len, int cp, int tp) {
  if ((seq_len / cp) % tp)
    return broken(Knob::kSequenceParallel, "sequence_divides_tp", "",
                  "the sequence length per context-parallel rank " + str(seq_len / cp) +
                      " must be divisible by {tp} " + str(tp),
                  {{"seq_len", str(seq_len)}, {"cp", str(cp)}, {"tp", str(tp)}});
  return std::nullopt;
}

std::optional<Violation> experts(const TransformerConfig& m, int ep, int dp, int cp,
                                 double capacity_factor) {
  if (ep > 1 && !m.moe())
    return broken(Knob::kEp, "experts_need_moe", str(ep),
                  "expert parallelism needs a mixture-of-experts model; " + m.name + " is dense");
  if (capacity_factor != 0 && !m.moe())
    return broken(Knob::kMoeCapacityFactor, "capacity_needs_moe", str(capacity_factor),
                  "token dropping needs a mixture-of-experts model; " + m.name + " is dense");
  if (capacity_factor != 0 && !(capacity_factor >= 1))
    return broken(Knob::kMoeCapacityFactor, "capacity_at_least_one", str(capacity_factor),
                  "must be at least 1 (0: dropless)");
  if (ep > 1 && m.num_experts % ep)
    return broken(
        Knob::kEp, "ep_divides_experts", str(ep),
        "the " + str(m.num_experts) + " experts must be divisible by the expert-parallel size",
        {{"experts", str(m.num_experts)}});
  if (ep > 1 && (static_cast<long long>(dp) * cp) % ep)
    return broken(Knob::kEp, "ep_divides_dp_cp", str(ep),
                  "the expert-parallel group is carved out of dp × cp = " + str(dp) + " × " +
                      str(cp) + " and must divide it",
                  {{"dp", str(dp)}, {"cp", str(cp)}});
  return std::nullopt;
}

std::optional<Violation> expert_tensor(const TransformerConfig& m, const TrainingConfig& t) {
  if (t.etp == 0 || t.etp == t.tp) return experts(m, t.ep, t.dp, t.cp, t.moe_capacity_factor);
  if (auto v = experts(m, t.ep, t.tp * t.dp, t.cp, t.moe_capacity_factor)) {
    if (v->rule != "ep_divides_dp_cp") return v;
  }
  if (!m.moe())
    return broken(
        Knob::kEtp, "etp_needs_moe", str(t.etp),
        "expert tensor parallelism needs a mixture-of-experts model; " + m.name + " is dense");
  const long long ranks = static_cast<long long>(t.tp) * t.cp * t.dp;
  if (t.etp < 0 || ranks % (static_cast<long long>(t.ep) * t.etp))
    return broken(Knob::kEtp, "etp_ep_divide_ranks", str(t.etp),
                  "the experts' ranks of a stage are tp × cp × dp = " + str(t.tp) + " × " +
                      str(t.cp) + " × " + str(t.dp) + " = " + str(ranks) +
                      ", laid out as etp × ep × expert data parallel: etp × ep = " + str(t.etp) +
                      " × " + str(t.ep) + " must divide them",
                  {{"ep", str(t.ep)}, {"tp", str(t.tp)}});
  if (m.moe() && m.expert_ffn_hidden_size % t.etp)
    return broken(Knob::kEtp, "etp_divides_expert_ffn", str(t.etp),
                  "must divide the experts' hidden size " + str(m.expert_ffn_hidden_size));
  return std::nullopt;
}

std::optional<Violation> zero(int zero_stage, int pp, Stack stack, int shards) {
  if (zero_stage < 0 || zero_stage > 3)
    return broken(Knob::kZero, "zero_stage", str(zero_stage), "must be 0, 1, 2 or 3");
  if (zero_stage >= 2 && pp > 1 && (stack != Stack::kFsdp || shards < 2))
    return broken(Knob::kZero, "zero_without_pipeline", str(zero_stage),
                  "ZeRO stages 2 and 3 partition gradients per micro-batch and do not combine "
                  "with pipeline parallelism ({pp} " +
                      str(pp) + "); use {zero} 0 or 1",
                  {{"pp", str(pp)}});
  return std::nullopt;
}

std::optional<Violation> shard_group(const TrainingConfig& t) {
  if (t.shard_group == 0) return std::nullopt;
  const int ranks = t.dp * t.cp;
  if (t.shard_group < 0 || ranks % t.shard_group != 0)
    return broken(Knob::kShardGroup, "shard_group_divides", str(t.shard_group),
                  "must divide dp × cp = " + str(t.dp) + " × " + str(t.cp) + " = " + str(ranks),
                  {{"dp", str(t.dp)}, {"cp", str(t.cp)}});
  if (t.shard_group == ranks) return std::nullopt;
  if (t.zero_stage != 3)
    return broken(Knob::kShardGroup, "shard_group_needs_zero3", str(t.shard_group),
                  "hybrid sharding replicates ZeRO 3's sharded states; use {zero} 3");
  if (t.ep > 1)
    return broken(Knob::kShardGroup, "shard_group_without_ep", str(t.shard_group),
                  "hybrid sharding of expert-parallel experts is not priced; use {ep} 1 or "
                  "shard over every rank");
  return std::nullopt;
}

std::optional<Violation> interleaving(const TransformerConfig& m, const TrainingConfig& t) {
  if (t.vpp <= 1) return std::nullopt;
  if (t.pp < 2)
    return broken(Knob::kVpp, "vpp_needs_pipeline", str(t.vpp),
                  "interleaving needs {pp} 2 or more");
  if (t.stage_layers.empty() && m.num_layers % (static_cast<std::int64_t>(t.pp) * t.vpp))
    return broken(Knob::kVpp, "vpp_divides_layers", str(t.vpp),
                  "the " + str(m.num_layers) +
                      " layers must be divisible by pp × vpp = " + str(t.pp) + " × " + str(t.vpp),
                  {{"layers", str(m.num_layers)}, {"pp", str(t.pp)}});
  if (t.microbatches() % t.pp)
    return broken(Knob::kVpp, "vpp_microbatches", str(t.vpp),
                  "the interleaved schedule needs the micro-batches per pipeline (" +
                      str(t.microbatches()) + ") to be a multiple of {pp} " + str(t.pp),
                  {{"micro-batches", str(t.microbatches())}, {"pp", str(t.pp)}});
  return std::nullopt;
}

// A virtual layout: one entry per virtual stage, each rank's summing to its layers.
std::optional<Violation> virtual_stages(const TrainingConfig& t) {
  if (t.virtual_stage_layers.empty()) return std::nullopt;
  const std::string given = listed(t.virtual_stage_layers);
  if (t.vpp < 2 || t.stage_layers.empty())
    return broken(Knob::kStageLayers, "virtual_stages_need_vpp", given,
                  "layers per virtual stage need {vpp} 2 or more and {stage_layers}");
  const std::size_t pp = static_cast<std::size_t>(t.pp);
  if (t.virtual_stage_layers.size() != pp * static_cast<std::size_t>(t.vpp))
    return broken(Knob::kStageLayers, "one_per_virtual_stage", given,
                  str(t.virtual_stage_layers.size()) + " virtual stages given, but pp × vpp is " +
                      str(t.pp * t.vpp));
  std::vector<int> sums(pp, 0);
  for (std::size_t i = 0; i < t.virtual_stage_layers.size(); ++i) {
    if (t.virtual_stage_layers[i] < 0)
      return broken(Knob::kStageLayers, "virtual_stage_negative", given,
                    "a virtual stage holds zero layers or more");
    sums[i % pp] += t.virtual_stage_layers[i];
  }
  if (sums != t.stage_layers)
    return broken(Knob::kStageLayers, "virtual_stages_sum", given,
                  "each rank's virtual stages must sum to its layers " + listed(t.stage_layers));
  return std::nullopt;
}

std::optional<Violation> overlaps(const TrainingConfig& t) {
  const bool megatron = t.stack == Stack::kMegatron;
  if (t.tp_comm_overlap) {
    if (!megatron && t.stack != Stack::kFsdp)
      return broken(Knob::kTpCommOverlap, "overlap_needs_megatron", "",
                    "tensor-parallel communication overlap is Megatron-Core's (userbuffers) or "
                    "torchtitan's (async tensor parallelism); use {stack} megatron or fsdp");
    if (t.tp < 2 || !t.sequence_parallel)
      return broken(Knob::kTpCommOverlap, "tp_overlap_needs_sp", "",
                    "needs {tp} 2 or more and {sequence_parallel} (it overlaps the sequence-"
                    "parallel all-gathers and reduce-scatters)",
                    {{"tp", str(t.tp)}});
  }
  if (t.overlap_p2p_comm) {
    if (!megatron)
      return broken(Knob::kOverlapP2pComm, "overlap_needs_megatron", "",
                    "pipeline send overlap is Megatron-Core's; use {stack} megatron");
    if (t.vpp < 2)
      return broken(Knob::kOverlapP2pComm, "p2p_overlap_needs_interleaving", "",
                    "Megatron-Core overlaps pipeline sends in the interleaved schedule only "
                    "({vpp} 2 or more)",
                    {{"vpp", str(t.vpp)}});
  }
  if (t.fp8_param_gather) {
    if (t.stack == Stack::kDeepSpeed)
      return broken(Knob::kFp8ParamGather, "fp8_params_need_megatron", "",
                    "FP8 parameters are Transformer Engine's under Megatron-Core (or FSDP's "
                    "float8 all-gather); use {stack} megatron or fsdp");
    if (t.stack == Stack::kFsdp && t.zero_stage != 3)
      return broken(Knob::kFp8ParamGather, "fp8_gather_needs_fsdp", "",
                    "FSDP's float8 all-gather gathers sharded weights; use {zero} 3");
    if (!t.fp8)
      return broken(Knob::kFp8ParamGather, "fp8_params_need_fp8", "",
                    "FP8 parameters need FP8 matrix products ({precision} fp8)");
  }
  if (precision_aware_optimizer(t)) {
    // Named by the knob that asked for it: the moments where they are low-precision.
    const bool moments = t.optimizer_moments != OptimizerMoments::kFp32;
    const Knob knob = moments ? Knob::kOptimizerMoments : Knob::kPrecisionAwareOptimizer;
    const std::string value =
        moments ? std::string(optimizer_moments_text(t.optimizer_moments)) : "on";
    if (!megatron)
      return broken(knob, "precision_aware_optimizer_needs_megatron", value,
                    "the precision-aware optimizer (and low-precision moments) is Megatron-Core's; "
                    "use {stack} megatron");
    if (t.zero_stage != 1 && t.zero_stage != 2)
      return broken(knob, "precision_aware_optimizer_needs_distributed", value,
                    "Megatron-Core runs the precision-aware optimizer only as its distributed "
                    "optimizer ({zero} 1)",
                    {{"zero", str(t.zero_stage)}});
  }
  if (t.moe_shared_expert_overlap && !megatron)
    return broken(Knob::kSharedExpertOverlap, "shared_expert_overlap_needs_megatron", "",
                  "the shared experts' side stream is Megatron-Core's; use {stack} megatron");
  if (t.overlap_param_gather) {
    if (!megatron)
      return broken(Knob::kOverlapParamGather, "overlap_needs_megatron", "",
                    "parameter-gather overlap is Megatron-Core's distributed optimizer's; use "
                    "{stack} megatron");
    if (t.zero_stage != 1 || !t.overlap_grad_reduce)
      return broken(Knob::kOverlapParamGather, "param_gather_needs_distributed_optimizer", "",
                    "needs the distributed optimizer ({zero} 1) with the gradient reduction "
                    "overlapped",
                    {{"zero", str(t.zero_stage)}});
  }
  return std::nullopt;
}

std::optional<Violation> recomputation(const TransformerConfig& m, const TrainingConfig& t) {
  if (t.recompute_layers < 0)
    return broken(Knob::kRecompute, "recompute_layers", str(t.recompute_layers),
                  "N must be at least 0");
  if (t.recompute_layers > 0 && t.recompute != Recompute::kFull)
    return broken(Knob::kRecompute, "recompute_layers_full", str(t.recompute_layers),
                  "a number of recomputed layers applies to full recomputation only");
  if (!t.stage_layers.empty()) {
    const std::string given = listed(t.stage_layers);
    if (static_cast<int>(t.stage_layers.size()) != t.pp)
      return broken(Knob::kStageLayers, "one_per_stage", given,
                    str(t.stage_layers.size()) + " stages given, but {pp} is " + str(t.pp));
    std::int64_t sum = 0;
    for (int n : t.stage_layers) {
      if (n < 1)
        return broken(Knob::kStageLayers, "stage_not_empty", given,
                      "every stage needs at least one layer");
      sum += n;
    }
    if (sum != m.num_layers)
      return broken(
          Knob::kStageLayers, "layers_sum", given,
          "they sum to " + str(sum) + ", but the model has " + str(m.num_layers) + " layers",
          {{"sum", str(sum)}, {"layers", str(m.num_layers)}});
  }
  if (t.recompute_layers > 0) {
    const std::vector<int> split = t.stage_layers.empty()
                                       ? even_stage_split(static_cast<int>(m.num_layers), t.pp)
                                       : t.stage_layers;
    const int chunk = *std::min_element(split.begin(), split.end()) / t.vpp;
    if (t.recompute_layers > chunk)
      return broken(Knob::kRecompute, "recompute_within_stage", str(t.recompute_layers),
                    "more than the " + str(chunk) + " layers of the smallest (virtual) stage",
                    {{"layers", str(chunk)}});
  }
  return std::nullopt;
}

std::optional<Violation> devices(const TrainingConfig& t, int cluster_devices) {
  if (t.devices() > cluster_devices)
    return broken(Knob::kDevices, "devices_fit_cluster", str(t.devices()),
                  "tp × cp × pp × dp = " + str(t.tp) + " × " + str(t.cp) + " × " + str(t.pp) +
                      " × " + str(t.dp) + " = " + str(t.devices()) +
                      " devices, but the cluster has " + str(cluster_devices),
                  {{"cluster devices", str(cluster_devices)}});
  return std::nullopt;
}

}  // namespace rules

std::optional<Violation> check_training(const TransformerConfig& m, const TrainingConfig& t,
                                        int cluster_devices) {
  if (auto v = rules::positive(t)) return v;
  if (auto v = rules::tensor_parallel(m, t.tp)) return v;
  if (auto v = rules::pipeline(m, t.pp)) return v;
  if (auto v = rules::batch(t.global_batch, t.micro_batch, t.dp)) return v;
  if (auto v = rules::devices(t, cluster_devices)) return v;
  if (auto v = rules::context_parallel(t.seq_len, t.cp)) return v;
  if (t.sequence_parallel)
    if (auto v = rules::sequence_parallel(t.seq_len, t.cp, t.tp)) return v;
  if (auto v = rules::expert_tensor(m, t)) return v;
  if (t.moe_shared_expert_overlap && m.shared_experts == 0)
    return broken(Knob::kSharedExpertOverlap, "shared_expert_overlap_needs_shared_experts", "",
                  "overlaps shared experts; " + m.name + " has none");
  if (auto v = rules::zero(t.zero_stage, t.pp, t.stack, t.dp * t.cp)) return v;
  if (auto v = rules::shard_group(t)) return v;
  if (auto v = rules::interleaving(m, t)) return v;
  if (auto v = rules::recomputation(m, t)) return v;
  if (auto v = rules::virtual_stages(t)) return v;
  if (auto v = rules::overlaps(t)) return v;
  return std::nullopt;
}

}  // namespace paraplan
