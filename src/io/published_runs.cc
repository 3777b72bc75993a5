// Format: docs/formats.md, "Published runs".
#include "io/published_runs.h"

#include "io/hf_config.h"
#include "io/transformer_json.h"

namespace paraplan::io {

std::vector<PublishedRun> published_runs_from_json(const Json& doc, const std::string& path) {
  if (!doc.is_object())
    throw Error(ErrorKind::kInput, path, "a published-runs file must be a JSON object");
  const JsonObject top(doc, path, "");
  top.only({"format", "version", "runs"});
  if (top.string("format") != "paraplan-published-runs")
    top.fail("format", "expected \"paraplan-published-runs\"");
  top.integer("version", 1, 1);
  const Json& runs = top.array("runs");
  std::vector<PublishedRun> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const JsonObject o = top.element("runs", i);
    o.only({"name", "source", "url", "model", "hf_config", "cluster", "config",
            "tokens_per_s_per_device"});
    PublishedRun r;
    r.place = path + ": " + o.pointer();
    r.name = o.string("name");
    r.source = o.string("source");
    r.url = o.string("url");
    if (o.has("model") == o.has("hf_config"))
      o.fail("model",
             "give either \"model\" (a built-in transformer) or \"hf_config\" (a Hugging "
             "Face config.json object), not both or neither");
    if (o.has("model")) {
      r.model_name = o.string("model");
    } else {
      const JsonObject hf = o.object("hf_config");
      r.model = hf_config_from_json(hf.json(), o.place("hf_config"));
      if (!hf.has("_name_or_path")) r.model->name = r.name;
      r.model_name = r.model->name;
    }
    r.cluster = o.string("cluster");
    r.config = training_from_json(o.object("config"));
    r.tokens_per_s_per_device = o.positive_number("tokens_per_s_per_device");
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<PublishedRun> read_published_runs(const std::string& path) {
  return published_runs_from_json(parse_json_file(path), path);
}

}  // namespace paraplan::io
