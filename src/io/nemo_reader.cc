// Reading the NeMo H100 table (data/nemo-h100/SOURCE.md gives its columns).
#include "io/nemo_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "io/hf_config.h"
#include "io/transformer_json.h"
#include "ir/error.h"
#include "ir/training_rules.h"

namespace paraplan::io {
namespace {

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::stringstream in(line);
  while (std::getline(in, cell, '\t')) {
    if (!cell.empty() && cell.back() == '\r') cell.pop_back();
    out.push_back(cell);
  }
  if (!line.empty() && line.back() == '\t') out.push_back("");
  return out;
}

class Row {
 public:
  Row(const std::map<std::string, std::size_t>& columns, std::vector<std::string> cells,
      std::string place)
      : columns_(columns), cells_(std::move(cells)), place_(std::move(place)) {}

  const std::string& text(const std::string& column) const {
    return cells_.at(columns_.at(column));
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
    if (v != std::floor(v) || v > (1 << 30))
      fail(column, fmt::format("expected a positive integer, got \"{}\"", text(column)));
    return static_cast<std::int64_t>(v);
  }
  bool yes(const std::string& column) const {
    const std::string& c = text(column);
    if (c == "yes" || c == "no") return c == "yes";
    fail(column, fmt::format("expected yes or no, got \"{}\"", c));
  }
  [[noreturn]] void fail(const std::string& column, const std::string& message) const {
    throw Error(ErrorKind::kInput, place_, fmt::format("column \"{}\": {}", column, message));
  }
  const std::string& place() const { return place_; }

 private:
  const std::map<std::string, std::size_t>& columns_;
  std::vector<std::string> cells_;
  std::string place_;
};

TransformerConfig row_model(const Row& row, const std::string& folder,
                            const BuiltinModels& builtin) {
  const std::string& name = row.text("model");
  TransformerConfig m;
  if (auto known = builtin(name)) {
    m = *known;
  } else if (name.size() > 5 && name.substr(name.size() - 5) == ".json" &&
             name.find('/') == std::string::npos) {
    m = read_hf_config((std::filesystem::path(folder) / name).string());
  } else {
    row.fail("model", fmt::format("\"{}\" is neither a built-in transformer nor a config.json "
                                  "file beside the table",
                                  name));
  }
  const std::pair<const char*, std::int64_t> shape[] = {{"layers", m.num_layers},
                                                        {"hidden", m.hidden_size},
                                                        {"heads", m.num_attention_heads},
                                                        {"kv_heads", m.num_kv_heads},
                                                        {"ffn", m.ffn_hidden_size}};
  for (const auto& [column, value] : shape)
    if (row.count(column) != value)
      row.fail(column,
               fmt::format("{} has {} here, the row says {}", name, value, row.text(column)));
  m.vocab_size = row.count("vocab");  // as the recipe's tokenizer has it (padded by the model)
  return m;
}

PublishedRun read_row(const Row& row, const std::string& folder, const BuiltinModels& builtin) {
  PublishedRun r;
  r.place = row.place();
  r.name = row.text("id");
  r.source = row.text("ref");
  r.model = row_model(row, folder, builtin);
  r.model_name = r.model->name;
  if (row.text("gpu") != "H100-80GB")
    row.fail("gpu",
             fmt::format("expected H100-80GB (the dgx-h100 preset), got \"{}\"", row.text("gpu")));
  r.cluster = "dgx-h100";
  TrainingConfig& t = r.config;
  t.seq_len = row.count("seq");
  t.global_batch = row.count("global_batch");
  t.micro_batch = row.count("micro_batch");
  // Each degree fits an int (count caps it at 2^30); their product, in floating point, must
  // equal gpus before tp × cp × pp × dp is ever taken in ints.
  const std::int64_t tp = row.count("tp"), cp = row.count("cp"), pp = row.count("pp"),
                     dp = row.count("dp");
  const double product = static_cast<double>(tp) * static_cast<double>(cp) *
                         static_cast<double>(pp) * static_cast<double>(dp);
  if (product != static_cast<double>(row.count("gpus")))
    row.fail("gpus",
             fmt::format("{} GPUs, but tp × cp × pp × dp = {:.0f}", row.text("gpus"), product));
  t.tp = static_cast<int>(tp);
  t.cp = static_cast<int>(cp);
  t.pp = static_cast<int>(pp);
  t.dp = static_cast<int>(dp);
  t.ep = static_cast<int>(row.count("ep"));
  t.vpp = static_cast<int>(row.count("vpp"));
  const auto rc = recompute_from_text(row.text("recompute"));
  if (!rc)
    row.fail("recompute", fmt::format("expected none, selective, full or a number of layers, got "
                                      "\"{}\"",
                                      row.text("recompute")));
  t.recompute = rc->kind;
  t.recompute_layers = rc->layers;
  t.sequence_parallel = row.yes("sp");
  const std::int64_t zero = row.count("zero");
  if (zero != 1) row.fail("zero", "expected 1 (Megatron's distributed optimizer)");
  t.zero_stage = 1;
  const std::string& attention = row.text("attention");
  if (attention != "flash" && attention != "standard")
    row.fail("attention", fmt::format("expected flash or standard, got \"{}\"", attention));
  t.attention = attention == "flash" ? Attention::kFlash : Attention::kStandard;
  // Every recipe turns on Megatron-Core's overlaps where they apply, and reduces gradients in
  // bf16 (optim.grad_sync_dtype: bf16 in each of the recipes' YAML files; SOURCE.md).
  t.stack = Stack::kMegatron;
  StackChoices fixed;
  fixed.overlap_grad_reduce = row.yes("overlap");
  fixed.bf16_gradient_reduction = true;
  apply_stack_defaults(t, fixed);
  const double seconds = row.number("measured_iter_s");
  r.tokens_per_s_per_device = static_cast<double>(t.global_batch * t.seq_len) /
                              (seconds * static_cast<double>(t.devices()));
  return r;
}

}  // namespace

