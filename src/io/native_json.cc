// Native JSON readers and writers.
#include "io/native_json.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>

#include "io/model_checks.h"
#include "io/yaml_json.h"
#include "ir/topology.h"

namespace paraplan::io {
namespace {

void check_header(const JsonObject& top, const char* format) {
  std::string f = top.string("format");
  if (f != format) top.fail("format", fmt::format("must be \"{}\", got \"{}\"", format, f));
  long long v = top.integer("version", 0, 1000000);
  if (v != kFormatVersion)
    top.fail("version", fmt::format("unsupported version {}; this paraplan reads version {}", v,
                                    kFormatVersion));
}

Json finite_or_null(double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); }

}  // namespace

bool looks_like_native_model(const Json& doc) {
  return doc.is_object() && doc.value("format", "") == "paraplan-model";
}

Json model_to_json(const Model& model) {
  Json layers = Json::array();
  for (int v = 0; v < model.size(); ++v) {
    const Layer& layer = model.layers[v];
    Json options = Json::object();
    for (const auto& deg : layer.by_degree) {
      Json list = Json::array();
      for (const auto& o : deg.options) {
        Json in = Json::object(), out = Json::object();
        for (std::size_t i = 0; i < model.in_edge_ids[v].size(); ++i)
          in[std::to_string(model.layers[model.edges[model.in_edge_ids[v][i]].from].id)] =
              o.sync_in_bytes[i];
        for (std::size_t i = 0; i < model.out_edge_ids[v].size(); ++i)
          out[std::to_string(model.layers[model.edges[model.out_edge_ids[v][i]].to].id)] =
              o.sync_out_bytes[i];
        Json option = {{"id", o.id},
                       {"compute_time_s", o.compute_time_s},
                       {"parameter_bytes", o.parameter_bytes},
                       {"memory_per_inflight_bytes", o.memory_per_inflight_bytes},
                       {"memory_fixed_bytes", o.memory_fixed_bytes},
                       {"sync_in_bytes", in},
                       {"sync_out_bytes", out}};
        if (o.forward_time_s > 0) option["forward_time_s"] = o.forward_time_s;
        if (o.optimizer_time_s > 0) option["optimizer_time_s"] = o.optimizer_time_s;
        list.push_back(std::move(option));
      }
      options[std::to_string(deg.degree)] = list;
    }
    layers.push_back({{"id", layer.id},
                      {"name", layer.name},
                      {"output_bytes", layer.output_bytes},
                      {"options", options}});
  }
  Json edges = Json::array();
  for (const auto& e : model.edges)
    edges.push_back(
        {{"from", model.layers[e.from].id}, {"to", model.layers[e.to].id}, {"bytes", e.bytes}});
  Json doc{{"format", "paraplan-model"},
           {"version", kFormatVersion},
           {"name", model.name},
           {"microbatches", model.microbatches},
           {"profile_batch_size", model.profile_batch_size},
           {"layers", layers},
           {"edges", edges}};
  const ProfileFacts& p = model.profiled;
  if (p.recorded())
    doc["profiled_on"] = {{"device", p.device},
                          {"flops_per_s", p.flops_per_s},
                          {"threads", p.threads},
                          {"input_shape", p.input_shape},
                          {"tokens", p.tokens}};
  return doc;
}

