// Option names and defaults: Megatron-LM megatron/training/arguments.py (core_r0.13 and main,
// 2025); torchrun's from torch/distributed/run.py.
#include "engines/megatron_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "engines/keyed_config.h"
#include "engines/megatron_layout.h"
#include "engines/megatron_options.h"
#include "engines/shell_script.h"
#include "ir/error.h"
#include "ir/names.h"

namespace paraplan::engines {
namespace {

using Word = ShellWord;  // a word and the line it is written on

std::string place(const std::string& source, int line) {
  return fmt::format("{}:{}", source, line);
}

// The words of a shell line: quotes, `\` line continuations and comments as a shell reads them.
std::vector<Word> shell_words(const std::string& text, const std::string& source) {
  std::vector<Word> out;
  std::string word;
  bool in_word = false;
  int line = 1, word_line = 1;
  auto start = [&] {
    if (!in_word) word_line = line;
    in_word = true;
  };
  auto finish = [&] {
    if (in_word) out.push_back({word, word_line});
    word.clear();
    in_word = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      i += text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n' ? 2 : 1;
      ++line;
      continue;
    }
    if (!in_word && c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '\'' || c == '"') {
      start();
      const int opened = line;
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != c; ++j) {
        if (text[j] == '\n') ++line;
        word += text[j];
      }
      if (j >= text.size()) throw Error(ErrorKind::kUsage, place(source, opened), "unclosed quote");
      i = j;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c)) || c == ';') {
      finish();
      if (c == '\n') ++line;
      continue;
    }
    start();
    word += c;
  }
  finish();
  return out;
}

