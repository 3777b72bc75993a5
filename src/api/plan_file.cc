// The plan file, read and written by kind: one reader, one writer.
#include "api/plan_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "io/mixed_plan_json.h"
#include "io/native_json.h"
#include "io/transformer_json.h"
#include "ir/error.h"

namespace paraplan::api {
namespace {

constexpr const char* kFormat = "paraplan-plan";

// Keys only plans of one kind have: a file of another kind holding one is refused by name
// (it would be misread, or reach a detail of the wrong kind).
struct OwnKey {
  const char* key;
  PlanKind kind;
};
constexpr OwnKey kOwnKeys[] = {{"piper_settings", PlanKind::kPipeline},
                               {"placement", PlanKind::kPipeline},
                               {"speedup", PlanKind::kDapple},
                               {"layer_splits", PlanKind::kIntraOp},
                               {"step_time_s", PlanKind::kIntraOp},
                               {"calibration", PlanKind::kTransformer},
                               {"calibrations", PlanKind::kMixedTransformer}};

std::string kind_words(PlanKind kind) {
  switch (kind) {
    case PlanKind::kPipeline:
      return "a pipeline plan under Piper's cost model";
    case PlanKind::kDapple:
      return "a pipeline plan under DAPPLE's cost model";
    case PlanKind::kIntraOp:
      return "an intra-operator plan";
    case PlanKind::kTransformer:
      return "a transformer plan";
    case PlanKind::kMixedTransformer:
      return "a mixed transformer plan";
  }
  return "a plan";
}

void refuse_other_kinds_keys(const io::JsonObject& top, PlanKind kind) {
  for (const OwnKey& own : kOwnKeys)
    if (own.kind != kind && top.has(own.key))
      top.fail(own.key, fmt::format("belongs to {}; this file is {} (planner \"{}\", cost model "
                                    "\"{}\")",
                                    kind_words(own.kind), kind_words(kind), planner_name(kind),
                                    cost_model_name(kind)));
}

// The kind the header names: the planner and cost model of a paraplan-plan, or one of the
// earlier per-kind formats.
PlanKind header_kind(const io::JsonObject& top) {
  const std::string format = top.string("format");
  if (format == "paraplan-transformer-plan") return PlanKind::kTransformer;
  if (format == "paraplan-mixed-transformer-plan") return PlanKind::kMixedTransformer;
  if (format != kFormat)
    top.fail("format", fmt::format("expected \"{}\" (a plan written by `paraplan plan ... -o "
                                   "FILE`), got \"{}\"",
                                   kFormat, format));
  const std::string cost_model = top.string("cost_model");
  // Files written before the planner field: the planner the cost model belongs to.
  const std::string planner = top.has("planner")     ? top.string("planner")
                              : cost_model == "pase" ? "intra-op"
                                                     : "pipeline";
  if (const auto kind = plan_kind(planner, cost_model)) return *kind;
  std::string pairs;
  for (PlanKind k : kPlanKinds)
    pairs +=
        fmt::format("{}{} with {}", pairs.empty() ? "" : ", ", planner_name(k), cost_model_name(k));
  top.fail("cost_model", fmt::format("the {} planner writes no {} plans; a plan file names one "
                                     "of: {}",
                                     planner, cost_model, pairs));
}

Schedule read_schedule(const io::JsonObject& top, PlanKind kind, Schedule otherwise) {
  if (!top.has("schedule")) return otherwise;
  const std::string text = top.string("schedule");
  const std::optional<Schedule> s = schedule_from_name(text);
  if (!s || !schedule_fits(kind, *s))
    top.fail("schedule", fmt::format("{} runs under {}, got \"{}\"", kind_words(kind),
                                     schedules_of(kind), text));
  return *s;
}

// --- the reader of each kind ---------------------------------------------------------------------

PlanFile read_pipeline(const io::Json& doc, const io::JsonObject& top, const std::string& path) {
  if (!top.has("model_config") || !top.has("piper_settings"))
    top.fail("model_config",
             "a pipeline plan to replay needs the model and Piper's settings; write it "
             "with `paraplan plan INPUT --cost-model piper -o FILE`");
  PipelineReplay replay;
  replay.model = io::model_from_json(top.field("model_config"), path + " (model_config)");
  const io::JsonObject ps = top.object("piper_settings");
  PiperSettings& settings = replay.settings;
  settings.max_devices = static_cast<int>(ps.integer("max_devices", 1, 1 << 24));
  settings.memory_per_device_bytes = ps.positive_number("memory_per_device_bytes");
  settings.bandwidth_bytes_per_s = ps.positive_number("bandwidth_bytes_per_s");
  settings.microbatches = static_cast<int>(ps.integer("microbatches", 1, 1 << 30));
  if (ps.has("allreduce_bandwidth_bytes_per_s"))
    settings.allreduce_bandwidth_bytes_per_s =
        ps.positive_number("allreduce_bandwidth_bytes_per_s");
  if (ps.has("device_groups")) {
    const io::Json& groups = ps.array("device_groups");
    long long total = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const io::JsonObject g = ps.element("device_groups", i);
      g.only({"name", "devices", "memory_bytes", "time_factor"});
      settings.device_groups.push_back(
          {g.string("name"), static_cast<int>(g.integer("devices", 1, 1 << 24)),
           g.positive_number("memory_bytes"), g.positive_number("time_factor")});
      total += settings.device_groups.back().count;
    }
    if (total != settings.max_devices)
      ps.fail("device_groups", "the groups' devices must add up to max_devices");
  }
  if (top.has("cluster_config"))
    replay.cluster = io::cluster_from_json(top.field("cluster_config"), path + " (cluster_config)");
  io::Json plan_part = doc;  // the plan without what `plan` added beside it
  for (const char* extra :
       {"model_config", "piper_settings", "bandwidth_bytes_per_s", "max_devices",
        "memory_per_device_bytes", "smallest_memory_per_device_bytes", "cluster_config",
        "placed_simulated_s", "rank_order_simulated_s", "coarsening", "device_groups",
        "mixed_baselines", "compute_scaling", "search_objective", "iteration", "network_choice"})
    plan_part.erase(extra);
  Plan plan = io::plan_from_json(plan_part, replay.model, path);
  return {replay.model.name, std::move(plan), std::move(replay)};
}

PlanFile read_dapple(const io::JsonObject& top) {
  Plan plan = Plan::of(PlanKind::kDapple);
  plan.schedule = read_schedule(top, PlanKind::kDapple, Schedule::kOneFOneB);
  plan.feasible = true;
  plan.microbatches = static_cast<int>(top.integer("microbatches", 1, 1 << 30));
  plan.objective = top.positive_number("objective");
  DappleDetail& detail = plan.as<DappleDetail>();
  if (top.has("speedup")) detail.speedup = top.number("speedup");
  if (top.has("pipeline_replicas"))
    detail.pipeline_replicas = static_cast<int>(top.integer("pipeline_replicas", 1, 1 << 30));
  const io::Json& stages = top.array("stages");
  if (stages.empty()) top.fail("stages", "needs at least one stage");
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const io::JsonObject st = top.element("stages", i);
    Stage s;
    s.data_parallel = static_cast<int>(st.integer("data_parallel", 1, 1 << 20));
    s.compute_time = st.number("compute_time");
    s.communication_time = st.number("communication_time");
    plan.stages.push_back(s);
  }
  plan.devices_used = 0;
  for (const Stage& s : plan.stages) plan.devices_used += s.devices();
  return {top.json().value("model", "model"), std::move(plan), DappleReplay{}};
}

