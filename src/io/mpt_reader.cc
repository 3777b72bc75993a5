// Reading llm-foundry's benchmark rows into measured runs (docs/cost-models.md, "Validation").
#include "io/mpt_reader.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "io/json_fields.h"
#include "ir/error.h"

namespace paraplan::io {
namespace {

constexpr double kGiB = 1073741824.0;

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

std::vector<std::string> split_fields(const std::string& line, char separator) {
  std::vector<std::string> out;
  std::string cell;
  std::stringstream in(line);
  while (std::getline(in, cell, separator)) out.push_back(trimmed(cell));
  if (!line.empty() && line.back() == separator) out.push_back("");
  return out;
}

/// A Markdown table row "| a | b |" into its cells.
std::vector<std::string> pipe_cells(const std::string& line) {
  std::string inner = trimmed(line);
  if (!inner.empty() && inner.front() == '|') inner.erase(0, 1);
  if (!inner.empty() && inner.back() == '|') inner.pop_back();
  return split_fields(inner, '|');
}

// Canonical column names and the spelling of llm-foundry's README.
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> a = {
      {"Model", "model"},
      {"SeqLen (T)", "seq_len"},
      {"# GPUs", "gpus"},
      {"GPU", "gpu"},
      {"MFU", "mfu"},
      {"HFU", "hfu"},
      {"MicroBatchSize", "micro_batch"},
      {"GradAccum", "grad_accum"},
      {"GlobalBatchSize", "global_batch_samples"},
      {"Throughput (S/s)", "throughput_samples_per_s"},
      {"Throughput (T/s)", "throughput_tokens_per_s"},
      {"GlobalBatchSize (T)", "global_batch_tokens"},
      {"Precision", "precision"},
      {"MP Mode", "mp_mode"},
      {"Sharding Strategy", "sharding"},
      {"Activation Checkpointing", "activation_checkpointing"},
      {"Activation CPUOffload", "cpu_offload"},
      {"NumParams", "num_params"}};
  return a;
}

// MPT sizes of llm-foundry's scripts/train/yamls/pretrain/mpt-*.yaml: d_model, heads, layers.
std::optional<std::array<std::int64_t, 3>> mpt_shape(const std::string& name) {
  static const std::map<std::string, std::array<std::int64_t, 3>> shapes = {
      {"125m", {768, 12, 12}}, {"350m", {1024, 16, 24}}, {"760m", {1536, 12, 24}},
      {"1b", {2048, 16, 24}},  {"3b", {2560, 20, 32}},   {"7b", {4096, 32, 32}},
      {"13b", {5120, 40, 40}}, {"30b", {7168, 56, 48}},  {"70b", {8192, 64, 80}}};
  auto it = shapes.find(name);
  if (it == shapes.end()) return std::nullopt;
  return it->second;
}

struct Table {
  std::string name;
  std::vector<std::string> columns;  // canonical names
  std::map<std::string, std::size_t> index;
};

class RowReader {
 public:
  RowReader(const Table& table, const std::vector<std::string>& cells, std::string place)
      : table_(table), cells_(cells), place_(std::move(place)) {}

  bool has(const std::string& column) const { return table_.index.count(column) > 0; }
  const std::string& text(const std::string& column) const {
    auto it = table_.index.find(column);
    if (it == table_.index.end())
      throw Error(ErrorKind::kInput, place_, fmt::format("missing column \"{}\"", column));
    return cells_[it->second];
  }
  double number(const std::string& column) const {
    const std::string& c = text(column);
    char* end = nullptr;
    const double v = std::strtod(c.c_str(), &end);
    if (c.empty() || end != c.c_str() + c.size() || !std::isfinite(v) || v <= 0)
      fail(column, fmt::format("expected a positive number, got \"{}\"", c));
    return v;
  }
  std::int64_t count(const std::string& column) const {
    const double v = number(column);
    constexpr double kLargest = 1 << 30;
    if (v != std::floor(v) || v > kLargest)
      fail(column,
           fmt::format("expected an integer from 1 to {:.0f}, got \"{}\"", kLargest, text(column)));
    return static_cast<std::int64_t>(v);
  }
  bool flag(const std::string& column) const {
    const std::string& c = text(column);
    if (c == "True" || c == "true") return true;
    if (c == "False" || c == "false") return false;
    fail(column, fmt::format("expected True or False, got \"{}\"", c));
  }
  [[noreturn]] void fail(const std::string& column, const std::string& message) const {
    throw Error(ErrorKind::kInput, place_, fmt::format("column \"{}\": {}", column, message));
  }
  const std::string& place() const { return place_; }

