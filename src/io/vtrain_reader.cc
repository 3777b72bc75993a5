// Columns are located by header name, so both files (with and without the parameter count) read
// the same way.
#include "io/vtrain_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <sstream>

#include "io/json_fields.h"
#include "ir/error.h"

namespace paraplan::io {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) {
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
    out.push_back(cell);
  }
  return out;
}

}  // namespace

std::vector<MeasuredRun> read_vtrain_csv(const std::string& path) {
  return parse_vtrain_csv(read_text_file(path), path);
}

std::vector<MeasuredRun> parse_vtrain_csv(std::string text, const std::string& path) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  std::stringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw Error(ErrorKind::kInput, path, "empty file");
  auto header = split_csv(line);
  std::map<std::string, int> col;
  for (int i = 0; i < static_cast<int>(header.size()); ++i) col[header[i]] = i;
  const char* required[] = {"# GPUs",
                            "global batch",
                            "micro batch",
                            "hidden size",
                            "attention heads",
                            "# layers",
                            "sequence length",
                            "tensor parallelism",
                            "data parallelism",
                            "pipeline parallelism",
                            "iteration time (ms)"};
  for (const char* r : required)
    if (!col.count(r))
      throw Error(ErrorKind::kInput, path + ":1", fmt::format("missing column \"{}\"", r));
  std::vector<MeasuredRun> runs;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \r") == std::string::npos) continue;
    auto cells = split_csv(line);
    const std::string place = fmt::format("{}:{}", path, number);
    if (cells.size() != header.size())
      throw Error(ErrorKind::kInput, place,
                  fmt::format("{} cells, the header has {}", cells.size(), header.size()));
    auto num = [&](const char* name) {
      const std::string& c = cells[col.at(name)];
      char* end = nullptr;
      double v = std::strtod(c.c_str(), &end);
      if (c.empty() || end != c.c_str() + c.size() || !std::isfinite(v) || v <= 0)
        throw Error(ErrorKind::kInput, place,
                    fmt::format("column \"{}\": expected a positive number, got \"{}\"", name, c));
      return v;
    };
    auto count = [&](const char* name) {
      double v = num(name);
      constexpr double kLargest = 1 << 30;  // more than any count of GPUs, layers or tokens
      if (v != std::floor(v) || v > kLargest)
        throw Error(ErrorKind::kInput, place,
                    fmt::format("column \"{}\": expected an integer from 1 to {:.0f}, got \"{}\"",
                                name, kLargest, cells[col.at(name)]));
      return static_cast<std::int64_t>(v);
    };
    MeasuredRun r;
    r.line = number;
    if (col.count("Parameters (billion)")) r.parameters_billion = num("Parameters (billion)");
    r.gpus = static_cast<int>(count("# GPUs"));
    r.global_batch = count("global batch");
    r.micro_batch = count("micro batch");
    r.hidden = count("hidden size");
    r.heads = count("attention heads");
    r.layers = count("# layers");
    r.seq_len = count("sequence length");
    r.tp = static_cast<int>(count("tensor parallelism"));
    r.dp = static_cast<int>(count("data parallelism"));
    r.pp = static_cast<int>(count("pipeline parallelism"));
    r.iteration_time_s = num("iteration time (ms)") / 1000;
    runs.push_back(r);
  }
  return runs;
}

MeasuredRuns read_vtrain_folder(const std::string& folder) {
  MeasuredRuns runs{read_vtrain_csv(folder + "/ground_truth_multi.csv"),
                    read_vtrain_csv(folder + "/ground_truth_single.csv")};
  for (auto& r : runs.multi) r.set = "multi";
  for (auto& r : runs.single) r.set = "single";
  return runs;
}

}  // namespace paraplan::io
