// The training knobs into search settings and training configurations.
#include "api/knobs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "engines/megatron_layout.h"
#include "io/transformer_json.h"
#include "ir/engine_rules.h"
#include "ir/error.h"
#include "ir/names.h"
#include "ir/units.h"

namespace paraplan::api {

namespace {

bool bare_number(const std::string& text) {
  char* end = nullptr;
  (void)std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

}  // namespace

double bytes_value(const std::string& field, const std::string& text) {
  const auto v = parse_bytes(text);
  if (!v || !(*v > 0) || !std::isfinite(*v))
    throw FieldError(field, fmt::format(": expected a positive size such as 8GiB (2^30 bytes), "
                                        "80GB (10^9 bytes) or a number of bytes, got \"{}\"",
                                        text));
  return *v;
}

double bandwidth_value(const std::string& field, const std::string& text) {
  if (bare_number(text))
    throw FieldError(field, fmt::format(" {}: give the unit, e.g. {}GB/s (10^9 bytes/s) or "
                                        "{}GiB/s (2^30 bytes/s); a bare number is ambiguous",
                                        text, text, text));
  const auto v = parse_bandwidth(text);
  if (!v || !(*v > 0) || !std::isfinite(*v))
    throw FieldError(field, fmt::format(": expected a positive rate with its unit such as 25GB/s, "
                                        "25GiB/s or 3e9B/s, got \"{}\"",
                                        text));
  return *v;
}

double flops_value(const std::string& field, const std::string& text) {
  if (bare_number(text))
    throw FieldError(field, fmt::format(" {}: give the unit, e.g. {}TFLOP/s", text, text));
  const auto v = parse_flops(text);
  if (!v || !(*v > 0) || !std::isfinite(*v))
    throw FieldError(field, fmt::format(": expected a positive rate with its unit such as "
                                        "312TFLOP/s or 1e13FLOP/s, got \"{}\"",
                                        text));
  return *v;
}

Attention attention(const std::string& text) {
  if (text.empty()) return Attention::kFlash;
  if (auto a = io::attention_from_text(text)) return *a;
  throw FieldError("attention", " must be flash or standard (got \"" + text + "\")");
}

void apply_memory_knobs(const TransformerKnobs& k, Cluster& cluster) {
  for (DeviceType& d : cluster.device_types) {
    if (!k.memory.empty()) d.memory_bytes = bytes_value("memory", k.memory);
    if (k.memory_headroom.empty()) continue;
    const std::string& h = k.memory_headroom;
    if (h.back() == '%') {
      char* end = nullptr;
      const double percent = std::strtod(h.c_str(), &end);
      if (end != h.c_str() + h.size() - 1 || !(percent >= 0 && percent < 100))
        throw FieldError(
            "memory_headroom",
            ": expected a share below 100% such as 5% or a size such as 2GiB, got \"" + h + "\"");
      d.memory_headroom_bytes = d.memory_bytes * percent / 100;
    } else {
      d.memory_headroom_bytes = bytes_value("memory_headroom", h);
      if (!(d.memory_headroom_bytes < d.memory_bytes))
        throw FieldError("memory_headroom", fmt::format(" {}: leaves no memory of the {} bytes "
                                                        "of a {}",
                                                        h, d.memory_bytes, d.name));
    }
  }
}

std::vector<DefaultTaken> defaults_taken(const std::vector<std::string>& given,
                                         const std::vector<DefaultTaken>& used) {
  std::vector<DefaultTaken> out;
  for (const DefaultTaken& d : used)
    if (std::find(given.begin(), given.end(), d.field) == given.end()) out.push_back(d);
  return out;
}

io::Json defaults_json(const std::vector<DefaultTaken>& taken) {
  io::Json out = io::Json::object();
  for (const DefaultTaken& d : taken) out[d.field] = d.value;
  return out;
}

std::string defaults_words(const std::vector<DefaultTaken>& taken) {
  if (taken.empty()) return "";
  std::string out = "defaults (not given):";
  for (std::size_t i = 0; i < taken.size(); ++i) {
    std::string flag = "--" + taken[i].field;
    std::replace(flag.begin(), flag.end(), '_', '-');
    out += fmt::format("{} {} {}", i == 0 ? "" : ",", flag, taken[i].value);
  }
  return out + "\n";
}

KnobSlot knob_slot(TransformerKnobs& k, Knob knob) {
  switch (knob) {
    case Knob::kDevices:
    case Knob::kGlobalBatch:
      return std::monostate{};
    case Knob::kMicroBatch:
      return &k.micro_batch;
    case Knob::kSeqLen:
      return &k.seq_len;
    case Knob::kTp:
      return &k.tp;
    case Knob::kCp:
      return &k.cp;
    case Knob::kPp:
      return &k.pp;
    case Knob::kDp:
      return &k.dp;
    case Knob::kEp:
      return &k.ep;
    case Knob::kEtp:
      return &k.etp;
    case Knob::kVpp:
      return &k.vpp;
    case Knob::kRecompute:
      return &k.recompute;
    case Knob::kSequenceParallel:
      return &k.sequence_parallel;
    case Knob::kZero:
      return &k.zero;
    case Knob::kShardGroup:
      return &k.shard_group;
    case Knob::kOverlapGradReduce:
      return &k.overlap_grad_reduce;
    case Knob::kAttention:
      return &k.attention;
    case Knob::kStageLayers:
      return &k.stage_layers;
    case Knob::kMoeCapacityFactor:
      return &k.moe_capacity_factor;
    case Knob::kStack:
      return &k.stack;
    case Knob::kTpCommOverlap:
      return &k.tp_comm_overlap;
    case Knob::kOverlapP2pComm:
      return &k.overlap_p2p_comm;
    case Knob::kOverlapParamGather:
      return &k.overlap_param_gather;
    case Knob::kPrecision:
      return &k.precision;
    case Knob::kFp8ParamGather:
      return &k.fp8_param_gather;
    case Knob::kGradReduceDtype:
      return &k.grad_reduce_dtype;
    case Knob::kLossDtype:
      return &k.loss_dtype;
    case Knob::kMemory:
      return &k.memory;
    case Knob::kMemoryHeadroom:
      return &k.memory_headroom;
    case Knob::kCalibration:
      return &k.calibration;
    case Knob::kCompile:
      return &k.compile;
    case Knob::kLossKernel:
      return &k.loss_kernel;
    case Knob::kOptimizerMoments:
      return &k.optimizer_moments;
    case Knob::kSharedExpertOverlap:
      return &k.shared_expert_overlap;
    case Knob::kPrecisionAwareOptimizer:
      return &k.precision_aware_optimizer;
  }
  return std::monostate{};
}

bool knob_given(TransformerKnobs& k, Knob knob) {
  const KnobType type = knob_spec(knob).type;
  return std::visit(
      [&](auto p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<decltype(p), std::monostate>)
          return false;
        else if constexpr (std::is_same_v<T, int>)
          return type == KnobType::kOnOff || knob == Knob::kZero ? *p >= 0 : *p > 0;
        else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>)
          return *p > 0;
        else if constexpr (std::is_same_v<T, bool>)
          return *p;
        else
          return !p->empty();
      },
      knob_slot(k, knob));
}