Model model_from_json(const Json& doc, const std::string& source) {
  JsonObject top(doc, source, "");
  top.only({"format", "version", "name", "microbatches", "profile_batch_size", "profiled_on",
            "layers", "edges"});
  check_header(top, "paraplan-model");
  Model model;
  if (top.has("name")) model.name = top.string("name");
  model.microbatches = static_cast<int>(top.integer("microbatches", 1, 1000000000));
  if (top.has("profile_batch_size"))
    model.profile_batch_size = static_cast<int>(top.integer("profile_batch_size", 1, 1000000000));
  if (top.has("profiled_on")) {
    const JsonObject p = top.object("profiled_on");
    p.only({"device", "flops_per_s", "threads", "input_shape", "tokens"});
    ProfileFacts& f = model.profiled;
    f.device = p.string("device");
    f.flops_per_s = p.positive_number("flops_per_s");
    f.threads = static_cast<int>(p.integer("threads", 1, 1 << 16));
    const Json& shape = p.array("input_shape");
    for (const Json& d : shape) {
      if (!d.is_number_integer() || d.get<long long>() < 1)
        p.fail("input_shape", "must list positive sizes, the micro-batch first");
      f.input_shape.push_back(d.get<std::int64_t>());
    }
    if (f.input_shape.empty())
      p.fail("input_shape", "must list positive sizes, the micro-batch first");
    f.tokens = p.has("tokens") ? p.integer("tokens", 0, 1LL << 40) : 0;
  }
  const Json& layers = top.array("layers");
  std::map<long long, int> index_of;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    JsonObject l = top.element("layers", i);
    l.only({"id", "name", "output_bytes", "options"});
    Layer layer;
    layer.id = l.integer("id", -(1LL << 53), 1LL << 53);
    if (l.has("name")) layer.name = l.string("name");
    if (l.has("output_bytes")) layer.output_bytes = l.number("output_bytes");
    if (!index_of.emplace(layer.id, static_cast<int>(i)).second)
      l.fail("id", fmt::format("duplicate layer id {}", layer.id));
    model.layers.push_back(std::move(layer));
  }
  const Json& edges = top.array("edges");
  for (std::size_t i = 0; i < edges.size(); ++i) {
    JsonObject e = top.element("edges", i);
    e.only({"from", "to", "bytes"});
    Edge edge;
    for (const char* key : {"from", "to"}) {
      long long id = e.integer(key, -(1LL << 53), 1LL << 53);
      auto it = index_of.find(id);
      if (it == index_of.end()) e.fail(key, fmt::format("no layer has id {}", id));
      (std::string(key) == "from" ? edge.from : edge.to) = it->second;
    }
    edge.bytes = e.number("bytes");
    model.edges.push_back(edge);
  }
  check_edges(model, source);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    JsonObject options = top.element("layers", i).object("options");
    for (const auto& [key, list] : options.json().items()) {
      int t = 0;
      auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), t);
      if (ec != std::errc() || ptr != key.data() + key.size() || t < 1 || t > 1000000)
        options.fail(key, "keys must be tensor-parallel degrees (positive integers)");
      TensorParallelOptions deg;
      deg.degree = t;
      const Json& arr = options.array(key);
      for (std::size_t j = 0; j < arr.size(); ++j) {
        JsonObject o = options.element(key, j);
        o.only({"id", "compute_time_s", "forward_time_s", "optimizer_time_s", "parameter_bytes",
                "memory_per_inflight_bytes", "memory_fixed_bytes", "sync_in_bytes",
                "sync_out_bytes"});
        LayerOption opt;
        opt.id = o.string("id");
        opt.compute_time_s = o.number("compute_time_s");
        if (o.has("forward_time_s")) {
          opt.forward_time_s = o.number("forward_time_s");
          if (opt.forward_time_s > opt.compute_time_s)
            o.fail("forward_time_s", fmt::format("{} s is more than compute_time_s ({} s), "
                                                 "which includes it",
                                                 opt.forward_time_s, opt.compute_time_s));
        }
        if (o.has("optimizer_time_s")) opt.optimizer_time_s = o.number("optimizer_time_s");
        opt.parameter_bytes = o.number("parameter_bytes");
        opt.memory_per_inflight_bytes = o.number("memory_per_inflight_bytes");
        opt.memory_fixed_bytes = o.number("memory_fixed_bytes");
        for (bool incoming : {true, false}) {
          const char* field = incoming ? "sync_in_bytes" : "sync_out_bytes";
          const auto& ids = incoming ? model.in_edge_ids[i] : model.out_edge_ids[i];
          std::vector<double>& bytes = incoming ? opt.sync_in_bytes : opt.sync_out_bytes;
          bytes.assign(ids.size(), 0.0);
          if (!o.has(field)) continue;  // optional: zero extra bytes
          JsonObject sync = o.object(field);
          for (const auto& [id_text, value] : sync.json().items()) {
            int slot = -1;
            for (std::size_t k = 0; k < ids.size(); ++k) {
              const Edge& e = model.edges[ids[k]];
              if (std::to_string(model.layers[incoming ? e.from : e.to].id) == id_text)
                slot = static_cast<int>(k);
            }
            if (slot < 0)
              sync.fail(id_text, fmt::format("layer {} is not a {} of this layer", id_text,
                                             incoming ? "predecessor" : "successor"));
            bytes[slot] = checked_number(value, sync.place(id_text), false);
          }
        }
        deg.options.push_back(std::move(opt));
      }
      model.layers[i].by_degree.push_back(std::move(deg));
    }
    std::sort(model.layers[i].by_degree.begin(), model.layers[i].by_degree.end(),
              [](const auto& a, const auto& b) { return a.degree < b.degree; });
  }
  check_model(model, source);
  return model;
}