 private:
  const Table& table_;
  const std::vector<std::string>& cells_;
  std::string place_;
};

/// One row: a run, or the reason it cannot be priced.
std::optional<MeasuredRun> read_mpt_row(const RowReader& row, int line, std::string* skipped) {
  MeasuredRun r;
  r.line = line;
  r.set = "mpt";
  r.model = row.text("model");
  r.seq_len = row.count("seq_len");
  r.gpus = static_cast<int>(row.count("gpus"));
  r.micro_batch = row.count("micro_batch");
  const std::int64_t accumulation = row.count("grad_accum");
  r.global_batch = r.micro_batch * accumulation * r.gpus;
  if (row.has("global_batch_samples") && row.count("global_batch_samples") != r.global_batch)
    row.fail("global_batch_samples",
             fmt::format("{} sequences, but micro_batch × grad_accum × gpus = {} × {} × {} = {}: "
                         "uneven micro-batches are not modelled",
                         row.text("global_batch_samples"), r.micro_batch, accumulation, r.gpus,
                         r.global_batch));
  // The model's shape: explicit columns, else the MPT size.
  if (row.has("d_model") || row.has("n_heads") || row.has("n_layers")) {
    r.hidden = row.count("d_model");
    r.heads = row.count("n_heads");
    r.layers = row.count("n_layers");
  } else if (auto shape = mpt_shape(r.model)) {
    r.hidden = (*shape)[0];
    r.heads = (*shape)[1];
    r.layers = (*shape)[2];
  } else {
    row.fail("model", fmt::format("unknown MPT size \"{}\" and no d_model, n_heads, n_layers "
                                  "columns (sizes: 125m, 350m, 760m, 1b, 3b, 7b, 13b, 30b, 70b)",
                                  r.model));
  }
  if (r.hidden % r.heads)
    row.fail("n_heads", fmt::format("d_model {} is not divisible by {} heads", r.hidden, r.heads));
  r.vocab = row.has("vocab") ? row.count("vocab") : 50368;
  if (row.has("num_params")) r.parameters_billion = row.number("num_params") / 1e9;
  r.biases = false;   // MPT: no_bias
  r.dropout = false;  // MPT pretraining: attention, residual and embedding dropout 0
  r.attention = Attention::kFlash;
  r.fused_elementwise = false;  // eager PyTorch layer norm, GELU and residual adds
  r.fused_loss = true;  // LLM Foundry's default loss_fn, fused_crossentropy (flash-attn's kernel)
  r.stack = Stack::kFsdp;
  r.tp = r.pp = 1;
  r.dp = r.gpus;

  const std::string& gpu = row.text("gpu");
  if (gpu == "a100_80gb" || gpu == "a100_40gb") {
    r.device = "A100";
    r.cluster = "dgx-a100";
    r.device_memory_bytes = (gpu == "a100_80gb" ? 80 : 40) * kGiB;
  } else if (gpu == "h100_80gb") {
    r.device = "H100";
    r.cluster = "dgx-h100";
    r.device_memory_bytes = 80 * kGiB;
  } else {
    row.fail("gpu",
             fmt::format("unknown GPU \"{}\" (known: a100_40gb, a100_80gb, h100_80gb)", gpu));
  }

  const std::string& sharding = row.text("sharding");
  if (sharding == "FULL_SHARD")
    r.zero_stage = 3;
  else if (sharding == "SHARD_GRAD_OP")
    r.zero_stage = 2;
  else if (sharding == "NO_SHARD")
    r.zero_stage = 0;
  else if (sharding == "HYBRID_SHARD" || sharding == "_HYBRID_SHARD_ZERO2")
    *skipped = fmt::format("sharding {} (hybrid sharding is not modelled)", sharding);
  else
    row.fail("sharding", fmt::format("unknown FSDP sharding strategy \"{}\" (FULL_SHARD, "
                                     "SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD)",
                                     sharding));

  const std::string& precision = row.text("precision");
  if ((precision == "amp_fp8" || precision == "fp8") && r.device != "A100")
    r.fp8 = true;  // Transformer Engine's FP8 linear layers under Composer
  else if (precision == "amp_fp8" || precision == "fp8")
    *skipped = "FP8 on A100, which has no FP8 tensor cores";
  else if (precision != "amp_bf16" && precision != "bf16" && precision != "amp_fp16" &&
           precision != "fp16")
    row.fail("precision", fmt::format("unknown precision \"{}\" (amp_bf16, bf16, amp_fp16, fp16, "
                                      "amp_fp8)",
                                      precision));
  // Composer's FSDP mixed precision: DEFAULT reduces gradients in fp32, PURE in the 16-bit
  // type, FULL keeps fp32 parameters for the compute.
  const std::string mode = row.has("mp_mode") ? row.text("mp_mode") : "DEFAULT";
  if (mode == "PURE")
    r.bf16_gradient_reduction = true, r.fp32_loss = false;
  else if (mode == "FULL")
    *skipped = "mixed-precision mode FULL (fp32 parameters in the compute are not modelled)";
  else if (mode != "DEFAULT")
    row.fail("mp_mode",
             fmt::format("unknown mixed-precision mode \"{}\" (DEFAULT, PURE, FULL)", mode));

  r.recompute = row.flag("activation_checkpointing") ? Recompute::kFull : Recompute::kNone;
  if (row.has("cpu_offload") && row.flag("cpu_offload"))
    *skipped = "activation CPU offload (not modelled)";

  if (row.has("iteration_time_s")) {
    r.iteration_time_s = row.number("iteration_time_s");
  } else {
    // The precise rate is in tokens per second (the samples-per-second column is rounded).
    r.iteration_time_s =
        static_cast<double>(r.global_batch * r.seq_len) / row.number("throughput_tokens_per_s");
  }
  if (!skipped->empty()) return std::nullopt;
  return r;
}

const char* const kRequired[] = {"model",     "seq_len",     "gpus",
                                 "gpu",       "micro_batch", "grad_accum",
                                 "precision", "sharding",    "activation_checkpointing"};

Table make_table(std::string name, const std::vector<std::string>& header,
                 const std::string& place) {
  Table t;
  t.name = std::move(name);
  for (std::size_t i = 0; i < header.size(); ++i) {
    auto alias = aliases().find(header[i]);
    const std::string column = alias == aliases().end() ? header[i] : alias->second;
    if (t.index.count(column))
      throw Error(ErrorKind::kInput, place, fmt::format("column \"{}\" appears twice", column));
    t.columns.push_back(column);
    t.index[column] = i;
  }
  for (const char* r : kRequired)
    if (!t.index.count(r))
      throw Error(ErrorKind::kInput, place, fmt::format("missing column \"{}\"", r));
  if (!t.index.count("iteration_time_s") && !t.index.count("throughput_tokens_per_s"))
    throw Error(
        ErrorKind::kInput, place,
        "missing column \"iteration_time_s\" or \"throughput_tokens_per_s\" (one gives the time)");
  return t;
}

}  // namespace

