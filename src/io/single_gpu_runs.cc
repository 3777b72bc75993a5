// Reads data/h100-single-gpu's results.jsonl.
#include "io/single_gpu_runs.h"

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "io/hf_config.h"
#include "io/json_fields.h"

namespace paraplan::io {

std::vector<SingleGpuRun> parse_single_gpu_runs(const std::string& text, const std::string& path,
                                                const std::string& folder) {
  constexpr double kGiB = 1073741824.0;
  std::vector<SingleGpuRun> runs;
  std::map<std::string, TransformerConfig> models;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string place = fmt::format("{}:{}", path, number);
    const Json doc = parse_json_text(line, place);
    if (!doc.is_object()) throw Error(ErrorKind::kInput, place, "expected one JSON object a line");
    const JsonObject o(doc, place, "");
    if (o.has("error")) continue;  // failed for another reason than memory: no run
    SingleGpuRun r;
    r.place = place;
    r.model_name = o.string("model");
    if (r.model_name.empty() || r.model_name.find_first_of("/\\") != std::string::npos)
      o.fail("model", "must name a config in configs/ (a file name without a folder)");
    auto known = models.find(r.model_name);
    if (known == models.end())
      known =
          models
              .emplace(r.model_name, read_hf_config(folder + "/configs/" + r.model_name + ".json"))
              .first;
    r.model = known->second;
    r.device = o.has("device") ? o.string("device") : "";
    r.seq_len = o.integer("seq", 1, 1 << 24);
    r.batch = o.integer("batch", 1, 1 << 30);
    r.micro_batch = o.integer("micro_batch", 1, 1 << 20);
    if (r.batch % r.micro_batch != 0)
      o.fail("micro_batch",
             fmt::format("{} does not divide the batch of {}", r.micro_batch, r.batch));
    const std::string recompute = o.string("recompute");
    if (recompute != "none" && recompute != "full")
      o.fail("recompute", "must be none or full (got \"" + recompute + "\")");
    r.recompute = recompute == "full" ? Recompute::kFull : Recompute::kNone;
    auto boolean = [&](const char* key, bool fallback) {
      if (!o.has(key)) return fallback;
      if (!o.field(key).is_boolean()) o.fail(key, "must be true or false");
      return o.field(key).get<bool>();
    };
    r.compiled = boolean("compiled", false);
    r.ran = boolean("ok", false);
    if (!r.ran && !boolean("oom", false))
      o.fail("ok", "a run that did not finish must say \"oom\": true (or carry an \"error\")");
    if (r.ran) r.iteration_time_s = o.positive_number("iter_s");
    r.peak_allocated_bytes = o.number("peak_allocated_gib") * kGiB;
    r.peak_reserved_bytes = o.number("peak_reserved_gib") * kGiB;
    runs.push_back(std::move(r));
  }
  if (runs.empty()) throw Error(ErrorKind::kInput, path, "no runs");
  return runs;
}

std::vector<SingleGpuRun> read_single_gpu_runs(const std::string& folder) {
  const std::string path = folder + "/results.jsonl";
  return parse_single_gpu_runs(read_text_file(path), path, folder);
}

}  // namespace paraplan::io
