#include "io/transformer_json.h"

#include <fmt/format.h>

#include "io/calibration_file.h"
#include "io/native_json.h"
#include "ir/training_rules.h"

namespace paraplan::io {

namespace {

// The fields beyond the dense and MoE basics, written only when they differ from the default
// (a plan of a plain model reads as before; one of DeepSeek, Gemma or GPT-OSS keeps what was
// priced), read back with the same defaults.
void put_extras(const TransformerConfig& m, Json& j) {
  const TransformerConfig d;
  const auto put = [&j](const char* key, const auto& value, const auto& default_value) {
    if (value != default_value) j[key] = value;
  };
  put("dropout", m.dropout, d.dropout);
  put("moe_every", m.moe_every, d.moe_every);
  put("expert_biases", m.expert_biases, d.expert_biases);
  put("q_lora_rank", m.q_lora_rank, d.q_lora_rank);
  put("kv_lora_rank", m.kv_lora_rank, d.kv_lora_rank);
  put("qk_nope_head_dim", m.qk_nope_head_dim, d.qk_nope_head_dim);
  put("qk_rope_head_dim", m.qk_rope_head_dim, d.qk_rope_head_dim);
  put("v_head_dim", m.v_head_dim, d.v_head_dim);
  put("attention_bias", m.attention_bias, d.attention_bias);
  put("qk_norm", m.qk_norm, d.qk_norm);
  put("attention_sinks", m.attention_sinks, d.attention_sinks);
  put("sliding_window", m.sliding_window, d.sliding_window);
  put("sliding_window_layers", m.sliding_window_layers, d.sliding_window_layers);
  put("attention_softcap", m.attention_softcap, d.attention_softcap);
  put("logit_softcap", m.logit_softcap, d.logit_softcap);
  put("partial_rotary", m.partial_rotary, d.partial_rotary);
  put("rotary_base", m.rotary_base, d.rotary_base);
  put("alibi", m.alibi, d.alibi);
  put("mtp_layers", m.mtp_layers, d.mtp_layers);
}

void get_extras(const JsonObject& o, TransformerConfig& m) {
  constexpr long long kMax = 1LL << 40;
  const auto flag = [&](std::string_view key, bool& out) {
    if (!o.has(key)) return;
    if (!o.field(key).is_boolean()) o.fail(key, "must be true or false");
    out = o.field(key).get<bool>();
  };
  const auto count = [&](std::string_view key, std::int64_t& out, long long min, long long max) {
    if (o.has(key)) out = o.integer(key, min, max);
  };
  flag("dropout", m.dropout);
  count("moe_every", m.moe_every, 1, 1 << 20);
  flag("expert_biases", m.expert_biases);
  count("q_lora_rank", m.q_lora_rank, 0, kMax);
  count("kv_lora_rank", m.kv_lora_rank, 0, kMax);
  count("qk_nope_head_dim", m.qk_nope_head_dim, 0, kMax);
  count("qk_rope_head_dim", m.qk_rope_head_dim, 0, kMax);
  count("v_head_dim", m.v_head_dim, 0, kMax);
  flag("attention_bias", m.attention_bias);
  flag("qk_norm", m.qk_norm);
  flag("attention_sinks", m.attention_sinks);
  count("sliding_window", m.sliding_window, 0, kMax);
  if (o.has("sliding_window_layers")) {
    const Json& layers = o.array("sliding_window_layers");
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (!layers[i].is_number_integer() || layers[i].get<long long>() < 0 ||
          layers[i].get<long long>() >= m.num_layers)
        o.fail("sliding_window_layers",
               fmt::format("element {} must be a layer index from 0 to {}", i, m.num_layers - 1));
      m.sliding_window_layers.push_back(layers[i].get<int>());
    }
  }
  if (o.has("attention_softcap")) m.attention_softcap = o.number("attention_softcap");
  if (o.has("logit_softcap")) m.logit_softcap = o.number("logit_softcap");
  if (o.has("partial_rotary")) {
    m.partial_rotary = o.positive_number("partial_rotary");
    if (m.partial_rotary > 1) o.fail("partial_rotary", "must be in (0, 1]");
  }
  count("rotary_base", m.rotary_base, 0, kMax);
  flag("alibi", m.alibi);
  count("mtp_layers", m.mtp_layers, 0, 1 << 20);
}

}  // namespace