Model read_native_model(const std::string& path) {
  return model_from_json(parse_json_file(path), path);
}

Json cluster_to_json(const Cluster& c) {
  Json types = Json::array();
  for (const auto& t : c.device_types) {
    types.push_back({{"name", t.name},
                     {"memory_bytes", t.memory_bytes},
                     {"peak_flops_per_s", t.peak_flops_per_s}});
    if (!t.calibration_file.empty()) types.back()["calibration"] = t.calibration_file;
  }
  Json machines = Json::array();
  for (int m = 0; m < c.machine_count(); ++m)
    machines.push_back({{"devices", c.machine_sizes[m]},
                        {"device_type", c.device_types[c.machine_device_type[m]].name}});
  Json tiers = Json::array();
  for (const auto& t : c.tiers) {
    Json tier = {{"name", t.name},
                 {"bandwidth_bytes_per_s", t.bandwidth_bytes_per_s},
                 {"latency_s", t.latency_s}};
    if (t.allreduce_bandwidth_bytes_per_s > 0)
      tier["allreduce_bandwidth_bytes_per_s"] = t.allreduce_bandwidth_bytes_per_s;
    tiers.push_back(std::move(tier));
  }
  const int devices = c.device_count();
  const auto node = [&](int id) {
    return id < devices ? Json(id) : Json(c.switches.at(static_cast<std::size_t>(id - devices)));
  };
  Json links = Json::array();
  for (const auto& l : c.links)
    links.push_back({{"from", node(l.from)},
                     {"to", node(l.to)},
                     {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s},
                     {"latency_s", l.latency_s}});
  Json doc{{"format", "paraplan-cluster"}, {"version", kFormatVersion}, {"name", c.name},
           {"device_types", types},        {"machines", machines},      {"tiers", tiers}};
  if (!c.switches.empty()) doc["switches"] = c.switches;
  if (!c.links.empty()) doc["links"] = links;
  return doc;
}