// An intra-operator plan carries every layer's costs (FLOP-equivalents per device): its replay
// needs no model.
PlanFile read_intra_op(const io::JsonObject& top) {
  IntraOpReplay replay;
  replay.flops_per_s = top.positive_number("flops_per_s");
  replay.devices = static_cast<int>(top.integer("devices", 1, 1 << 24));
  Plan plan = Plan::of(PlanKind::kIntraOp);
  plan.schedule = read_schedule(top, PlanKind::kIntraOp, Schedule::kLayerByLayer);
  plan.feasible = true;
  plan.objective = top.number("objective");
  IntraOpDetail& detail = plan.as<IntraOpDetail>();
  if (top.has("step_time_s")) detail.step_time_s = top.number("step_time_s");
  const io::Json& splits = top.array("layer_splits");
  double total = 0;
  for (std::size_t i = 0; i < splits.size(); ++i) {
    const io::JsonObject ls = top.element("layer_splits", i);
    LayerSplit split;
    split.layer = static_cast<int>(i);
    split.compute = ls.number("compute");
    split.communication = ls.number("communication");
    split.redistribution = ls.number("redistribution");
    split.devices = static_cast<int>(ls.integer("devices", 1, 1 << 24));
    total += split.compute + split.communication + split.redistribution;
    std::string cut;  // the split as the plan's table shows it: "b/4 n/2"
    const io::Json& parts = ls.array("split");
    for (std::size_t k = 0; k < parts.size(); ++k) {
      if (!parts[k].is_number_integer() || parts[k].get<long long>() < 1 ||
          parts[k].get<long long>() > (1LL << 30))
        ls.fail("split", fmt::format("element {} must be a positive integer", k));
      split.split.push_back(static_cast<int>(parts[k].get<long long>()));
      if (parts[k].get<long long>() == 1) continue;
      if (k >= ls.array("dims").size()) ls.fail("dims", "has fewer dimensions than \"split\"");
      cut += fmt::format("{}{}/{}", cut.empty() ? "" : " ", ls.element("dims", k).string("name"),
                         parts[k].get<long long>());
    }
    replay.layer_names.push_back(ls.string("name"));
    replay.layer_types.push_back(ls.has("type") ? ls.string("type") : "");
    replay.layer_cuts.push_back(cut.empty() ? "unsplit" : cut);
    detail.layer_splits.push_back(std::move(split));
  }
  if (std::abs(total - plan.objective) > 1e-6 * std::max(1.0, plan.objective))
    top.fail("layer_splits",
             fmt::format("the layers' costs sum to {:.6g}, not the plan's objective {:.6g}", total,
                         plan.objective));
  plan.devices_used = replay.devices;
  return {top.string("model"), std::move(plan), std::move(replay)};
}