std::vector<PublishedRun> parse_nemo_table(const std::string& text, const std::string& path,
                                           const std::string& folder,
                                           const BuiltinModels& builtin) {
  std::stringstream in(text);
  std::string line;
  int number = 0;
  std::map<std::string, std::size_t> columns;
  std::vector<PublishedRun> out;
  static const char* const kNeeded[] = {
      "id",       "model",        "layers",      "hidden",    "heads",
      "kv_heads", "ffn",          "vocab",       "seq",       "gpu",
      "gpus",     "global_batch", "micro_batch", "tp",        "pp",
      "dp",       "cp",           "ep",          "vpp",       "recompute",
      "sp",       "zero",         "overlap",     "attention", "measured_iter_s",
      "ref"};
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> row = cells(line);
    const std::string place = fmt::format("{}:{}", path, number);
    if (columns.empty()) {
      for (std::size_t i = 0; i < row.size(); ++i)
        if (!columns.emplace(row[i], i).second)
          throw Error(ErrorKind::kInput, place,
                      fmt::format("column \"{}\" appears twice in the header", row[i]));
      for (const char* c : kNeeded)
        if (!columns.count(c))
          throw Error(ErrorKind::kInput, place, fmt::format("missing column \"{}\"", c));
      continue;
    }
    if (row.size() != columns.size())
      throw Error(
          ErrorKind::kInput, place,
          fmt::format("{} cells, but the header has {} columns", row.size(), columns.size()));
    out.push_back(read_row(Row(columns, row, place), folder, builtin));
  }
  if (columns.empty()) throw Error(ErrorKind::kInput, path, "empty table: no header line");
  return out;
}

std::vector<PublishedRun> read_nemo_table(const std::string& path, const BuiltinModels& builtin) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, path, "cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_nemo_table(text.str(), path, std::filesystem::path(path).parent_path().string(),
                          builtin);
}

}  // namespace paraplan::io
