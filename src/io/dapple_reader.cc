// PipeDream profile parser with line-numbered errors.
#include "io/dapple_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "io/json_fields.h"
#include "io/model_checks.h"
#include "ir/error.h"

namespace paraplan::io {
namespace {

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> parts;
  std::size_t start = 0, pos;
  while ((pos = s.find(sep, start)) != std::string::npos) {
    parts.push_back(s.substr(start, pos - start));
    start = pos + sep.size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

Model parse_dapple(const std::string& text, const std::string& source, int profile_batch_size) {
  Model model;
  model.profile_batch_size = profile_batch_size > 0 ? profile_batch_size : 1;
  model.microbatches = 1;
  std::map<std::string, int> index_of;
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  auto fail = [&](const std::string& message) -> void {
    throw Error(ErrorKind::kInput, fmt::format("{}:{}", source, line_no), message);
  };
  auto number = [&](const std::string& key, const std::string& value) {
    char* end = nullptr;
    double x = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(x) || x < 0)
      fail(fmt::format("{} must be a finite non-negative number, got \"{}\"", key, value));
    return x;
  };
  static const char* kKeys[] = {"forward_compute_time", "backward_compute_time", "activation_size",
                                "parameter_size"};
  while (std::getline(in, raw)) {
    ++line_no;
    std::string line = trim(raw);
    if (line.empty()) continue;
    bool edge = raw[0] == ' ' || raw[0] == '\t';
    auto parts = split(line, " -- ");
    if (edge) {
      if (parts.size() != 2)
        fail("an edge line must be \"<source id> -- <destination id>\", got \"" + line + "\"");
      int ends[2];
      for (int i = 0; i < 2; ++i) {
        auto it = index_of.find(trim(parts[i]));
        if (it == index_of.end())
          fail("edge names node \"" + trim(parts[i]) +
               "\", which is not defined on an earlier line");
        ends[i] = it->second;
      }
      model.edges.push_back({ends[0], ends[1], model.layers[ends[0]].output_bytes});
      continue;
    }
    if (parts.size() != 3 && parts.size() != 4)
      fail(
          "a node line must be \"<id> -- <description> -- forward_compute_time=..., "
          "backward_compute_time=..., activation_size=..., parameter_size=...\"");
    if (parts.size() == 4 && parts[3].rfind("stage_id=", 0) != 0)
      fail("the optional fourth field of a node line must be stage_id=<int>");
    std::string id = trim(parts[0]);
    std::smatch m;
    static const std::regex kNodeId("node([0-9]{1,15})");
    if (!std::regex_match(id, m, kNodeId))
      fail("node ids must look like node<number>, got \"" + id + "\"");
    if (index_of.count(id)) fail("node \"" + id + "\" is defined twice");
    auto fields = split(parts[2], ", ");
    if (fields.size() != 4)
      fail(
          fmt::format("expected 4 metadata items (forward_compute_time, backward_compute_time, "
                      "activation_size, parameter_size), got {}",
                      fields.size()));
    double values[4];
    for (int i = 0; i < 4; ++i) {
      auto eq = fields[i].find('=');
      std::string key = trim(fields[i].substr(0, eq));
      if (eq == std::string::npos || key != kKeys[i])
        fail(fmt::format("metadata item {} must be {}=<number>, got \"{}\"", i + 1, kKeys[i],
                         fields[i]));
      std::string value = trim(fields[i].substr(eq + 1));
      if (i == 2 && !value.empty() && value.front() == '[') {
        if (value.back() != ']') fail("activation_size list must end with ']'");
        double sum = 0;
        for (const auto& item : split(value.substr(1, value.size() - 2), ";"))
          sum += number(key, trim(item));
        values[i] = sum;
      } else {
        values[i] = number(key, value);
      }
    }
    Layer layer;
    layer.id = std::stoll(m[1].str());
    layer.name = utf8_or_replaced(trim(parts[1]));
    layer.output_bytes = values[2];
    LayerOption o;
    o.id = "profiled";
    o.compute_time_s = (values[0] + values[1]) / 1000.0;
    o.parameter_bytes = values[3];
    layer.by_degree.push_back({1, {o}});
    index_of[id] = model.size();
    model.layers.push_back(std::move(layer));
  }
  if (model.layers.empty()) throw Error(ErrorKind::kInput, source, "no node lines: not a profile");
  check_edges(model, source);
  for (int v = 0; v < model.size(); ++v) {
    auto& o = model.layers[v].by_degree[0].options[0];
    o.sync_in_bytes.assign(model.in_edge_ids[v].size(), 0.0);
    o.sync_out_bytes.assign(model.out_edge_ids[v].size(), 0.0);
  }
  check_model(model, source);
  return model;
}

int profile_batch_from_name(const std::string& path, int given) {
  if (given > 0) return given;
  std::smatch m;
  std::string name = std::filesystem::path(path).filename().string();
  static const std::regex kPbs("-pbs-([0-9]{1,9})");
  return std::regex_search(name, m, kPbs) ? std::stoi(m[1].str()) : 0;
}

Model read_dapple(const std::string& path, int profile_batch_size) {
  Model model =
      parse_dapple(read_text_file(path), path, profile_batch_from_name(path, profile_batch_size));
  model.name = utf8_or_replaced(std::filesystem::path(path).stem().string());
  return model;
}

}  // namespace paraplan::io
