// Native formats: round trips (model, cluster, plan) and header checks.
#include "io/native_json.h"

#include <gtest/gtest.h>

#include "cost/piper_cost.h"
#include "io/piper_reader.h"
#include "search/pipeline.h"
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
  Cluster c = zoo::default_cluster();
  c.links.push_back({0, 9, 1e9, 2e-6});
  Json first = cluster_to_json(c);
  Cluster back = cluster_from_json(parse_json_text(first.dump(), "c.json"), "c.json");
  EXPECT_EQ(cluster_to_json(back).dump(), first.dump());
  EXPECT_EQ(back.device_count(), 16);
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