Json transformer_to_json(const TransformerConfig& m) {
  Json j{{"name", m.name},
         {"hidden_size", m.hidden_size},
         {"num_layers", m.num_layers},
         {"num_attention_heads", m.num_attention_heads},
         {"num_kv_heads", m.num_kv_heads},
         {"head_dim", m.head_dim},
         {"ffn_hidden_size", m.ffn_hidden_size},
         {"gated_mlp", m.gated_mlp},
         {"vocab_size", m.vocab_size},
         {"tied_embeddings", m.tied_embeddings},
         {"learned_positions", m.learned_positions},
         {"max_positions", m.max_positions},
         {"biases", m.biases},
         {"num_experts", m.num_experts},
         {"experts_per_token", m.experts_per_token},
         {"shared_experts", m.shared_experts},
         {"expert_ffn_hidden_size", m.expert_ffn_hidden_size},
         {"shared_expert_ffn_hidden_size", m.shared_expert_ffn_hidden_size},
         {"first_dense_layers", m.first_dense_layers}};
  put_extras(m, j);
  return j;
}

TransformerConfig transformer_from_json(const JsonObject& o) {
  o.only({"name",
          "hidden_size",
          "num_layers",
          "num_attention_heads",
          "num_kv_heads",
          "head_dim",
          "ffn_hidden_size",
          "gated_mlp",
          "vocab_size",
          "tied_embeddings",
          "learned_positions",
          "max_positions",
          "biases",
          "num_experts",
          "experts_per_token",
          "shared_experts",
          "expert_ffn_hidden_size",
          "shared_expert_ffn_hidden_size",
          "first_dense_layers",
          "dropout",
          "moe_every",
          "expert_biases",
          "q_lora_rank",
          "kv_lora_rank",
          "qk_nope_head_dim",
          "qk_rope_head_dim",
          "v_head_dim",
          "attention_bias",
          "qk_norm",
          "attention_sinks",
          "sliding_window",
          "sliding_window_layers",
          "attention_softcap",
          "logit_softcap",
          "partial_rotary",
          "rotary_base",
          "alibi",
          "mtp_layers"});
  auto flag = [&](std::string_view key) {
    const Json& v = o.field(key);
    if (!v.is_boolean()) o.fail(key, "must be true or false");
    return v.get<bool>();
  };
  constexpr long long kMax = 1LL << 40;
  TransformerConfig m;
  m.name = o.string("name");
  m.hidden_size = o.integer("hidden_size", 1, kMax);
  m.num_layers = o.integer("num_layers", 1, 1 << 20);
  m.num_attention_heads = o.integer("num_attention_heads", 1, 1 << 20);
  m.num_kv_heads = o.integer("num_kv_heads", 1, m.num_attention_heads);
  m.head_dim = o.integer("head_dim", 1, kMax);
  m.ffn_hidden_size = o.integer("ffn_hidden_size", 0, kMax);
  m.gated_mlp = flag("gated_mlp");
  m.vocab_size = o.integer("vocab_size", 1, kMax);
  m.tied_embeddings = flag("tied_embeddings");
  m.learned_positions = flag("learned_positions");
  m.max_positions = o.integer("max_positions", 0, kMax);
  m.biases = flag("biases");
  m.num_experts = o.integer("num_experts", 0, 1 << 20);
  m.experts_per_token = o.integer("experts_per_token", 0, m.num_experts);
  m.shared_experts = o.integer("shared_experts", 0, 1 << 20);
  m.expert_ffn_hidden_size = o.integer("expert_ffn_hidden_size", 0, kMax);
  m.shared_expert_ffn_hidden_size = o.integer("shared_expert_ffn_hidden_size", 0, kMax);
  m.first_dense_layers = o.integer("first_dense_layers", 0, m.num_layers);
  if (m.num_attention_heads % m.num_kv_heads)
    o.fail("num_kv_heads", "must divide num_attention_heads");
  get_extras(o, m);
  return m;
}