Stack stack(const std::string& text) {
  if (text.empty()) return Stack::kMegatron;
  if (auto s = stack_from_text(text)) return *s;
  throw FieldError("stack", " must be megatron, fsdp or deepspeed (got \"" + text + "\")");
}

bool fp8(const std::string& text) {
  if (text.empty() || text == "bf16") return false;
  // mxfp8: Blackwell's block-scaled FP8 recipe, priced as FP8 (the device check says where).
  if (text == "fp8" || text == "mxfp8") return true;
  throw FieldError("precision", " must be bf16, fp8 or mxfp8 (got \"" + text + "\")");
}

void check_stack_knobs(const TransformerKnobs& knobs, Stack chosen) {
  TransformerKnobs k = knobs;
  for (const KnobSpec& s : knob_table()) {
    if ((s.stacks & stack_bit(chosen)) || !knob_given(k, s.knob)) continue;
    // Megatron-Core's overlaps turned off: what every other stack does anyway.
    if (s.type == KnobType::kOnOff && s.stacks == stack_bit(Stack::kMegatron) &&
        *std::get<int*>(knob_slot(k, s.knob)) == 0)
      continue;
    const std::string stacks = fmt::format("{}", fmt::join(stacks_of(s), " or "));
    throw RuleViolation(
        {s.knob,
         "knob_needs_stack",
         "",
         fmt::format("applies to the {} stack only, not {{stack}} {}", stacks, stack_text(chosen)),
         {{"stack", std::string(stack_text(chosen))}}});
  }
}