Cluster cluster_from_json(const Json& doc, const std::string& source) {
  JsonObject top(doc, source, "");
  top.only({"format", "version", "name", "device_types", "machines", "tiers", "switches", "links"});
  check_header(top, "paraplan-cluster");
  Cluster c;
  if (top.has("name")) c.name = top.string("name");
  std::map<std::string, int> type_index;
  const Json& types = top.array("device_types");
  for (std::size_t i = 0; i < types.size(); ++i) {
    JsonObject t = top.element("device_types", i);
    t.only({"name", "memory_bytes", "peak_flops_per_s", "calibration"});
    DeviceType dt{t.string("name"), t.positive_number("memory_bytes"),
                  t.has("peak_flops_per_s") ? t.number("peak_flops_per_s") : 0.0};
    if (t.has("calibration")) {  // relative to the cluster file
      std::filesystem::path file = t.string("calibration");
      if (file.is_relative()) file = std::filesystem::path(source).parent_path() / file;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(file, ec))
        t.fail("calibration", "no calibration file " + file.string() +
                                  " (a path to a paraplan-calibration file, relative to this one)");
      dt.calibration_file = std::filesystem::absolute(file).lexically_normal().string();
    }
    if (!type_index.emplace(dt.name, static_cast<int>(i)).second)
      t.fail("name", "duplicate device type name \"" + dt.name + "\"");
    c.device_types.push_back(dt);
  }
  const Json& machines = top.array("machines");
  if (machines.empty()) top.fail("machines", "needs at least one machine");
  for (std::size_t i = 0; i < machines.size(); ++i) {
    JsonObject m = top.element("machines", i);
    m.only({"devices", "device_type", "count"});
    const int devices = static_cast<int>(m.integer("devices", 1, 1000000));
    std::string type = m.string("device_type");
    auto it = type_index.find(type);
    if (it == type_index.end())
      m.fail("device_type", "no device type is named \"" + type + "\" in /device_types");
    // `count` repeats the machine (a cluster of 512 identical nodes is one entry).
    const long long count = m.has("count") ? m.integer("count", 1, 1000000) : 1;
    if (static_cast<long long>(c.device_count()) + count * devices > (1LL << 24))
      m.fail("count", "more than 16,777,216 devices in the cluster");
    for (long long k = 0; k < count; ++k) {
      c.machine_sizes.push_back(devices);
      c.machine_device_type.push_back(it->second);
    }
  }
  // An empty /links (what earlier versions wrote) means no network graph.
  const bool graph = top.has("links") && !top.array("links").empty();
  const Json& tiers = graph && !top.has("tiers") ? Json::array() : top.array("tiers");
  if (tiers.empty() && !graph)
    top.fail("tiers", "needs at least one link tier (or a network of switches and links)");
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    JsonObject t = top.element("tiers", i);
    t.only({"name", "bandwidth_bytes_per_s", "latency_s", "allreduce_bandwidth_bytes_per_s"});
    c.tiers.push_back({t.string("name"), t.positive_number("bandwidth_bytes_per_s"),
                       t.has("latency_s") ? t.number("latency_s") : 0.0,
                       t.has("allreduce_bandwidth_bytes_per_s")
                           ? t.positive_number("allreduce_bandwidth_bytes_per_s")
                           : 0.0});
  }
  // The network as a graph: switches by name, links between devices (ids) and switches (names).
  const int n = c.device_count();
  std::map<std::string, int> switch_index;
  if (top.has("switches")) {
    if (!graph) top.fail("switches", "switches need /links that join them to the devices");
    const Json& switches = top.array("switches");
    for (std::size_t i = 0; i < switches.size(); ++i) {
      const std::string place = "switches/" + std::to_string(i);
      if (!switches[i].is_string() || switches[i].get<std::string>().empty())
        top.fail(place, "must be a switch's name (a non-empty string)");
      const std::string name = switches[i].get<std::string>();
      if (!switch_index.emplace(name, n + static_cast<int>(i)).second)
        top.fail(place, "duplicate switch name \"" + name + "\"");
      c.switches.push_back(name);
    }
  }
  if (graph) {
    const Json& links = top.array("links");
    if (links.empty())
      top.fail("links", "needs at least one link (or leave it out and give tiers)");
    for (std::size_t i = 0; i < links.size(); ++i) {
      JsonObject l = top.element("links", i);
      l.only({"from", "to", "bandwidth_bytes_per_s", "latency_s"});
      const auto end = [&](const char* key) {
        const Json& v = l.field(key);
        if (v.is_string()) {
          auto it = switch_index.find(v.get<std::string>());
          if (it == switch_index.end())
            l.fail(key, "no switch is named \"" + v.get<std::string>() + "\" in /switches");
          return it->second;
        }
        if (!v.is_number_integer())
          l.fail(key, "must be a device id (0 .. " + std::to_string(n - 1) +
                          ") or a switch's name from /switches");
        return static_cast<int>(l.integer(key, 0, n - 1));
      };
      const int from = end("from"), to = end("to");
      c.links.push_back({from, to, l.positive_number("bandwidth_bytes_per_s"),
                         l.has("latency_s") ? l.number("latency_s") : 0.0});
    }
    // Routes exist between every pair (or the message names the pair); flat models get tiers.
    const Topology topology = cluster_topology(c, source);
    if (c.tiers.empty()) c.tiers = tiers_of(c, topology);
  }
  return c;
}

Cluster read_cluster_file(const std::string& path) {
  return cluster_from_json(parse_json_or_yaml_file(path), path);
}