std::string recompute_text(const TrainingConfig& t) {
  switch (t.recompute) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return t.recompute_layers > 0 ? std::to_string(t.recompute_layers) : "full";
  }
  return "?";
}

std::string attention_text(Attention attention) {
  return attention == Attention::kFlash ? "flash" : "standard";
}

std::optional<RecomputeText> recompute_from_text(std::string_view text) {
  if (text == "none") return RecomputeText{Recompute::kNone, 0};
  if (text == "selective") return RecomputeText{Recompute::kSelective, 0};
  if (text == "full") return RecomputeText{Recompute::kFull, 0};
  if (!text.empty() && text.size() < 7 && text.find_first_not_of("0123456789") == text.npos &&
      std::stoi(std::string(text)) > 0)
    return RecomputeText{Recompute::kFull, std::stoi(std::string(text))};
  return std::nullopt;
}

std::optional<Attention> attention_from_text(std::string_view text) {
  if (text == "flash") return Attention::kFlash;
  if (text == "standard") return Attention::kStandard;
  return std::nullopt;
}

namespace {

// A plan file's `config` key of a knob: the knob table's (ir/knobs.h).
std::string key(Knob knob) { return std::string(knob_spec(knob).config_key); }

}  // namespace

Json training_to_json(const TrainingConfig& t) {
  Json j{{key(Knob::kDevices), t.devices()},
         {key(Knob::kGlobalBatch), t.global_batch},
         {key(Knob::kMicroBatch), t.micro_batch},
         {key(Knob::kSeqLen), t.seq_len},
         {key(Knob::kTp), t.tp},
         {key(Knob::kCp), t.cp},
         {key(Knob::kPp), t.pp},
         {key(Knob::kDp), t.dp},
         {key(Knob::kEp), t.ep},
         {key(Knob::kEtp), t.etp},
         {key(Knob::kVpp), t.vpp},
         {key(Knob::kRecompute), recompute_text(t)},
         {key(Knob::kSequenceParallel), t.sequence_parallel},
         {key(Knob::kZero), t.zero_stage},
         {key(Knob::kOverlapGradReduce), t.overlap_grad_reduce},
         {key(Knob::kAttention), attention_text(t.attention)},
         {key(Knob::kStageLayers), t.stage_layers}};
  if (!t.virtual_stage_layers.empty()) j["virtual_stage_layers"] = t.virtual_stage_layers;
  j[key(Knob::kShardGroup)] = t.shard_group;  // 0: full sharding
  if (t.moe_capacity_factor > 0)              // dropless: absent
    j[key(Knob::kMoeCapacityFactor)] = t.moe_capacity_factor;
  // The default (fp32 logits for the loss): absent.
  if (!t.fp32_loss) j[key(Knob::kLossDtype)] = false;
  if (t.fused_loss) j[key(Knob::kLossKernel)] = true;  // the default (eager): absent
  if (t.optimizer_moments != OptimizerMoments::kFp32)  // the default: absent
    j[key(Knob::kOptimizerMoments)] = std::string(optimizer_moments_text(t.optimizer_moments));
  if (t.moe_shared_expert_overlap) j[key(Knob::kSharedExpertOverlap)] = true;  // default: absent
  if (t.precision_aware_optimizer) j[key(Knob::kPrecisionAwareOptimizer)] = true;
  j[key(Knob::kStack)] = std::string(stack_text(t.stack));
  j[key(Knob::kTpCommOverlap)] = t.tp_comm_overlap;
  j[key(Knob::kOverlapP2pComm)] = t.overlap_p2p_comm;
  j[key(Knob::kOverlapParamGather)] = t.overlap_param_gather;
  j[key(Knob::kFp8ParamGather)] = t.fp8_param_gather;
  j[key(Knob::kGradReduceDtype)] = t.bf16_gradient_reduction ? "bf16" : "fp32";
  j[key(Knob::kCompile)] = t.fused_elementwise;
  j[key(Knob::kPrecision)] = t.fp8 ? "fp8" : "bf16";
  return j;
}