StackChoices stack_choices(const TransformerKnobs& k) {
  auto tri = [](int v) { return v < 0 ? std::optional<bool>() : std::optional<bool>(v > 0); };
  auto bf16 = [](const char* field, const std::string& text) -> std::optional<bool> {
    if (text.empty()) return std::nullopt;
    if (text == "bf16" || text == "fp32") return text == "bf16";
    throw FieldError(field, " must be bf16 or fp32 (got \"" + text + "\")");
  };
  StackChoices c;
  c.overlap_grad_reduce = tri(k.overlap_grad_reduce);
  c.tp_comm_overlap = tri(k.tp_comm_overlap);
  c.overlap_p2p_comm = tri(k.overlap_p2p_comm);
  c.overlap_param_gather = tri(k.overlap_param_gather);
  c.fp8_param_gather = tri(k.fp8_param_gather);
  c.moe_shared_expert_overlap = tri(k.shared_expert_overlap);
  c.precision_aware_optimizer = tri(k.precision_aware_optimizer);
  c.fused_elementwise = tri(k.compile);
  c.bf16_gradient_reduction = bf16("grad_reduce_dtype", k.grad_reduce_dtype);
  if (auto loss_bf16 = bf16("loss_dtype", k.loss_dtype)) c.fp32_loss = !*loss_bf16;
  if (!k.loss_kernel.empty()) {
    if (k.loss_kernel != "eager" && k.loss_kernel != "fused")
      throw FieldError("loss_kernel", " must be eager or fused (got \"" + k.loss_kernel + "\")");
    c.fused_loss = k.loss_kernel == "fused";
  }
  if (!k.optimizer_moments.empty()) {
    const auto moments = optimizer_moments_from_text(k.optimizer_moments);
    if (!moments)
      throw FieldError("optimizer_moments",
                       " must be fp32, bf16 or fp8 (got \"" + k.optimizer_moments + "\")");
    c.optimizer_moments = *moments;
  }
  return c;
}

LlmSearchSettings search_settings(const TransformerKnobs& k, int devices, std::int64_t batch,
                                  bool uniform_stages) {
  LlmSearchSettings s;
  s.devices = devices;
  s.global_batch = batch;
  s.seq_len = k.seq_len > 0 ? k.seq_len : kDefaultSeqLen;
  if (k.tp) s.tp = k.tp;
  if (k.cp) s.cp = k.cp;
  if (k.pp) s.pp = k.pp;
  if (k.dp) s.dp = k.dp;
  if (k.ep) s.ep = k.ep;
  if (k.etp) s.etp = k.etp;
  if (k.vpp) s.vpp = k.vpp;
  if (k.micro_batch) s.micro_batch = k.micro_batch;
  if (!k.recompute.empty()) {
    const RecomputeChoice rc = parse_recompute(k.recompute);
    s.recompute = rc.kind;
    if (rc.kind == Recompute::kFull) s.recompute_layers = rc.layers;
  }
  if (k.sequence_parallel) s.sequence_parallel = true;
  if (k.zero >= 0) s.zero_stage = k.zero;
  if (k.shard_group > 0) s.shard_group = k.shard_group;
  if (k.overlap_grad_reduce >= 0) s.overlap_grad_reduce = k.overlap_grad_reduce > 0;
  s.attention = attention(k.attention);
  s.moe_capacity_factor = k.moe_capacity_factor;
  s.stack = stack(k.stack);
  check_stack_knobs(k, s.stack);
  s.stack_choices = stack_choices(k);
  s.fp8 = fp8(k.precision);
  if (!k.stage_layers.empty())
    throw FieldError("stage_layers",
                     " is a setting of evaluate; plan searches the split (uniform stages keep it "
                     "even)");
  s.balance_stages = !uniform_stages;
  search_within(s, stack_engine(s.stack));
  return s;
}

