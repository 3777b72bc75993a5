// Notations: Megatron-LM megatron/core/transformer/pipeline_parallel_layer_layout.py (the layout)
// and megatron/training/arguments.py (moe_freq_type), main of August 2026.
#include "engines/megatron_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace paraplan::engines {
namespace {

constexpr std::size_t kMaxUnrolled = 1u << 20;

// Unrolls "(unit)*n" (groups) or "x*n" (single characters) as Megatron does, in that order.
bool unroll(std::string& text, bool groups, std::string& error) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::string unit(1, text[i]);
    std::size_t end = i + 1;
    if (groups && text[i] == '(') {
      const std::size_t close = text.find(')', i);
      if (close == std::string::npos) {
        error = "an unclosed parenthesis";
        return false;
      }
      unit = text.substr(i + 1, close - i - 1);
      end = close + 1;
    } else if (groups) {
      out += text[i++];
      continue;
    }
    int count = 1;
    if (end < text.size() && text[end] == '*') {
      std::size_t digits = end + 1;
      while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
        ++digits;
      if (digits == end + 1 || digits - end > 6) {
        error = "expected a count after *";
        return false;
      }
      count = std::stoi(text.substr(end + 1, digits - end - 1));
      end = digits;
    }
    for (int k = 0; k < count; ++k) {
      if (out.size() + unit.size() > kMaxUnrolled) {
        error = "unrolls to more than a million layers";
        return false;
      }
      out += unit;
    }
    i = end;
  }
  text = out;
  return true;
}

}  // namespace

bool layout_stages(const std::string& layout, int pp, std::vector<int>& stages,
                   std::string& error) {
  std::string text;
  for (char c : layout)
    if (c != ',' && c != ' ') text += c;
  if (!unroll(text, true, error) || !unroll(text, false, error)) return false;
  stages.assign(1, 0);
  int embeddings = 0, losses = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '|') {
      stages.push_back(0);
    } else if (c == 't') {
      ++stages.back();
    } else if (c == 'E') {
      embeddings += i == 0 ? 1 : 2;
    } else if (c == 'L') {
      losses += i + 1 == text.size() ? 1 : 2;
    } else if (c != 'm') {
      error = fmt::format("'{}' is not a layer (E, t, m or L)", c);
      return false;
    }
  }
  if (embeddings != 1 || losses != 1) {
    error = "expected one E first and one L last";
    return false;
  }
  if (pp < 1 || stages.size() % static_cast<std::size_t>(pp)) {
    error = fmt::format("{} stages are not a multiple of the pipeline-parallel size {}",
                        stages.size(), pp);
    return false;
  }
  return true;
}

bool read_layout(const std::string& layout, TrainingConfig& t, std::string& error) {
  std::vector<int> stages;
  if (!layout_stages(layout, t.pp, stages, error)) return false;
  const int vpp = static_cast<int>(stages.size()) / t.pp;
  if (vpp == 1) {
    t.stage_layers = stages;
    return true;
  }
  t.vpp = vpp;
  if (std::all_of(stages.begin(), stages.end(), [&](int n) { return n == stages[0]; })) {
    t.stage_layers.clear();
    t.virtual_stage_layers.clear();
    return true;
  }
  // Uneven virtual stages: each rank's layers, and the virtual stages unless they are the
  // default split of those.
  t.stage_layers.assign(static_cast<std::size_t>(t.pp), 0);
  for (std::size_t i = 0; i < stages.size(); ++i)
    t.stage_layers[i % static_cast<std::size_t>(t.pp)] += stages[i];
  t.virtual_stage_layers.clear();
  int layers = 0;
  for (int n : stages) layers += n;
  if (virtual_split(t, layers) != stages) t.virtual_stage_layers = stages;
  return true;
}

namespace {

// Megatron's pattern grammar (a Python list expression): sum := product ('+' product)*;
// product := atom ('*' count)?; atom := '[' bits ']' | '(' sum ')'.
class MoePattern {
 public:
  explicit MoePattern(const std::string& text) {
    for (char c : text)
      if (c != ' ') text_ += c;
  }
  bool parse(std::vector<int>& bits) { return sum(bits) && at_ == text_.size(); }