TrainingConfig training_from_json(const JsonObject& o) {
  // The keys: every knob the table gives a config key.
  std::vector<std::string_view> keys;
  for (const KnobSpec& s : knob_table())
    if (!s.config_key.empty()) keys.push_back(s.config_key);
  o.only(keys);
  auto flag = [&](std::string_view key) {
    const Json& v = o.field(key);
    if (!v.is_boolean()) o.fail(key, "must be true or false");
    return v.get<bool>();
  };
  // The whole numbers in the knob table's ranges, under its keys.
  auto count = [&](Knob knob) {
    const KnobSpec& s = knob_spec(knob);
    return o.integer(s.config_key, static_cast<long long>(s.min), static_cast<long long>(s.max));
  };
  TrainingConfig t;
  t.global_batch = count(Knob::kGlobalBatch);
  t.micro_batch = count(Knob::kMicroBatch);
  t.seq_len = count(Knob::kSeqLen);
  t.tp = static_cast<int>(count(Knob::kTp));
  t.cp = static_cast<int>(count(Knob::kCp));
  t.pp = static_cast<int>(count(Knob::kPp));
  t.dp = static_cast<int>(count(Knob::kDp));
  t.ep = static_cast<int>(count(Knob::kEp));
  t.vpp = static_cast<int>(count(Knob::kVpp));
  if (o.has(key(Knob::kEtp))) t.etp = static_cast<int>(count(Knob::kEtp));
  const auto rc = recompute_from_text(o.string("recompute"));
  if (!rc) o.fail("recompute", "must be none, selective, full or a number of layers");
  t.recompute = rc->kind;
  t.recompute_layers = rc->layers;
  t.sequence_parallel = flag("sequence_parallel");
  t.zero_stage = static_cast<int>(count(Knob::kZero));
  if (o.has(key(Knob::kShardGroup))) t.shard_group = static_cast<int>(count(Knob::kShardGroup));
  t.overlap_grad_reduce = flag("overlap_grad_reduce");
  // Plans written before the knob existed were priced with standard attention.
  const auto attention =
      attention_from_text(o.has("attention") ? o.string("attention") : "standard");
  if (!attention) o.fail("attention", "must be flash or standard");
  t.attention = *attention;
  if (o.has("moe_capacity_factor")) {
    const KnobSpec& cf = knob_spec(Knob::kMoeCapacityFactor);
    t.moe_capacity_factor = o.number("moe_capacity_factor");
    if (t.moe_capacity_factor != 0 &&
        !(t.moe_capacity_factor >= cf.min && t.moe_capacity_factor <= cf.max))
      o.fail("moe_capacity_factor",
             fmt::format("must be {:g} to {:g} (or 0: dropless)", cf.min, cf.max));
  }
  if (o.has("fp32_loss")) t.fp32_loss = flag("fp32_loss");
  if (o.has(key(Knob::kLossKernel))) t.fused_loss = flag(key(Knob::kLossKernel));
  if (o.has(key(Knob::kOptimizerMoments))) {
    const auto moments = optimizer_moments_from_text(o.string(key(Knob::kOptimizerMoments)));
    if (!moments) o.fail(key(Knob::kOptimizerMoments), "must be fp32, bf16 or fp8");
    t.optimizer_moments = *moments;
  }
  if (o.has(key(Knob::kSharedExpertOverlap)))
    t.moe_shared_expert_overlap = flag(key(Knob::kSharedExpertOverlap));
  if (o.has(key(Knob::kPrecisionAwareOptimizer)))
    t.precision_aware_optimizer = flag(key(Knob::kPrecisionAwareOptimizer));
  // Plans written before the stack was a knob: Megatron with nothing overlapped but the
  // gradient reduction.
  if (o.has("stack")) {
    const auto stack = stack_from_text(o.string("stack"));
    if (!stack) o.fail("stack", "must be megatron, fsdp or deepspeed");
    t.stack = *stack;
  }
  if (o.has("tp_comm_overlap")) t.tp_comm_overlap = flag("tp_comm_overlap");
  if (o.has("overlap_p2p_comm")) t.overlap_p2p_comm = flag("overlap_p2p_comm");
  if (o.has("overlap_param_gather")) t.overlap_param_gather = flag("overlap_param_gather");
  if (o.has("fp8_param_gather")) t.fp8_param_gather = flag("fp8_param_gather");
  if (o.has(key(Knob::kCompile))) t.fused_elementwise = flag(key(Knob::kCompile));
  if (o.has("precision")) {
    const std::string p = o.string("precision");
    if (p != "bf16" && p != "fp8") o.fail("precision", "must be bf16 or fp8");
    t.fp8 = p == "fp8";
  }
  if (o.has("grad_reduce_dtype")) {
    const std::string d = o.string("grad_reduce_dtype");
    if (d != "bf16" && d != "fp32") o.fail("grad_reduce_dtype", "must be bf16 or fp32");
    t.bf16_gradient_reduction = d == "bf16";
  }
  const Json& split = o.array("stage_layers");
  for (std::size_t i = 0; i < split.size(); ++i) {
    if (!split[i].is_number_integer() || split[i].get<long long>() < 1 ||
        split[i].get<long long>() > (1 << 20))
      o.fail("stage_layers", "must list positive layer counts");
    t.stage_layers.push_back(split[i].get<int>());
  }
  if (o.has("virtual_stage_layers")) {
    const Json& chunks = o.array("virtual_stage_layers");
    for (const Json& n : chunks) {
      if (!n.is_number_integer() || n.get<long long>() < 0 || n.get<long long>() > (1 << 20))
        o.fail("virtual_stage_layers", "must list layer counts of 0 or more");
      t.virtual_stage_layers.push_back(n.get<int>());
    }
  }
  if (o.has("devices") && count(Knob::kDevices) != t.devices())
    o.fail("devices", "must equal tp × cp × pp × dp = " + std::to_string(t.devices()));
  return t;
}