bool is_assignment(const std::string& w) {
  const std::size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  return std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string closest(const std::string& option) {
  std::string best;
  std::size_t best_distance = 4;  // a typo, not another option
  for (const auto* set : {&megatron_read_options(), &megatron_ignored_options()})
    for (const std::string& known : *set)
      if (const std::size_t d = edit_distance(option, known); d < best_distance) {
        best_distance = d;
        best = known;
      }
  return best;
}

struct Option {
  std::string value;
  bool has_value = false;
  int line = 1;
};

// The options of the script, last one winning as in argparse.
// The options, read by name; a value refused is kept with the others (the read goes on with the
// default) and all are reported at once.
class Options {
 public:
  Options(std::map<std::string, Option> options, std::string source, Refusals& refusals)
      : options_(std::move(options)), source_(std::move(source)), refusals_(refusals) {}

  bool has(const std::string& name) const { return options_.count(name) > 0; }
  void fail(const std::string& name, const std::string& message) const {
    refusals_.add_at(place(source_, options_.count(name) ? options_.at(name).line : 0),
                     name + ": " + message);
  }
  // The value given; none when absent, or refused (no value, an unexpanded variable).
  std::optional<std::string> value(const std::string& name) const {
    if (!has(name)) return std::nullopt;
    const Option& o = options_.at(name);
    if (!o.has_value) {
      fail(name, "needs a value");
      return std::nullopt;
    }
    if (!o.value.empty() && o.value[0] == '$') {
      fail(name, fmt::format("\"{}\" is a shell variable; give its value", o.value));
      return std::nullopt;
    }
    return o.value;
  }
  std::string text(const std::string& name, const std::string& fallback = "") const {
    return value(name).value_or(fallback);
  }
  std::int64_t integer(const std::string& name, std::int64_t fallback,
                       std::int64_t least = 1) const {
    if (!has(name)) return fallback;
    const std::optional<std::string> given = value(name);
    if (!given) return std::max(fallback, least);
    const std::string& v = *given;
    std::int64_t x = 0;
    const bool digits = !v.empty() && v.size() <= 12 && std::all_of(v.begin(), v.end(), [](char c) {
      return c >= '0' && c <= '9';
    });
    if (digits) x = std::stoll(v);
    if (!digits || x < least) {
      fail(name, fmt::format("expected an integer >= {}, got \"{}\"", least, v));
      return std::max(fallback, least);
    }
    return x;
  }
  double number(const std::string& name, double fallback) const {
    const std::optional<std::string> given = value(name);
    if (!given) return fallback;
    const std::string& v = *given;
    try {
      std::size_t used = 0;
      const double x = std::stod(v, &used);
      if (used == v.size() && x >= 0) return x;
    } catch (const std::exception&) {
    }
    fail(name, fmt::format("expected a number >= 0, got \"{}\"", v));
    return fallback;
  }
  bool flag(const std::string& name) const {
    if (has(name) && options_.at(name).has_value)
      fail(name,
           fmt::format("is a switch; it takes no value (got \"{}\")", options_.at(name).value));
    return has(name);
  }
  std::string choice(const std::string& name, const std::string& fallback,
                     const std::vector<std::string>& valid) const {
    const std::string v = text(name, fallback);
    if (std::find(valid.begin(), valid.end(), v) == valid.end()) {
      std::string list;
      for (const auto& x : valid) list += (list.empty() ? "" : ", ") + x;
      fail(name, fmt::format("expected one of {}, got \"{}\"", list, v));
      return fallback;
    }
    return v;
  }
  void missing(const std::string& name, const std::string& why) const {
    refusals_.add_at(source_, fmt::format("{} is missing ({})", name, why));
  }

 private:
  std::map<std::string, Option> options_;
  std::string source_;
  Refusals& refusals_;
};

TransformerConfig model_of(const Options& o) {
  TransformerConfig m;
  m.name = "megatron-args";
  m.num_layers = o.integer("--num-layers", 0);
  m.hidden_size = o.integer("--hidden-size", 0);
  m.num_attention_heads = o.integer("--num-attention-heads", 0);
  if (m.hidden_size % m.num_attention_heads && !o.has("--kv-channels"))
    o.fail("--hidden-size", fmt::format("{} is not divisible by {} heads; give --kv-channels",
                                        m.hidden_size, m.num_attention_heads));
  m.head_dim = o.integer("--kv-channels", m.hidden_size / m.num_attention_heads);
  m.num_kv_heads = o.flag("--group-query-attention") ? o.integer("--num-query-groups", 1)
                                                     : m.num_attention_heads;
  m.gated_mlp = o.flag("--swiglu");
  // Megatron's default MLP width: 4h, or with SwiGLU 8h/3 rounded down to a multiple of 64.
  const std::int64_t default_ffn =
      m.gated_mlp ? (8 * m.hidden_size / 3) / 64 * 64 : 4 * m.hidden_size;
  m.ffn_hidden_size = o.integer("--ffn-hidden-size", default_ffn);
  m.tied_embeddings = !o.flag("--untie-embeddings-and-output-weights");
  const std::string positions =
      o.flag("--use-rotary-position-embeddings")
          ? "rope"
          : o.choice("--position-embedding-type", "learned_absolute",
                     {"learned_absolute", "rope", "mrope", "relative", "none"});
  // --no-position-embedding drops the learned table (Megatron's add_position_embedding).
  m.learned_positions = positions == "learned_absolute" && !o.flag("--no-position-embedding");
  m.max_positions = o.integer("--max-position-embeddings", 0);
  m.partial_rotary = o.number("--rotary-percent", 1.0);
  if (!m.learned_positions) m.rotary_base = o.integer("--rotary-base", 10000);
  m.biases = !o.flag("--disable-bias-linear");
  m.attention_bias = o.flag("--add-qkv-bias") || m.biases;
  m.qk_norm = o.flag("--qk-layernorm");
  // RMSNorm has no shift; LayerNorm's shift is priced as the linear layers' biases are.
  o.choice("--normalization", "LayerNorm", {"LayerNorm", "RMSNorm"});
  m.mtp_layers = o.integer("--mtp-num-layers", 0, 0);
  m.dropout = o.number("--attention-dropout", 0.1) > 0 || o.number("--hidden-dropout", 0.1) > 0;
  // The vocabulary: a tokenizer of a fixed vocabulary builds it whatever --vocab-size says
  // (Megatron's GPT-2 BPE and Llama 2 SentencePiece tokenizers); the null tokenizer takes
  // --vocab-size, and one read from a file (Hugging Face, SentencePiece, tiktoken) is taken to
  // be --vocab-size's, the only figure the arguments give.
  // With neither a tokenizer type nor a size, GPT-2's vocabulary and merge files mean its BPE
  // (the tokenizer of Megatron-LM's GPT-3 example).
  const bool gpt2_files = o.has("--vocab-file") && o.has("--merge-file");
  const std::string tokenizer =
      o.text("--tokenizer-type", !o.has("--vocab-size") && gpt2_files ? "GPT2BPETokenizer" : "");
  std::int64_t vocab = tokenizer == "GPT2BPETokenizer"  ? 50257
                       : tokenizer == "Llama2Tokenizer" ? 32000
                                                        : o.integer("--vocab-size", 0);
  if (vocab == 0)
    o.missing("--vocab-size",
              "the tokenizer's vocabulary is not in the arguments; add "
              "--vocab-size N, or give the model with --model instead");
  // Megatron pads the vocabulary to a multiple of this × tp (done where tp is known: the api).
  m.vocab_size = vocab;
  m.num_experts = o.integer("--num-experts", 0);
  if (m.num_experts > 0) {
    m.experts_per_token = o.integer("--moe-router-topk", 2);
    m.expert_ffn_hidden_size = o.integer("--moe-ffn-hidden-size", m.ffn_hidden_size);
    m.shared_expert_ffn_hidden_size = o.integer("--moe-shared-expert-intermediate-size", 0);
    m.shared_experts = m.shared_expert_ffn_hidden_size > 0 ? 1 : 0;
    // --moe-layer-freq N (every N-th layer) or Python's "([0]*K+[1]*M)": K leading dense.
    const std::string freq = o.text("--moe-layer-freq", "1");
    if (std::all_of(freq.begin(), freq.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      m.moe_every = o.integer("--moe-layer-freq", 1);
    } else if (std::string error; !read_moe_list(freq, m, error)) {
      o.fail("--moe-layer-freq", error);
    }
  }
  if (o.flag("--multi-latent-attention")) {
    m.q_lora_rank = o.integer("--q-lora-rank", 0, 0);
    m.kv_lora_rank = o.integer("--kv-lora-rank", 512);
    m.qk_nope_head_dim = o.integer("--qk-head-dim", 128);
    m.qk_rope_head_dim = o.integer("--qk-pos-emb-head-dim", 64);
    m.v_head_dim = o.integer("--v-head-dim", 128);
    m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  }
  return m;
}

// An uneven pipeline: Megatron-Core's layout, or the first and last stages' layer counts.
void read_stage_split(const Options& o, TrainingConfig& t) {
  if (o.has("--pipeline-model-parallel-layout")) {
    std::string error;
    if (t.vpp > 1 || o.has("--num-layers-per-virtual-pipeline-stage"))
      o.fail("--pipeline-model-parallel-layout",
             "Megatron-LM takes no virtual-stage option beside a layout");
    else if (!read_layout(o.text("--pipeline-model-parallel-layout"), t, error))
      o.fail("--pipeline-model-parallel-layout", error);
    return;
  }
  const bool first = o.has("--decoder-first-pipeline-num-layers"),
             last = o.has("--decoder-last-pipeline-num-layers");
  const bool embedding = o.flag("--account-for-embedding-in-pipeline-split"),
             loss = o.flag("--account-for-loss-in-pipeline-split");
  if (embedding || loss) {  // the embedding and the loss counted as layers of an even split
    const char* key = embedding ? "--account-for-embedding-in-pipeline-split"
                                : "--account-for-loss-in-pipeline-split";
    std::string error;
    if (first || last)
      o.fail(key,
             "Megatron-Core does not support a standalone embedding or loss stage with "
             "uneven first or last stages");
    else if (o.has("--num-layers-per-virtual-pipeline-stage"))
      o.fail(key, "give the virtual stages with --num-virtual-stages-per-pipeline-rank beside it");
    else if (!o.has("--num-layers"))
      o.missing("--num-layers", "the embedding and the loss are counted in the layers' split");
    else if (!uneven_split(o.integer("--num-layers", 1), -1, -1, embedding, loss, t, error))
      o.fail(key, error);
    return;
  }
  if (!first && !last) return;
  if (!o.has("--num-layers"))
    return o.missing("--num-layers", "the first and last stages' layers are given, not the rest");
  std::string error;
  if (!uneven_split(
          o.integer("--num-layers", 1),
          first ? static_cast<int>(o.integer("--decoder-first-pipeline-num-layers", 1)) : -1,
          last ? static_cast<int>(o.integer("--decoder-last-pipeline-num-layers", 1)) : -1, false,
          false, t, error))
    o.fail(first ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers",
           error);
}

// Megatron-Core's optimizer dtypes (engines/megatron_layout's read_optimizer_dtypes).
void read_optimizer_dtypes(const Options& o, TrainingConfig& t) {
  const std::vector<std::string> dtypes = {"fp32", "fp16", "bf16", "fp8"};
  OptimizerDtypes d;
  d.precision_aware = o.flag("--use-precision-aware-optimizer");
  d.exp_avg = o.choice("--exp-avg-dtype", "fp32", dtypes);
  d.exp_avg_sq = o.choice("--exp-avg-sq-dtype", "fp32", dtypes);
  d.main_params = o.choice("--main-params-dtype", "fp32", {"fp32", "fp16"});
  d.main_grads = o.choice("--main-grads-dtype", "fp32", {"fp32", "bf16"});
  for (const auto& [field, why] : read_optimizer_dtypes(d, t))
    o.fail(field == OptimizerDtypeField::kExpAvg       ? "--exp-avg-dtype"
           : field == OptimizerDtypeField::kExpAvgSq   ? "--exp-avg-sq-dtype"
           : field == OptimizerDtypeField::kMainParams ? "--main-params-dtype"
                                                       : "--main-grads-dtype",
           why);
  // bf16 main gradients: Megatron-LM then accumulates and reduces in bf16 (arguments.py leaves
  // accumulate_allreduce_grads_in_fp32 off), the DDP buffer in bf16 as --grad-reduce-in-bf16.
  if (d.main_grads == "bf16") t.bf16_gradient_reduction = true;
}

// What Megatron-LM's validate_args asserts of these options (megatron/training/arguments.py),
// refused here rather than after the job is queued.
// `deepspeed`: Megatron-DeepSpeed's validate_args, which has no divisibility assertion (DeepSpeed's
// pipeline engine splits the layers itself).
void megatron_asserts(const Options& o, const TrainingConfig& t, bool deepspeed) {
  if (t.overlap_param_gather && !(t.zero_stage >= 1 && t.overlap_grad_reduce))
    o.fail("--overlap-param-gather",
           "Megatron-LM runs it only with --use-distributed-optimizer and --overlap-grad-reduce");
  if (t.tp_comm_overlap && !(t.sequence_parallel && t.tp > 1))
    o.fail("--tp-comm-overlap",
           "Megatron-LM overlaps tensor-parallel communication only with --sequence-parallel "
           "and --tensor-model-parallel-size above 1");
  if (t.cp > 1 && t.seq_len % (2 * t.cp))
    o.fail("--context-parallel-size",
           fmt::format("Megatron-LM needs --seq-length a multiple of 2 × {} (got {})", t.cp,
                       t.seq_len));
  const std::int64_t experts = o.integer("--num-experts", 0, 0);
  if (t.ep > 1 && (experts == 0 || experts % t.ep))
    o.fail("--expert-model-parallel-size",
           fmt::format("Megatron-LM needs --num-experts a multiple of {} (got {})", t.ep, experts));
  const std::int64_t layers = o.integer("--num-layers", 0, 0);
  const bool uneven = o.has("--pipeline-model-parallel-layout") ||
                      o.has("--decoder-first-pipeline-num-layers") ||
                      o.has("--decoder-last-pipeline-num-layers") ||
                      o.has("--account-for-embedding-in-pipeline-split") ||
                      o.has("--account-for-loss-in-pipeline-split");  // refused there if wrong
  if (layers > 0 && !uneven && !deepspeed && layers % t.pp)
    o.fail("--pipeline-model-parallel-size",
           fmt::format("Megatron-LM asserts \"Number of layers should be divisible by the "
                       "pipeline-model-parallel size\" ({} layers, {} stages); give "
                       "--pipeline-model-parallel-layout for uneven stages",
                       layers, t.pp));
}

TrainingConfig training_of(const Options& o, LaunchConfig& out, bool deepspeed) {
  TrainingConfig t;
  t.stack = Stack::kMegatron;
  // fp16 mixed precision keeps the bytes of bf16's (16-bit weights and activations, fp32 main
  // parameters and gradients) and runs at the same tensor-core rate; its loss scaling costs a
  // check per step. Priced as bf16.
  if (o.flag("--fp16") && o.flag("--bf16"))
    o.fail("--fp16", "and --bf16 both given; Megatron-LM takes one");
  if (!o.flag("--bf16") && !o.flag("--fp16"))
    o.missing("--bf16", "without it Megatron-LM trains in fp32, which paraplan does not price");
  for (const char* refused : {"--use-torch-fsdp2", "--cpu-offloading", "--rampup-batch-size"})
    if (o.has(refused))
      o.fail(refused, "changes time or memory in a way paraplan does not price; leave it out");
  if (o.text("--optimizer", "adam") != "adam")
    o.fail("--optimizer", "paraplan prices Adam's state; expected adam");
  t.tp = static_cast<int>(o.integer("--tensor-model-parallel-size", 1));
  t.pp = static_cast<int>(o.integer("--pipeline-model-parallel-size", 1));
  t.cp = static_cast<int>(o.integer("--context-parallel-size", 1));
  t.ep = static_cast<int>(o.integer("--expert-model-parallel-size", 1));
  if (o.has("--expert-tensor-parallel-size")) {
    const int etp = static_cast<int>(o.integer("--expert-tensor-parallel-size", 1));
    t.etp = etp == t.tp ? 0 : etp;
  }
  t.dp = 0;
  if (!o.has("--micro-batch-size")) o.missing("--micro-batch-size", "Megatron-LM requires it");
  t.micro_batch = o.integer("--micro-batch-size", 1);
  t.global_batch = o.integer("--global-batch-size", 0);
  const char* seq = o.has("--seq-length") ? "--seq-length" : "--encoder-seq-length";
  if (!o.has(seq)) o.missing("--seq-length", "Megatron-LM requires it");
  t.seq_len = o.integer(seq, 2048);
  t.vpp = static_cast<int>(o.integer("--num-virtual-stages-per-pipeline-rank", 1));
  out.layers_per_virtual_stage =
      static_cast<int>(o.integer("--num-layers-per-virtual-pipeline-stage", 0));
  t.sequence_parallel = o.flag("--sequence-parallel");
  const std::string granularity =
      o.flag("--recompute-activations")
          ? "selective"
          : o.choice("--recompute-granularity", "none", {"none", "full", "selective"});
  t.recompute = granularity == "full"        ? Recompute::kFull
                : granularity == "selective" ? Recompute::kSelective
                                             : Recompute::kNone;
  if (t.recompute == Recompute::kFull) {
    const std::string method = o.choice("--recompute-method", "uniform", {"uniform", "block"});
    // uniform: every layer, in chunks of N; block: the first N layers of each stage.
    t.recompute_layers =
        method == "block" ? static_cast<int>(o.integer("--recompute-num-layers", 1)) : 0;
  }
  t.zero_stage = o.flag("--use-distributed-optimizer") ? 1 : 0;
  t.overlap_grad_reduce = o.flag("--overlap-grad-reduce");
  t.overlap_param_gather = o.flag("--overlap-param-gather");
  t.tp_comm_overlap = o.flag("--tp-comm-overlap");
  t.moe_shared_expert_overlap = o.flag("--moe-shared-expert-overlap");
  t.overlap_p2p_comm = !o.flag("--no-overlap-p2p-communication");
  t.fp8 = o.has("--fp8-format");
  t.fp8_param_gather = o.flag("--fp8-param-gather");
  if (t.fp8_param_gather && !t.fp8)
    o.fail("--fp8-param-gather", "needs --fp8-format (FP8 parameters are FP8 training's)");
  if (t.fp8) o.choice("--fp8-format", "hybrid", {"e4m3", "hybrid"});
  t.bf16_gradient_reduction = o.flag("--grad-reduce-in-bf16");
  read_optimizer_dtypes(o, t);
  const std::string backend =
      o.choice("--attention-backend", "auto", {"auto", "flash", "fused", "unfused", "local"});
  t.attention =
      backend == "unfused" || backend == "local" ? Attention::kStandard : Attention::kFlash;
  t.moe_capacity_factor = o.number("--moe-expert-capacity-factor", 0);
  t.dropout = o.number("--attention-dropout", 0.1) > 0 || o.number("--hidden-dropout", 0.1) > 0;
  read_stage_split(o, t);
  megatron_asserts(o, t, deepspeed);
  out.vocab_multiple = static_cast<int>(o.integer("--make-vocab-size-divisible-by", 128));
  return t;
}

// Megatron-DeepSpeed's own spellings of Megatron-LM's options (megatron/arguments.py of
// microsoft/Megatron-DeepSpeed), and the options DeepSpeed adds; read by read_megatron_deepspeed.
const std::map<std::string, std::string> kDeepSpeedSpellings = {
    {"--num-key-value-heads", "--num-query-groups"},
    {"--rotary-position-embeddings-theta", "--rotary-base"}};
const std::set<std::string> kDeepSpeedOnly = {"--deepspeed",
                                              "--deepspeed_config",
                                              "--zero-stage",
                                              "--no-pipeline-parallel",
                                              "--checkpoint-activations",
                                              "--deepspeed-activation-checkpointing",
                                              "--use-flash-attn-v2",
                                              "--no-position-embedding",
                                              "--partition-activations"};
// Megatron-DeepSpeed's options of an older Megatron-LM that cost nothing: its indexed dataset's
// format, the attention scores' scaling and the norms' epsilon (numerics). Megatron-LM d98e8a6's
// parser has none of them (--norm-epsilon is its spelling): they are read in this dialect alone.
const std::set<std::string> kDeepSpeedIgnored = {"--data-impl", "--no-query-key-layer-scaling",
                                                 "--apply-query-key-layer-scaling",
                                                 "--layernorm-epsilon"};

// The arguments; with `deepspeed`, in Megatron-DeepSpeed's dialect, its own options into `extra`.
LaunchConfig read_args(const std::string& text, const std::string& source, bool deepspeed,
                       std::map<std::string, Option>* extra) {
  // A script that sets variables and arrays and launches with them: its launch as bash runs it;
  // a plain list of arguments: its words.
  std::vector<Word> words;
  if (const auto launch = launch_command(text, source))
    for (const ShellWord& w : launch->words) words.push_back({w.text, w.line});
  else
    words = shell_words(text, source);
  LaunchConfig out;
  out.format = "megatron";
  out.source = source;
  std::size_t i = 0;
  // A launcher (torchrun, python -m torch.distributed.run, python; environment assignments,
  // `export`) before the script; without a script every word is the script's.
  std::size_t script = words.size();
  for (std::size_t j = 0; j < words.size(); ++j)
    if (ends_with(words[j].text, ".py")) {
      script = j;
      break;
    }
  for (std::size_t j = 0; j < script && script < words.size(); ++j)
    if (is_assignment(words[j].text)) out.environment.push_back(words[j].text);
  if (script < words.size()) {  // torchrun's (or the deepspeed launcher's) world size
    out.world_size = launcher_world_size(words, i, script, source);
    i = script + 1;
  }
  std::map<std::string, Option> options;
  Refusals refused(source, "options");  // every refusal, reported at once
  for (; i < words.size(); ++i) {
    std::string name = words[i].text;
    Option option{"", false, words[i].line};
    if (name.rfind("--", 0) != 0)
      throw Error(ErrorKind::kUsage, place(source, words[i].line),
                  fmt::format("expected an option (--name), got \"{}\"", name));
    if (const std::size_t eq = name.find('='); eq != std::string::npos) {
      option.value = name.substr(eq + 1);
      option.has_value = true;
      name = name.substr(0, eq);
    } else if (i + 1 < words.size() && words[i + 1].text.rfind("--", 0) != 0) {
      option.value = words[++i].text;
      option.has_value = true;
      // Options of several values (nargs="+", or a quoted list split by the shell's
      // expansion): the further values belong to it when paraplan does not read it.
      if (!megatron_read_options().count(name))
        while (i + 1 < words.size() && words[i + 1].text.rfind("--", 0) != 0)
          option.value += " " + words[++i].text;
    }
    if (deepspeed && kDeepSpeedOnly.count(name)) {
      out.read.push_back(name);
      (*extra)[name] = option;
      continue;
    }
    if (deepspeed && name == "--normalization")  // lower case in Megatron-DeepSpeed
      option.value = option.value == "rmsnorm"     ? "RMSNorm"
                     : option.value == "layernorm" ? "LayerNorm"
                                                   : option.value;
    if (deepspeed && kDeepSpeedSpellings.count(name)) {
      out.read.push_back(name);
      if (name == "--num-key-value-heads")
        options["--group-query-attention"] = Option{"", false, option.line};
      options[kDeepSpeedSpellings.at(name)] = option;
      continue;
    }
    const MegatronOption* known = megatron_option(name);
    if (deepspeed && kDeepSpeedIgnored.count(name)) {
      out.ignored.push_back(name);
    } else if (megatron_read_options().count(name)) {
      out.read.push_back(name);
    } else if (megatron_ignored_options().count(name) ||
               (known && known->kind == MegatronOption::Kind::kCostless)) {
      out.ignored.push_back(name);
    } else if (known) {  // Megatron-LM's, and not priced
      refused.add_at(place(source, option.line), fmt::format("{}: {}", name, known->why));
    } else {
      const std::string near = closest(name);
      refused.add_at(place(source, option.line),
                     fmt::format("{}: not an option of {}'s pretrain_gpt.py{}", name,
                                 deepspeed ? "Megatron-DeepSpeed" : "Megatron-LM (d98e8a6)",
                                 near.empty() ? "" : fmt::format("; did you mean {}?", near)));
    }
    options[name] = option;
  }
  if (options.empty())
    throw Error(ErrorKind::kUsage, source, "no Megatron-LM arguments (--num-layers, ...) found");
  const Options o(std::move(options), source, refused);
  if (o.has("--num-layers") || o.has("--hidden-size") || o.has("--num-attention-heads")) {
    bool whole = true;
    for (const char* needed : {"--num-layers", "--hidden-size", "--num-attention-heads"})
      if (!o.has(needed)) {
        o.missing(needed, "the arguments give part of the model's shape");
        whole = false;
      }
    if (whole) out.model = model_of(o);
  }
  out.training = training_of(o, out, deepspeed);
  refused.raise();  // every refusal at once: options unknown or not priced, values refused
  return out;
}

}  // namespace

LaunchConfig read_megatron_args(const std::string& text, const std::string& source) {
  return read_args(text, source, false, nullptr);
}

LaunchConfig read_megatron_deepspeed_args(const std::string& text, const std::string& source,
                                          std::map<std::string, std::string>& deepspeed_options) {
  std::map<std::string, Option> extra;
  LaunchConfig out = read_args(text, source, true, &extra);
  for (const auto& [name, option] : extra) deepspeed_options[name] = option.value;
  return out;
}

std::vector<std::pair<std::string, std::string>> megatron_searched_options(
    const TransformerConfig& model, const TrainingConfig& t) {
  std::vector<std::pair<std::string, std::string>> out;
  auto num = [](auto v) { return fmt::format("{}", v); };
  out.emplace_back(spelled(Knob::kTp, Engine::kMegatronLm), num(t.tp));
  out.emplace_back(spelled(Knob::kPp, Engine::kMegatronLm), num(t.pp));
  out.emplace_back(spelled(Knob::kCp, Engine::kMegatronLm), num(t.cp));
  if (model.moe()) out.emplace_back(spelled(Knob::kEp, Engine::kMegatronLm), num(t.ep));
  if (t.vpp > 1) out.emplace_back(spelled(Knob::kVpp, Engine::kMegatronLm), num(t.vpp));
  out.emplace_back(spelled(Knob::kMicroBatch, Engine::kMegatronLm), num(t.micro_batch));
  if (t.sequence_parallel)
    out.emplace_back(spelled(Knob::kSequenceParallel, Engine::kMegatronLm), "");
  if (t.recompute == Recompute::kSelective)
    out.emplace_back(spelled(Knob::kRecompute, Engine::kMegatronLm), "selective");
  if (t.recompute == Recompute::kFull) {
    out.emplace_back(spelled(Knob::kRecompute, Engine::kMegatronLm), "full");
    out.emplace_back("--recompute-method", t.recompute_layers > 0 ? "block" : "uniform");
    out.emplace_back("--recompute-num-layers",
                     num(t.recompute_layers > 0 ? t.recompute_layers : 1));
  }
  if (t.zero_stage >= 1) out.emplace_back(spelled(Knob::kZero, Engine::kMegatronLm), "");
  if (t.overlap_grad_reduce)
    out.emplace_back(spelled(Knob::kOverlapGradReduce, Engine::kMegatronLm), "");
  if (t.overlap_param_gather)
    out.emplace_back(spelled(Knob::kOverlapParamGather, Engine::kMegatronLm), "");
  if (t.tp_comm_overlap) out.emplace_back(spelled(Knob::kTpCommOverlap, Engine::kMegatronLm), "");
  if (t.vpp > 1 && !t.overlap_p2p_comm)
    out.emplace_back(spelled(Knob::kOverlapP2pComm, Engine::kMegatronLm), "");
  if (t.bf16_gradient_reduction)
    out.emplace_back(spelled(Knob::kGradReduceDtype, Engine::kMegatronLm), "");
  if (t.fp8_param_gather) out.emplace_back(spelled(Knob::kFp8ParamGather, Engine::kMegatronLm), "");
  if (t.moe_shared_expert_overlap)
    out.emplace_back(spelled(Knob::kSharedExpertOverlap, Engine::kMegatronLm), "");
  if (t.optimizer_moments != OptimizerMoments::kFp32)
    out.emplace_back(spelled(Knob::kOptimizerMoments, Engine::kMegatronLm),
                     std::string(optimizer_moments_text(t.optimizer_moments)));
  if (t.precision_aware_optimizer)
    out.emplace_back(spelled(Knob::kPrecisionAwareOptimizer, Engine::kMegatronLm), "");
  return out;
}

}  // namespace paraplan::engines