 private:
  bool sum(std::vector<int>& out) {
    if (!product(out)) return false;
    while (at_ < text_.size() && text_[at_] == '+') {
      ++at_;
      if (!product(out)) return false;
    }
    return true;
  }
  bool product(std::vector<int>& out) {
    std::vector<int> unit;
    if (!atom(unit)) return false;
    std::size_t count = 1;
    if (at_ < text_.size() && text_[at_] == '*') {
      const std::size_t start = ++at_;
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
      if (at_ == start || at_ - start > 6) return false;
      count = std::stoul(text_.substr(start, at_ - start));
    }
    for (std::size_t k = 0; k < count; ++k) {
      if (out.size() + unit.size() > kMaxUnrolled) return false;
      out.insert(out.end(), unit.begin(), unit.end());
    }
    return true;
  }
  bool atom(std::vector<int>& out) {
    if (at_ >= text_.size()) return false;
    if (text_[at_] == '(') {
      ++at_;
      if (!sum(out) || at_ >= text_.size() || text_[at_] != ')') return false;
      ++at_;
      return true;
    }
    if (text_[at_] != '[') return false;
    for (++at_; at_ < text_.size() && text_[at_] != ']'; ++at_) {
      if (text_[at_] == '0' || text_[at_] == '1') {
        out.push_back(text_[at_] - '0');
      } else if (text_[at_] != ',') {
        return false;
      }
    }
    if (at_ >= text_.size()) return false;
    ++at_;
    return true;
  }
  std::string text_;
  std::size_t at_ = 0;
};

}  // namespace

bool read_moe_list(const std::string& list, TransformerConfig& m, std::string& error) {
  std::vector<int> bits;
  if (!MoePattern(list).parse(bits)) {
    error = fmt::format(
        "expected N or a list expression of 0 and 1 (\"([0]*3+[1]*58)\"), got \"{}\"", list);
    return false;
  }
  if (static_cast<std::int64_t>(bits.size()) != m.num_layers) {
    error = fmt::format("{} entries, but the model has {} layers", bits.size(), m.num_layers);
    return false;
  }
  std::size_t dense = 0;
  while (dense < bits.size() && bits[dense] == 0) ++dense;
  std::size_t every = 1;
  while (dense + every - 1 < bits.size() && bits[dense + every - 1] == 0) ++every;
  for (std::size_t i = dense; i < bits.size(); ++i)
    if (bits[i] != ((i - dense) % every == every - 1 ? 1 : 0)) {
      error =
          "paraplan prices leading dense layers, then every N-th layer MoE; this list is "
          "another pattern";
      return false;
    }
  m.first_dense_layers = static_cast<std::int64_t>(dense);
  m.moe_every = static_cast<std::int64_t>(every);
  return true;
}

