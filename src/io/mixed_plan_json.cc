#include "io/mixed_plan_json.h"

#include <fmt/format.h>

#include "io/calibration_file.h"
#include "io/native_json.h"
#include "io/transformer_json.h"

namespace paraplan::io {
namespace {

int device_type_index(const JsonObject& o, std::string_view key, const Cluster& cluster) {
  const std::string name = o.string(key);
  std::string names;
  for (std::size_t k = 0; k < cluster.device_types.size(); ++k) {
    if (cluster.device_types[k].name == name) return static_cast<int>(k);
    names += (k ? ", " : "") + cluster.device_types[k].name;
  }
  o.fail(key, fmt::format("\"{}\" is not a device type of the cluster (it has {})", name, names));
}

}  // namespace

Json mixed_config_to_json(const Cluster& cluster, const MixedConfig& c) {
  TrainingConfig knobs;
  knobs.recompute = c.recompute;
  Json segments = Json::array();
  for (const MixedSegment& g : c.segments)
    segments.push_back(
        {{"device_type", cluster.device_types[static_cast<std::size_t>(g.device_type)].name},
         {"tp", g.tp},
         {"dp", g.dp},
         {"pp", g.pp}});
  return {{"seq_len", c.seq_len},
          {"global_batch", c.global_batch},
          {"samples_per_microbatch", c.samples_per_microbatch},
          {"microbatches", c.microbatches()},
          {"recompute", recompute_text(knobs)},
          {"sequence_parallel", c.sequence_parallel},
          {"zero_stage", c.zero_stage},
          {"overlap_grad_reduce", c.overlap_grad_reduce},
          {"attention", attention_text(c.attention)},
          {"devices", c.devices()},
          {"stage_layers", c.stage_layers},
          {"segments", segments}};
}

MixedConfig mixed_config_from_json(const JsonObject& o, const Cluster& cluster) {
  o.only({"seq_len", "global_batch", "samples_per_microbatch", "microbatches", "recompute",
          "sequence_parallel", "zero_stage", "overlap_grad_reduce", "attention", "devices",
          "stage_layers", "segments"});
  auto flag = [&](std::string_view key) {
    const Json& v = o.field(key);
    if (!v.is_boolean()) o.fail(key, "must be true or false");
    return v.get<bool>();
  };
  MixedConfig c;
  c.seq_len = o.integer("seq_len", 1, 1LL << 30);
  c.global_batch = o.integer("global_batch", 1, 1LL << 40);
  c.samples_per_microbatch = o.integer("samples_per_microbatch", 1, c.global_batch);
  if (c.global_batch % c.samples_per_microbatch)
    o.fail("samples_per_microbatch", fmt::format("must divide global_batch ({})", c.global_batch));
  const auto rc = recompute_from_text(o.string("recompute"));
  if (!rc || rc->layers != 0) o.fail("recompute", "must be none, selective or full");
  c.recompute = rc->kind;
  c.sequence_parallel = flag("sequence_parallel");
  c.zero_stage = static_cast<int>(o.integer("zero_stage", 0, 2));
  c.overlap_grad_reduce = flag("overlap_grad_reduce");
  const auto attention = attention_from_text(o.has("attention") ? o.string("attention") : "flash");
  if (!attention) o.fail("attention", "must be flash or standard");
  c.attention = *attention;
  const Json& segments = o.array("segments");
  if (segments.empty()) o.fail("segments", "needs at least one segment");
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const JsonObject g = o.element("segments", i);
    g.only({"device_type", "tp", "dp", "pp"});
    c.segments.push_back({device_type_index(g, "device_type", cluster),
                          static_cast<int>(g.integer("tp", 1, 1 << 20)),
                          static_cast<int>(g.integer("dp", 1, 1 << 24)),
                          static_cast<int>(g.integer("pp", 1, 1 << 20))});
  }
  const Json& split = o.array("stage_layers");
  for (std::size_t i = 0; i < split.size(); ++i) {
    if (!split[i].is_number_integer() || split[i].get<long long>() < 1 ||
        split[i].get<long long>() > (1 << 20))
      o.fail("stage_layers", "must list positive layer counts");
    c.stage_layers.push_back(split[i].get<int>());
  }
  if (!c.stage_layers.empty() && static_cast<int>(c.stage_layers.size()) != c.stages())
    o.fail("stage_layers", fmt::format("must list one count per stage ({})", c.stages()));
  if (o.has("devices") && o.integer("devices", 1, 1LL << 30) != c.devices())
    o.fail("devices",
           fmt::format("must equal the segments' tp × dp × pp summed = {}", c.devices()));
  if (o.has("microbatches") && o.integer("microbatches", 1, 1LL << 40) != c.microbatches())
    o.fail("microbatches",
           fmt::format("must equal global_batch / samples_per_microbatch = {}", c.microbatches()));
  return c;
}

void add_mixed_replay_keys(Json& plan, const TransformerConfig& model, const Cluster& cluster,
                           const std::vector<Calibration>& calibrations, int devices,
                           const MixedConfig& config) {
  plan["model_config"] = transformer_to_json(model);
  plan["cluster_config"] = cluster_to_json(cluster);
  plan["devices"] = devices;
  Json cals = Json::array();
  for (std::size_t k = 0; k < calibrations.size(); ++k)
    cals.push_back({{"device_type", cluster.device_types[k].name},
                    {"calibration", calibration_to_json(calibrations[k])}});
  plan["calibrations"] = cals;
  plan["config"] = mixed_config_to_json(cluster, config);
}

MixedPlanFile mixed_plan_from_json(const Json& doc, const std::string& path) {
  JsonObject top(doc, path, "");
  const std::string format = top.string("format");
  if (format != "paraplan-plan" && format != "paraplan-mixed-transformer-plan")
    top.fail("format",
             "expected \"paraplan-plan\" (a plan written by `paraplan plan --model ... --cluster "
             "CLUSTER_OF_SEVERAL_TYPES -o FILE`)");
  if (top.integer("version", 1, 1) != 1) top.fail("version", "expected 1");
  MixedPlanFile f;
  f.model = transformer_from_json(top.object("model_config"));
  f.cluster = cluster_from_json(top.object("cluster_config").json(), path + " (cluster_config)");
  f.devices = static_cast<int>(top.integer("devices", 1, f.cluster.device_count()));
  const Json& cals = top.array("calibrations");
  if (cals.size() != f.cluster.device_types.size())
    top.fail("calibrations", fmt::format("must hold one calibration per device type of the "
                                         "cluster ({}), in its order",
                                         f.cluster.device_types.size()));
  for (std::size_t k = 0; k < cals.size(); ++k) {
    const JsonObject c = top.element("calibrations", k);
    c.only({"device_type", "calibration"});
    if (device_type_index(c, "device_type", f.cluster) != static_cast<int>(k))
      c.fail("device_type", "calibrations must follow the cluster's device types in order");
    f.calibrations.push_back(calibration_from_json(c.object("calibration").json(),
                                                   fmt::format("{} (calibrations/{})", path, k)));
  }
  f.config = mixed_config_from_json(top.object("config"), f.cluster);
  if (f.config.devices() > f.devices)
    top.fail("config", fmt::format("its segments use {} devices; the job has {}",
                                   f.config.devices(), f.devices));
  return f;
}

}  // namespace paraplan::io
