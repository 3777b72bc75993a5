// Piper JSON reader. Nodes are renumbered by array position (as Piper does); ids stay for output.
#include "io/piper_reader.h"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <set>

#include "io/model_checks.h"

namespace paraplan::io {
namespace {

// Parses a tensor-parallel degree key such as "4".
int parse_degree(const std::string& key, const JsonObject& tmpcs) {
  int t = 0;
  auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), t);
  if (ec != std::errc() || ptr != key.data() + key.size() || t < 1 || t > 10000)
    tmpcs.fail(key,
               "a TMPCs key must be a tensor-parallel degree written as an integer in "
               "[1, 10000]");
  return t;
}

// Reads syncTimeFw/syncTimeBw: keyed by the ids of exactly the neighbours on `edge_ids`.
std::vector<double> read_sync(const JsonObject& tmpc, const char* key, const Model& model,
                              const std::vector<int>& edge_ids, bool incoming,
                              const std::map<long long, int>& index_of) {
  JsonObject sync = tmpc.object(key);
  std::vector<double> bytes(edge_ids.size(), 0.0);
  std::vector<bool> found(edge_ids.size(), false);
  for (const auto& [id_text, value] : sync.json().items()) {
    long long id = 0;
    auto [ptr, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    int slot = -1;
    if (ec == std::errc() && ptr == id_text.data() + id_text.size() && index_of.count(id)) {
      int neighbour = index_of.at(id);
      for (std::size_t i = 0; i < edge_ids.size(); ++i) {
        const Edge& e = model.edges[edge_ids[i]];
        if ((incoming ? e.from : e.to) == neighbour) slot = static_cast<int>(i);
      }
    }
    if (slot < 0)
      sync.fail(id_text, fmt::format("no edge {} this node from node {}; {} must be keyed by the "
                                     "ids of its {}",
                                     incoming ? "into" : "out of", id_text, key,
                                     incoming ? "predecessors" : "successors"));
    bytes[slot] = checked_number(value, sync.place(id_text), false);
    found[slot] = true;
  }
  for (std::size_t i = 0; i < edge_ids.size(); ++i) {
    if (!found[i]) {
      const Edge& e = model.edges[edge_ids[i]];
      long long id = model.layers[incoming ? e.from : e.to].id;
      sync.fail(std::to_string(id), fmt::format("missing: every {} needs an entry in {}",
                                                incoming ? "predecessor" : "successor", key));
    }
  }
  return bytes;
}

}  // namespace

bool looks_like_piper(const Json& doc) {
  return doc.is_object() && doc.contains("nodes") && doc.contains("edges") &&
         (doc.contains("mbsInBatch") || doc.contains("maxDevices"));
}

PiperInput parse_piper(const std::string& text, const std::string& source) {
  Json doc = parse_json_text(text, source);
  JsonObject top(doc, source, "");
  top.only({"maxMemoryPerDevice", "maxDevices", "bandwidth", "mbsInBatch", "nodes", "edges"});
  if (!top.has("mbsInBatch") && top.has("maxBatchSize"))
    top.fail("mbsInBatch",
             "missing (Piper's README calls it maxBatchSize, but the field is "
             "mbsInBatch)");

  PiperInput in;
  in.memory_per_device_bytes = top.positive_number("maxMemoryPerDevice");
  in.max_devices = static_cast<int>(top.integer("maxDevices", 1, 1000000));
  in.bandwidth_bytes_per_s = top.positive_number("bandwidth");
  Model& model = in.model;
  model.microbatches = static_cast<int>(top.integer("mbsInBatch", 1, 1000000000));

  const Json& nodes = top.array("nodes");
  std::map<long long, int> index_of;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    JsonObject node = top.element("nodes", i);
    node.only({"id", "name", "TMPCs"});
    Layer layer;
    layer.id = node.integer("id", -(1LL << 53), 1LL << 53);
    if (node.has("name")) layer.name = node.string("name");
    if (!index_of.emplace(layer.id, static_cast<int>(i)).second)
      node.fail("id", fmt::format("duplicate node id {}", layer.id));
    model.layers.push_back(std::move(layer));
  }

  const Json& edges = top.array("edges");
  for (std::size_t i = 0; i < edges.size(); ++i) {
    JsonObject edge = top.element("edges", i);
    edge.only({"sourceId", "destId", "communicationCost"});
    Edge e;
    for (const char* key : {"sourceId", "destId"}) {
      long long id = edge.integer(key, -(1LL << 53), 1LL << 53);
      auto it = index_of.find(id);
      if (it == index_of.end()) edge.fail(key, fmt::format("no node has id {}", id));
      (std::string(key) == "sourceId" ? e.from : e.to) = it->second;
    }
    e.bytes = edge.number("communicationCost");
    model.edges.push_back(e);
  }
  check_edges(model, source);

  for (std::size_t i = 0; i < nodes.size(); ++i) {
    JsonObject node = top.element("nodes", i);
    JsonObject tmpcs = node.object("TMPCs");
    std::map<int, TensorParallelOptions> by_degree;
    for (const auto& [key, list] : tmpcs.json().items()) {
      int t = parse_degree(key, tmpcs);
      if (by_degree.count(t)) tmpcs.fail(key, "tensor-parallel degree listed twice");
      TensorParallelOptions& opts = by_degree[t];
      opts.degree = t;
      const Json& arr = tmpcs.array(key);
      std::set<std::string> ids;
      for (std::size_t j = 0; j < arr.size(); ++j) {
        JsonObject tmpc = tmpcs.element(key, j);
        tmpc.only({"id", "timePerSample", "parameterSize", "memoryUsageA", "memoryUsageB",
                   "syncTimeFw", "syncTimeBw"});
        LayerOption o;
        o.id = tmpc.string("id");
        if (o.id.empty()) tmpc.fail("id", "must be a non-empty string");
        if (!ids.insert(o.id).second)
          tmpc.fail("id", "duplicate TMPC id \"" + o.id + "\" for this degree");
        o.compute_time_s = tmpc.number("timePerSample");
        o.parameter_bytes = tmpc.number("parameterSize");
        o.memory_per_inflight_bytes = tmpc.number("memoryUsageA");
        o.memory_fixed_bytes = tmpc.number("memoryUsageB");
        o.sync_in_bytes =
            read_sync(tmpc, "syncTimeFw", model, model.in_edge_ids[i], true, index_of);
        o.sync_out_bytes =
            read_sync(tmpc, "syncTimeBw", model, model.out_edge_ids[i], false, index_of);
        opts.options.push_back(std::move(o));
      }
    }
    for (auto& [t, opts] : by_degree) model.layers[i].by_degree.push_back(std::move(opts));
  }
  check_model(model, source);
  return in;
}

PiperInput read_piper(const std::string& path) { return parse_piper(read_text_file(path), path); }

}  // namespace paraplan::io