PlanFile read_transformer(const io::Json& doc, const io::JsonObject& top, const std::string& path) {
  io::TransformerPlanFile f = io::transformer_plan_from_json(doc, path);
  Plan plan = Plan::of(PlanKind::kTransformer);
  plan.feasible = true;
  plan.devices_used = f.devices;
  plan.schedule = read_schedule(top, PlanKind::kTransformer,
                                f.config.vpp > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB);
  plan.microbatches = static_cast<int>(f.config.microbatches());
  plan.as<TrainingPlan>().config = f.config;
  return {f.model.name, std::move(plan), TransformerReplay{f.model, f.cluster, f.calibration}};
}

PlanFile read_mixed(const io::Json& doc, const io::JsonObject& top, const std::string& path) {
  io::MixedPlanFile f = io::mixed_plan_from_json(doc, path);
  Plan plan = Plan::of(PlanKind::kMixedTransformer);
  plan.feasible = true;
  plan.devices_used = f.config.devices();
  plan.schedule = read_schedule(top, PlanKind::kMixedTransformer, Schedule::kOneFOneB);
  plan.as<MixedTrainingPlan>().config = f.config;
  return {f.model.name, std::move(plan),
          MixedReplay{f.model, f.cluster, f.calibrations, f.devices}};
}

// --- what each kind's replay adds to the answer
// ---------------------------------------------------

struct ReplayKeys {
  const Plan& plan;
  io::Json& file;

  void operator()(const PipelineReplay& r) const {
    if (!plan.feasible) return;  // nothing to replay
    file["model_config"] = io::model_to_json(r.model);
    const PiperSettings& s = r.settings;
    io::Json settings = {{"max_devices", s.max_devices},
                         {"memory_per_device_bytes", s.memory_per_device_bytes},
                         {"bandwidth_bytes_per_s", s.bandwidth_bytes_per_s},
                         {"microbatches", s.microbatches}};
    if (s.allreduce_bandwidth_bytes_per_s > 0)
      settings["allreduce_bandwidth_bytes_per_s"] = s.allreduce_bandwidth_bytes_per_s;
    if (!s.device_groups.empty()) {
      io::Json groups = io::Json::array();
      for (const auto& g : s.device_groups)
        groups.push_back({{"name", g.name},
                          {"devices", g.count},
                          {"memory_bytes", g.memory_bytes},
                          {"time_factor", g.time_factor}});
      settings["device_groups"] = groups;
    }
    file["piper_settings"] = settings;
    if (r.cluster) file["cluster_config"] = io::cluster_to_json(*r.cluster);
  }
  void operator()(const DappleReplay&) const {}   // its stage figures are in the answer
  void operator()(const IntraOpReplay&) const {}  // its layers' costs are in the answer
  void operator()(const TransformerReplay& r) const {
    io::add_replay_keys(file, r.model, r.cluster, r.calibration);
  }
  void operator()(const MixedReplay& r) const {
    io::add_mixed_replay_keys(file, r.model, r.cluster, r.calibrations, r.devices,
                              plan.as<MixedTrainingPlan>().config);
  }
};

}  // namespace

PlanFile read_plan_file(const io::Json& doc, const std::string& path) {
  const io::JsonObject top(doc, path, "");
  if (!doc.is_object()) top.fail("format", "a plan file is a JSON object");
  const PlanKind kind = header_kind(top);
  refuse_other_kinds_keys(top, kind);
  PlanFile file = [&] {
    switch (kind) {
      case PlanKind::kPipeline:
        return read_pipeline(doc, top, path);
      case PlanKind::kDapple:
        return read_dapple(top);
      case PlanKind::kIntraOp:
        return read_intra_op(top);
      case PlanKind::kTransformer:
        return read_transformer(doc, top, path);
      case PlanKind::kMixedTransformer:
        return read_mixed(doc, top, path);
    }
    throw Error(ErrorKind::kInternal, path, "a plan kind without a reader");
  }();
  if (file.plan.kind() != kind || file.replay.index() != static_cast<std::size_t>(kind))
    throw Error(ErrorKind::kInternal, path, "the plan read is not of the kind its header names");
  return file;
}

PlanFile read_plan_file(const std::string& path) {
  return read_plan_file(io::parse_json_file(path), path);
}

io::Json plan_file_json(const PlanFile& file, io::Json answer) {
  if (file.replay.index() != static_cast<std::size_t>(file.plan.kind()))
    throw Error(
        ErrorKind::kInternal, "plan file",
        std::string("a ") + file.plan.planner() + " plan written with another kind's replay");
  std::visit(ReplayKeys{file.plan, answer}, file.replay);
  answer["format"] = kFormat;
  answer["version"] = 1;
  answer["planner"] = file.plan.planner();
  answer["cost_model"] = file.plan.cost_model();
  return answer;
}

}  // namespace paraplan::api