void add_replay_keys(Json& plan, const TransformerConfig& model, const Cluster& cluster,
                     const Calibration& calibration) {
  plan["model_config"] = transformer_to_json(model);
  plan["cluster_config"] = cluster_to_json(cluster);
  plan["calibration"] = calibration_to_json(calibration);
}

TransformerPlanFile transformer_plan_from_json(const Json& doc, const std::string& path) {
  JsonObject top(doc, path, "");
  const std::string format = top.string("format");
  if (format != "paraplan-plan" && format != "paraplan-transformer-plan")
    top.fail("format",
             "expected \"paraplan-plan\" (a plan written by `paraplan plan --model ... -o "
             "FILE`)");
  if (top.integer("version", 1, 1) != 1) top.fail("version", "expected 1");
  TransformerPlanFile f;
  f.model = transformer_from_json(top.object("model_config"));
  f.cluster = cluster_from_json(top.object("cluster_config").json(), path + " (cluster_config)");
  f.calibration = calibration_from_json(top.object("calibration").json(), path + " (calibration)");
  f.config = training_from_json(top.object("config"));
  // The plan lists the layers of every stage; the even split is the default, kept implicit.
  if (f.config.stage_layers == even_stage_split(static_cast<int>(f.model.num_layers), f.config.pp))
    f.config.stage_layers.clear();
  f.devices = f.config.devices();
  return f;
}

}  // namespace paraplan::io