Json mpt_config_json(const MeasuredRun& r) {
  return Json{{"model_type", "mpt"},
              {"_name_or_path", "mpt-" + r.model},
              {"d_model", r.hidden},
              {"n_heads", r.heads},
              {"n_layers", r.layers},
              {"expansion_ratio", 4},
              {"max_seq_len", r.seq_len},
              {"vocab_size", r.vocab},
              {"no_bias", !r.biases},
              {"learned_pos_emb", true},
              {"resid_pdrop", r.dropout ? 0.1 : 0.0},
              {"emb_pdrop", 0.0},
              {"attn_config", {{"alibi", false}, {"attn_pdrop", 0.0}, {"attn_impl", "flash"}}}};
}

MptTable read_mpt_table(const std::string& path) {
  return parse_mpt_table(read_text_file(path), path);
}

MptTable parse_mpt_table(const std::string& text, const std::string& path) {
  std::stringstream in(text);
  std::string line;
  MptTable out;
  std::optional<Table> table;
  std::string heading;
  bool markdown = false, first = true, expect_separator = false;
  int number = 0;
  auto add = [&](const std::vector<std::string>& cells, const std::string& place) {
    if (cells.size() != table->columns.size())
      throw Error(ErrorKind::kInput, place,
                  fmt::format("{} cells, the header has {}", cells.size(), table->columns.size()));
    std::string skipped;
    auto run = read_mpt_row(RowReader(*table, cells, place), number, &skipped);
    if (run)
      out.runs.push_back(std::move(*run));
    else
      out.skipped.push_back(place + ": " + skipped);
  };
  while (std::getline(in, line)) {
    ++number;
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    const std::string place = fmt::format("{}:{}", path, number);
    const std::string t = trimmed(line);
    if (t.empty()) continue;
    if (first) {
      markdown = t.front() == '|' || t.front() == '#';
      first = false;
      if (!markdown) {
        table = make_table("", split_fields(line, '\t'), place);
        continue;
      }
    }
    if (!markdown) {
      add(split_fields(line, '\t'), place);
      continue;
    }
    if (t.front() == '#') {  // a heading names the next table (the hardware)
      const auto text = t.find_first_not_of('#');
      heading = text == std::string::npos ? "" : trimmed(t.substr(text));
      table.reset();
      continue;
    }
    if (t.front() != '|') {  // prose between tables
      table.reset();
      continue;
    }
    const auto cells = pipe_cells(t);
    if (!table) {
      // Only tables with the benchmark's columns are read; others are prose.
      bool benchmark = false;
      for (const auto& c : cells) benchmark |= c == "SeqLen (T)" || c == "seq_len";
      if (!benchmark) continue;
      table = make_table(heading, cells, place);
      expect_separator = true;
      continue;
    }
    if (expect_separator) {
      expect_separator = false;
      if (cells.empty() || cells[0].find("---") != std::string::npos) continue;
    }
    add(cells, place);
  }
  if (!table && out.runs.empty() && out.skipped.empty())
    throw Error(ErrorKind::kInput, path,
                "no benchmark table (a header with seq_len or \"SeqLen (T)\")");
  return out;
}

}  // namespace paraplan::io