TrainingConfig training_config(const TransformerKnobs& k, int devices, std::int64_t batch,
                               const TransformerConfig* model) {
  TrainingConfig t;
  t.tp = std::max(k.tp, 1);
  t.cp = std::max(k.cp, 1);
  t.pp = std::max(k.pp, 1);
  t.ep = std::max(k.ep, 1);
  t.etp = k.etp == t.tp ? 0 : k.etp;  // the tensor-parallel size: the default
  t.vpp = std::max(k.vpp, 1);
  const int inner = t.tp * t.cp * t.pp;
  if (devices <= 0) devices = inner * std::max(k.dp, 1);
  t.dp = k.dp;
  if (t.dp == 0) {
    if (devices % inner)
      throw FieldError("devices", indivisible_devices(devices, t.tp, t.cp, t.pp));
    t.dp = devices / inner;
  }
  if (t.devices() != devices)
    throw FieldError("devices", fmt::format(" {} is not tp × cp × pp × dp = {} × {} × {} × {} = {}",
                                            devices, t.tp, t.cp, t.pp, t.dp, t.devices()));
  t.seq_len = k.seq_len > 0 ? k.seq_len : kDefaultSeqLen;
  t.micro_batch = k.micro_batch > 0 ? k.micro_batch : 1;
  t.global_batch = batch > 0 ? batch : kDefaultGlobalBatch;
  const RecomputeChoice rc = parse_recompute(k.recompute.empty() ? "full" : k.recompute);
  t.recompute = rc.kind;
  t.recompute_layers = rc.layers;
  t.sequence_parallel = k.sequence_parallel;
  t.stack = stack(k.stack);
  check_stack_knobs(k, t.stack);
  // FSDP shards everything unless told otherwise.
  t.zero_stage = k.zero >= 0 ? k.zero : (t.stack == Stack::kFsdp ? 3 : 0);
  t.shard_group = k.shard_group == t.dp * t.cp ? 0 : k.shard_group;  // every rank: full sharding
  t.attention = attention(k.attention);
  t.moe_capacity_factor = k.moe_capacity_factor;
  if (!k.stage_layers.empty()) apply_stage_layers(k.stage_layers, t);
  t.fp8 = fp8(k.precision);
  apply_stack_defaults(t, stack_choices(k), model);
  return t;
}

RecomputeChoice parse_recompute(const std::string& text) {
  if (const auto rc = io::recompute_from_text(text)) return {rc->kind, rc->layers};
  const std::string guess = nearest_name(text, {"none", "selective", "full"});
  throw FieldError("recompute",
                   " must be none, selective, full or a number of layers N >= 1 (got \"" + text +
                       "\"" + (guess.empty() ? ")" : "; did you mean \"" + guess + "\"?)"));
}

std::string recompute_text(const TrainingConfig& t) { return io::recompute_text(t); }

void apply_stage_layers(const std::string& text, TrainingConfig& t) {
  // Megatron-Core's layout notation: every (virtual) stage, the virtual stages' count from it.
  if (text.find_first_of("Et|L") != std::string::npos) {
    const int vpp = t.vpp;
    std::string error;
    if (!engines::read_layout(text, t, error))
      throw FieldError("stage_layers", fmt::format(": {} (a layout: Megatron-Core's notation, "
                                                   "e.g. Et*3|(tt|)*29,m|L, or layer counts, "
                                                   "e.g. 9,8,8,7)",
                                                   error));
    if (vpp > 1 && t.vpp != vpp)
      throw FieldError("stage_layers", fmt::format(": the layout has {} virtual stages per rank, "
                                                   "but --vpp is {}",
                                                   t.vpp, vpp));
    return;
  }
  std::vector<int> counts = parse_stage_layers(text);
  // One count per virtual stage: each rank's layers, and the virtual stages unless they are
  // the default split of those.
  if (t.vpp > 1 && t.pp > 0 && counts.size() == static_cast<std::size_t>(t.pp * t.vpp)) {
    t.stage_layers.assign(static_cast<std::size_t>(t.pp), 0);
    int layers = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      t.stage_layers[i % static_cast<std::size_t>(t.pp)] += counts[i];
      layers += counts[i];
    }
    t.virtual_stage_layers.clear();
    if (virtual_split(t, layers) != counts) t.virtual_stage_layers = counts;
    return;
  }
  t.stage_layers = std::move(counts);
}

std::vector<int> parse_stage_layers(const std::string& text) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    if (item.empty() || item.size() > 6 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      throw FieldError(
          "stage_layers",
          ": expected layer counts separated by commas, e.g. 9,8,8,7 (got \"" + text + "\")");
    out.push_back(std::stoi(item));
    pos = end + 1;
  }
  return out;
}

}  // namespace paraplan::api
