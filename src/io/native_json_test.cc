// Native formats: round trips (model, cluster, plan) and header checks.
#include "io/native_json.h"

#include <gtest/gtest.h>

#include "cost/piper_cost.h"
#include "io/piper_reader.h"
#include "search/pipeline.h"
#include "zoo/cluster_presets.h"
#include "zoo/transformer_stack.h"

namespace paraplan::io {
namespace {

TEST(NativeJson, ModelRoundTripsExactly) {
  PiperInput in = read_piper(std::string(PARAPLAN_DATA) + "/piper/bert32a100.json");
  in.model.name = "bert";
  Json first = model_to_json(in.model);
  Model back = model_from_json(parse_json_text(first.dump(), "m.json"), "m.json");
  EXPECT_EQ(model_to_json(back).dump(), first.dump());
  EXPECT_EQ(back.size(), in.model.size());
  EXPECT_EQ(back.layers[5].by_degree[2].options[1].memory_fixed_bytes,
            in.model.layers[5].by_degree[2].options[1].memory_fixed_bytes);
}

TEST(NativeJson, ForwardTimeIsOptionalAndChecked) {
  Json doc = model_to_json(zoo::transformer_stack({}));
  EXPECT_FALSE(doc["layers"][0]["options"]["1"][0].contains("forward_time_s"));
  Json& option = doc["layers"][0]["options"]["1"][0];
  const double compute = option["compute_time_s"].get<double>();
  option["forward_time_s"] = compute / 4;
  Model back = model_from_json(doc, "m.json");
  EXPECT_EQ(back.layers[0].by_degree[0].options[0].forward_time_s, compute / 4);
  EXPECT_EQ(model_to_json(back).dump(), doc.dump());
  option["forward_time_s"] = compute * 2;
  try {
    model_from_json(doc, "m.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("forward_time_s: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("more than compute_time_s"), std::string::npos);
  }
}

TEST(NativeJson, ClusterRoundTrips) {
  for (const Cluster& c : {zoo::default_cluster(), *zoo::cluster_preset("pcie-2socket", 8),
                           *zoo::cluster_preset("mixed-a100-h100", 32)}) {
    Json first = cluster_to_json(c);
    Cluster back = cluster_from_json(parse_json_text(first.dump(), "c.json"), "c.json");
    EXPECT_EQ(cluster_to_json(back).dump(), first.dump());
    EXPECT_EQ(back.device_count(), c.device_count());
    EXPECT_EQ(back.links.size(), c.links.size());
  }
}

TEST(NativeJson, ClusterNetworkNamesSwitchesAndDerivesTiers) {
  const char* text = R"({"format": "paraplan-cluster", "version": 1,
    "device_types": [{"name": "gpu", "memory_bytes": 1e9}],
    "machines": [{"devices": 2, "device_type": "gpu", "count": 2}],
    "switches": ["a", "b"],
    "links": [{"from": 0, "to": "a", "bandwidth_bytes_per_s": 4e9},
              {"from": 1, "to": "a", "bandwidth_bytes_per_s": 4e9},
              {"from": 2, "to": "b", "bandwidth_bytes_per_s": 4e9},
              {"from": 3, "to": "b", "bandwidth_bytes_per_s": 4e9},
              {"from": "a", "to": "b", "bandwidth_bytes_per_s": 1e9, "latency_s": 3e-6}]})";
  const Cluster c = cluster_from_json(parse_json_text(text, "c.json"), "c.json");
  ASSERT_EQ(c.tiers.size(), 2u);
  EXPECT_DOUBLE_EQ(c.tiers[0].bandwidth_bytes_per_s, 4e9);
  EXPECT_DOUBLE_EQ(c.tiers[1].bandwidth_bytes_per_s, 1e9);
  EXPECT_DOUBLE_EQ(c.tiers[1].latency_s, 3e-6);
  const auto message = [&](const std::string& from, const std::string& to) {
    Json doc = parse_json_text(text, "c.json");
    doc["links"][4]["from"] = Json::parse(from);
    doc["links"][4]["to"] = Json::parse(to);
    try {
      cluster_from_json(doc, "c.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("\"c\"", "\"b\""),
            "c.json: /links/4/from: no switch is named \"c\" in /switches");
  EXPECT_EQ(message("4", "\"b\""), "c.json: /links/4/from: must be an integer in [0, 3], got 4");
  EXPECT_EQ(
      message("1.5", "\"b\""),
      "c.json: /links/4/from: must be a device id (0 .. 3) or a switch's name from /switches");
  EXPECT_EQ(message("\"a\"", "\"a\""), "c.json: /links/4: joins a to itself");
  EXPECT_EQ(message("0", "1"),
            "c.json: /links: device 2 cannot reach device 0 (no path of links between them)");
}

TEST(NativeJson, PlanRoundTrips) {
  PiperInput in = read_piper(std::string(PARAPLAN_DATA) + "/piper/bert32a100.json");
  PiperCostModel cost(in.model, {16, 8 * 1073741824.0, 25 * 1073741824.0, 1920});
  Plan plan = search_pipeline(in.model, cost).plan;
  Json first = plan_to_json(plan, in.model);
  Plan back = plan_from_json(parse_json_text(first.dump(), "p.json"), in.model, "p.json");
  EXPECT_EQ(plan_to_json(back, in.model).dump(), first.dump());
  EXPECT_EQ(cost.evaluate(back).objective, plan.objective);
}

TEST(NativeJson, RejectsWrongFormatAndVersion) {
  Json doc = model_to_json(zoo::transformer_stack({}));
  doc["version"] = 99;
  EXPECT_THROW(model_from_json(doc, "m.json"), Error);
  doc["version"] = kFormatVersion;
  doc["format"] = "paraplan-cluster";
  try {
    model_from_json(doc, "m.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.json: /format: must be \"paraplan-model\""),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace paraplan::io