Json plan_to_json(const Plan& plan, const Model& model) {
  Json stages = Json::array();
  for (const auto& st : plan.stages) {
    Json layers = Json::array(), options = Json::array();
    for (std::size_t j = 0; j < st.layers.size(); ++j) {
      const Layer& layer = model.layers[st.layers[j]];
      layers.push_back(layer.id);
      const auto* opts = layer.options_for(st.tensor_parallel);
      options.push_back(opts ? Json((*opts)[st.option_index[j]].id) : Json(nullptr));
    }
    Json stage = {{"layers", layers},
                  {"options", options},
                  {"data_parallel", st.data_parallel},
                  {"tensor_parallel", st.tensor_parallel},
                  {"devices", st.devices()},
                  {"device_ids", st.device_ids},
                  {"inflight_microbatches", st.inflight_microbatches},
                  {"time", finite_or_null(st.time)},
                  {"compute_time", st.compute_time},
                  {"communication_time", st.communication_time},
                  {"allreduce_time", st.allreduce_time},
                  {"memory_bytes", st.memory_bytes}};
    if (st.optimizer_time > 0) stage["optimizer_time"] = st.optimizer_time;
    if (st.device_type > 0) stage["device_type"] = st.device_type;
    stages.push_back(std::move(stage));
  }
  Json out{{"format", "paraplan-plan"},
           {"version", kFormatVersion},
           {"model", model.name},
           {"planner", plan.planner()},
           {"cost_model", plan.cost_model()},
           {"feasible", plan.feasible},
           {"objective", finite_or_null(plan.objective)}};
  const auto* dapple = plan.get_if<DappleDetail>();
  if (dapple) out["speedup"] = dapple->speedup;
  out["schedule"] = schedule_name(plan.schedule);
  out["microbatches"] = plan.microbatches;
  out["pipeline_replicas"] = dapple ? dapple->pipeline_replicas : 1;
  out["devices_used"] = plan.devices_used;
  out["stages"] = stages;
  const auto* intra_op = plan.get_if<IntraOpDetail>();
  if (intra_op) out["step_time_s"] = intra_op->step_time_s;
  if (const auto* pipeline = plan.get_if<PipelineDetail>(); pipeline && pipeline->placement) {
    const PlacementFigures& p = *pipeline->placement;
    out["placement"] = {{"cluster", p.cluster},
                        {"cost_s", p.cost_s},
                        {"rank_order_cost_s", p.rank_order_cost_s},
                        {"lower_bound_s", p.lower_bound_s},
                        {"exact", p.exact}};
  }
  if (intra_op && !intra_op->layer_splits.empty()) {
    Json splits = Json::array();
    for (const auto& ls : intra_op->layer_splits) {
      const Layer& layer = model.layers[ls.layer];
      Json dims = Json::array();
      if (layer.op)
        for (const auto& d : layer.op->dims)
          dims.push_back({{"name", d.name}, {"extent", d.extent}});
      splits.push_back({{"layer", layer.id},
                        {"name", layer.name},
                        {"type", layer.op ? std::string(op_kind_name(layer.op->kind)) : ""},
                        {"dims", dims},
                        {"split", ls.split},
                        {"devices", ls.devices},
                        {"compute", ls.compute},
                        {"communication", ls.communication},
                        {"redistribution", ls.redistribution}});
    }
    out["layer_splits"] = splits;
  }
  return out;
}

std::string plan_planner(const Json& doc) {
  if (!doc.is_object()) return "";
  if (doc.contains("planner") && doc["planner"].is_string())
    return doc["planner"].get<std::string>();
  // Files written before the field: the planner the cost model belongs to.
  const std::string cost_model = doc.value("cost_model", "");
  return cost_model == "pase" ? "intra-op" : "pipeline";
}