bool uneven_split(std::int64_t layers, int first, int last, bool embedding, bool loss,
                  TrainingConfig& t, std::string& error) {
  const int pp = std::max(t.pp, 1), vpp = std::max(t.vpp, 1);
  std::vector<int> ranks(static_cast<std::size_t>(pp));
  if (first >= 0 || last >= 0) {
    if (embedding || loss) {
      error =
          "Megatron-Core does not support a standalone embedding or loss stage with uneven "
          "first or last stages";
      return false;
    }
    if (first == 0 || last == 0) {
      error = "the first and last stages' layers must be larger than 0 (Megatron-Core)";
      return false;
    }
    const int middle = pp - (first >= 0 ? 1 : 0) - (last >= 0 ? 1 : 0);
    const std::int64_t rest = layers - std::max(first, 0) - std::max(last, 0);
    if (middle < 0 || rest < 0 || (middle == 0 ? rest != 0 : rest % middle)) {
      error = fmt::format("the other {} layers do not divide evenly over the other {} stages", rest,
                          middle);
      return false;
    }
    std::fill(ranks.begin(), ranks.end(), middle > 0 ? static_cast<int>(rest / middle) : 0);
    if (first >= 0) ranks.front() = first;
    if (last >= 0) ranks.back() = last;
    for (std::size_t r = 0; r < ranks.size(); ++r)
      if (vpp > 1 && ranks[r] % vpp) {
        error = fmt::format("stage {}'s {} layers do not split evenly over {} virtual stages", r,
                            ranks[r], vpp);
        return false;
      }
    t.stage_layers = ranks;
    t.virtual_stage_layers.clear();
    return true;
  }
  const std::int64_t counted = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
  if (counted % pp || (counted / pp) % vpp) {
    error = fmt::format(
        "{} layers (with the embedding and loss counted) do not split evenly "
        "over {} stages × {} virtual stages",
        counted, pp, vpp);
    return false;
  }
  std::vector<int> chunks(static_cast<std::size_t>(pp * vpp), static_cast<int>(counted / pp / vpp));
  if (embedding) --chunks.front();  // rank 0's first virtual stage
  if (loss) --chunks.back();        // the last rank's last virtual stage
  if (chunks.front() < 0 || chunks.back() < 0) {
    error = "not enough layers in the first or last virtual stage for the embedding or loss";
    return false;
  }
  for (int c = 0; c < pp * vpp; ++c) ranks[static_cast<std::size_t>(c % pp)] += chunks[c];
  t.stage_layers = ranks;
  if (vpp > 1)
    t.virtual_stage_layers = chunks;
  else
    t.virtual_stage_layers.clear();
  return true;
}

std::vector<std::pair<OptimizerDtypeField, std::string>> read_optimizer_dtypes(
    const OptimizerDtypes& d, TrainingConfig& t) {
  using F = OptimizerDtypeField;
  std::vector<std::pair<F, std::string>> refused;
  const std::pair<F, const std::string*> fields[] = {{F::kExpAvg, &d.exp_avg},
                                                     {F::kExpAvgSq, &d.exp_avg_sq},
                                                     {F::kMainParams, &d.main_params},
                                                     {F::kMainGrads, &d.main_grads}};
  if (!d.precision_aware) {
    for (const auto& [field, value] : fields)
      if (*value != "fp32")
        refused.emplace_back(field,
                             "Megatron-Core asserts it can only be fp32 when not using the "
                             "precision-aware optimizer (use_precision_aware_optimizer)");
    return refused;
  }
  if (d.main_params != "fp32")
    refused.emplace_back(F::kMainParams,
                         "paraplan prices the fp32 main parameters (kept as the bf16 weights' "
                         "16-bit remainders); expected fp32");
  if (d.exp_avg == "fp16" || d.exp_avg_sq == "fp16")
    refused.emplace_back(d.exp_avg == "fp16" ? F::kExpAvg : F::kExpAvgSq,
                         "paraplan prices Adam's moments in fp32, bf16 or fp8; expected one of "
                         "those");
  else if (d.exp_avg != d.exp_avg_sq)
    refused.emplace_back(F::kExpAvgSq, "paraplan prices both moments in one dtype; expected " +
                                           d.exp_avg + ", the first moment's");
  else
    t.optimizer_moments = optimizer_moments_from_text(d.exp_avg).value_or(OptimizerMoments::kFp32);
  // With fp32 moments the main parameters are still kept as remainders: a knob of its own (low-
  // precision moments imply it).
  t.precision_aware_optimizer = t.optimizer_moments == OptimizerMoments::kFp32;
  return refused;
}

std::string optimizer_dtype_name(const std::string& text) {
  std::string s = text;
  if (s.rfind("torch.", 0) == 0) s = s.substr(6);
  if (s == "fp32" || s == "float32" || s == "float") return "fp32";
  if (s == "bf16" || s == "bfloat16") return "bf16";
  if (s == "fp16" || s == "float16" || s == "half") return "fp16";
  if (s == "fp8" || s == "uint8") return "fp8";
  return "";
}

}  // namespace paraplan::engines