Plan plan_from_json(const Json& doc, const Model& model, const std::string& source) {
  JsonObject top(doc, source, "");
  top.only({"format", "version", "model", "planner", "cost_model", "feasible", "objective",
            "speedup", "schedule", "microbatches", "pipeline_replicas", "devices_used", "stages",
            "step_time_s", "layer_splits", "placement"});
  check_header(top, "paraplan-plan");
  const std::string cost_model = top.string("cost_model");
  PlanKind kind = PlanKind::kPipeline;
  if (cost_model == "dapple")
    kind = PlanKind::kDapple;
  else if (cost_model == "pase")
    kind = PlanKind::kIntraOp;
  else if (cost_model != "piper")
    top.fail("cost_model", "must be piper, dapple or pase, got \"" + cost_model + "\"");
  Plan plan = Plan::of(kind);
  if (top.has("planner") && top.string("planner") != plan.planner())
    top.fail("planner", "the " + cost_model + " cost model belongs to the " +
                            std::string(plan.planner()) + " planner");
  const Json& feasible = top.field("feasible");
  if (!feasible.is_boolean()) top.fail("feasible", "must be true or false");
  plan.feasible = feasible.get<bool>();
  plan.objective = top.field("objective").is_null() ? INFINITY : top.number("objective");
  if (top.has("speedup")) {
    if (kind != PlanKind::kDapple) top.fail("speedup", "only DAPPLE plans have a speedup");
    plan.as<DappleDetail>().speedup = top.number("speedup");
  }
  const std::string schedule = top.string("schedule");
  const std::optional<Schedule> read_schedule = schedule_from_name(schedule);
  if (!read_schedule || !schedule_fits(kind, *read_schedule))
    top.fail("schedule", fmt::format("a {} plan runs under {}, got \"{}\"", cost_model,
                                     schedules_of(kind), schedule));
  plan.schedule = *read_schedule;
  plan.microbatches = static_cast<int>(top.integer("microbatches", 1, 1000000000));
  const int replicas = static_cast<int>(top.integer("pipeline_replicas", 1, 1000000000));
  if (kind == PlanKind::kDapple)
    plan.as<DappleDetail>().pipeline_replicas = replicas;
  else if (replicas != 1)
    top.fail("pipeline_replicas", "only DAPPLE plans replicate the whole pipeline");
  plan.devices_used = static_cast<int>(top.integer("devices_used", 0, 1000000000));
  std::map<long long, int> index_of;
  for (int v = 0; v < model.size(); ++v) index_of[model.layers[v].id] = v;
  const Json& stages = top.array("stages");
  for (std::size_t i = 0; i < stages.size(); ++i) {
    JsonObject s = top.element("stages", i);
    Stage st;
    st.data_parallel = static_cast<int>(s.integer("data_parallel", 1, 1000000000));
    st.tensor_parallel = static_cast<int>(s.integer("tensor_parallel", 1, 1000000000));
    st.inflight_microbatches = static_cast<int>(s.integer("inflight_microbatches", 0, 1000000000));
    const Json& layers = s.array("layers");
    const Json& options = s.array("options");
    if (options.size() != layers.size()) s.fail("options", "needs one option id per layer");
    for (std::size_t j = 0; j < layers.size(); ++j) {
      std::string where = s.place("layers") + "/" + std::to_string(j);
      if (!layers[j].is_number_integer() || !index_of.count(layers[j].get<long long>()))
        throw Error(ErrorKind::kInput, where,
                    "must be the id of a layer of model \"" + model.name + "\", got " +
                        describe(layers[j]));
      int v = index_of.at(layers[j].get<long long>());
      const auto* opts = model.layers[v].options_for(st.tensor_parallel);
      int found = -1;
      for (int k = 0; opts && k < static_cast<int>(opts->size()); ++k)
        if (options[j].is_string() && (*opts)[k].id == options[j].get<std::string>()) found = k;
      if (found < 0)
        throw Error(
            ErrorKind::kInput, s.place("options") + "/" + std::to_string(j),
            fmt::format("layer {} has no option {} at tensor-parallel degree {}",
                        layers[j].get<long long>(), describe(options[j]), st.tensor_parallel));
      st.layers.push_back(v);
      st.option_index.push_back(found);
    }
    if (s.has("device_ids")) {
      const Json& ids = s.array("device_ids");
      for (std::size_t j = 0; j < ids.size(); ++j) {
        if (!ids[j].is_number_integer() || ids[j].get<long long>() < 0 ||
            ids[j].get<long long>() > (1LL << 30))
          s.fail("device_ids",
                 fmt::format("element {} must be a device id (an integer from 0), got {}", j,
                             describe(ids[j])));
        st.device_ids.push_back(static_cast<int>(ids[j].get<long long>()));
      }
      if (!st.device_ids.empty() && static_cast<int>(st.device_ids.size()) != st.devices())
        s.fail("device_ids",
               fmt::format("names {} devices; the stage has {} (d × t: replica-major, t per "
                           "replica) or none",
                           st.device_ids.size(), st.devices()));
    }
    for (const char* key : {"compute_time", "communication_time", "allreduce_time", "memory_bytes"})
      if (!s.has(key)) s.fail(key, "missing required field");
    st.time = s.field("time").is_null() ? INFINITY : s.number("time");
    st.compute_time = s.number("compute_time");
    st.communication_time = s.number("communication_time");
    st.allreduce_time = s.number("allreduce_time");
    if (s.has("optimizer_time")) st.optimizer_time = s.number("optimizer_time");
    if (s.has("device_type")) st.device_type = static_cast<int>(s.integer("device_type", 0, 1000));
    st.memory_bytes = s.number("memory_bytes");
    plan.stages.push_back(std::move(st));
  }
  if (top.has("step_time_s")) {
    if (kind != PlanKind::kIntraOp) top.fail("step_time_s", "only intra-operator plans have it");
    plan.as<IntraOpDetail>().step_time_s = top.number("step_time_s");
  }
  if (top.has("placement")) {
    JsonObject p = top.object("placement");
    p.only({"cluster", "cost_s", "rank_order_cost_s", "lower_bound_s", "exact"});
    if (kind != PlanKind::kPipeline) top.fail("placement", "only Piper's plans are placed");
    if (!p.field("exact").is_boolean()) p.fail("exact", "must be true or false");
    plan.as<PipelineDetail>().placement =
        PlacementFigures{p.string("cluster"), p.number("cost_s"), p.number("rank_order_cost_s"),
                         p.number("lower_bound_s"), p.field("exact").get<bool>()};
  }
  if (top.has("layer_splits")) {
    if (kind != PlanKind::kIntraOp) top.fail("layer_splits", "only intra-operator plans have them");
    const Json& splits = top.array("layer_splits");
    for (std::size_t i = 0; i < splits.size(); ++i) {
      JsonObject s = top.element("layer_splits", i);
      s.only({"layer", "name", "type", "dims", "split", "devices", "compute", "communication",
              "redistribution"});
      const Json& id = s.field("layer");
      if (!id.is_number_integer() || !index_of.count(id.get<long long>()))
        s.fail("layer",
               "must be the id of a layer of model \"" + model.name + "\", got " + describe(id));
      LayerSplit ls;
      ls.layer = index_of.at(id.get<long long>());
      const Layer& layer = model.layers[ls.layer];
      const Json& split = s.array("split");
      std::size_t rank = layer.op ? layer.op->dims.size() : 0;
      if (split.size() != rank)
        s.fail("split", fmt::format("needs one part count per dimension of layer {} ({} "
                                    "dimensions), got {}",
                                    id.get<long long>(), rank, split.size()));
      long long devices = 1;
      for (std::size_t j = 0; j < split.size(); ++j) {
        if (!split[j].is_number_integer() || split[j].get<long long>() < 1 ||
            layer.op->dims[j].extent % split[j].get<long long>() != 0)
          throw Error(ErrorKind::kInput, s.place("split") + "/" + std::to_string(j),
                      fmt::format("must be a divisor of the dimension's extent {}, got {}",
                                  layer.op->dims[j].extent, describe(split[j])));
        devices *= split[j].get<long long>();
        if (devices > (1LL << 30)) s.fail("split", "uses more than 2^30 devices");
        ls.split.push_back(static_cast<int>(split[j].get<long long>()));
      }
      ls.devices = static_cast<int>(devices);
      ls.compute = s.number("compute");
      ls.communication = s.number("communication");
      ls.redistribution = s.number("redistribution");
      plan.as<IntraOpDetail>().layer_splits.push_back(std::move(ls));
    }
  }
  return plan;
}

}  // namespace paraplan::io
