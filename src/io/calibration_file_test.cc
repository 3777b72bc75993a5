// Calibration files and YAML documents: round trips, and one clear message per mistake.
#include "io/calibration_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "io/native_json.h"
#include "io/yaml_json.h"

namespace paraplan::io {
namespace {

std::string write_calibration(const std::string& name, const std::string& text) {
  std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

void expect_calibration_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(CalibrationFile, RoundTripsEveryField) {
  Calibration c;
  c.device = "X1";
  c.gemm_half_efficiency_flops = 3e9;
  c.collective_efficiency = {0.5, 0.25, 0.125};
  c.overlap_slowdown = 0.2;
  c.runtime_reserved_bytes = 1.5e9;
  c.allocator_fragmentation = 0.3;
  const Calibration back = calibration_from_json(calibration_to_json(c), "mem");
  EXPECT_EQ(calibration_to_json(back), calibration_to_json(c));
}

TEST(CalibrationFile, YamlReadsLikeJson) {
  const Json j = calibration_to_json(Calibration{});
  std::string yaml;
  for (auto& [key, value] : j.items()) yaml += key + ": " + value.dump() + "\n";
  const std::string path = write_calibration("calibration.yaml", yaml);
  EXPECT_EQ(calibration_to_json(read_calibration_file(path)), j);
}

TEST(CalibrationFile, MistakesNameTheField) {
  Json j = calibration_to_json(Calibration{});
  j["gemm_efficiency"] = 1.5;
  expect_calibration_error([&] { calibration_from_json(j, "c.json"); }, "c.json: /gemm_efficiency");
  j = calibration_to_json(Calibration{});
  j.erase("ring_step_latency_s");
  expect_calibration_error([&] { calibration_from_json(j, "c.json"); }, "ring_step_latency_s");
  j = calibration_to_json(Calibration{});
  j["collective_efficiency"] = Json::array({0.9, -1});
  expect_calibration_error([&] { calibration_from_json(j, "c.json"); }, "/collective_efficiency/1");
  j = calibration_to_json(Calibration{});
  j["gemm_speed"] = 1;
  expect_calibration_error([&] { calibration_from_json(j, "c.json"); }, "gemm_speed");
  j = calibration_to_json(Calibration{});
  j["allocator_fragmentation"] = 1.5;
  expect_calibration_error([&] { calibration_from_json(j, "c.json"); }, "/allocator_fragmentation");
  j = calibration_to_json(Calibration{});
  j["moe_load_imbalance"] = 0.9;  // the busiest rank cannot carry less than the mean
  expect_calibration_error([&] { calibration_from_json(j, "c.json"); },
                           "c.json: /moe_load_imbalance");
  j.erase("moe_load_imbalance");  // optional: files from before it keep the default
  EXPECT_EQ(calibration_from_json(j, "c.json").moe_load_imbalance,
            Calibration{}.moe_load_imbalance);
  j = calibration_to_json(Calibration{});
  j["version"] = 1;  // written before the memory fields existed: say what to add
  j.erase("runtime_reserved_bytes");
  j.erase("allocator_fragmentation");
  expect_calibration_error([&] { calibration_from_json(j, "c.json"); }, "runtime_reserved_bytes");
  const std::string bad = write_calibration("bad.yaml", "device: A100\n  gemm: [1, 2\n");
  expect_calibration_error([&] { read_calibration_file(bad); }, "bad.yaml:");
}

// A version 2 file (before the FlashAttention, eager, logit, network-latency and NCCL fields)
// still reads: those fields take their version 2 meaning; naming one of them is an error.
TEST(CalibrationFile, Version2FilesReadWithTheirMeaning) {
  Json j = calibration_to_json(Calibration{});
  j["version"] = 2;
  for (const char* key :
       {"flash_attention_efficiency", "flash_backward_efficiency", "eager_hidden_bytes_per_element",
        "logit_bytes_per_element", "network_step_latency_s", "nccl_communicator_bytes"})
    j.erase(key);
  const Calibration c = calibration_from_json(j, "v2.json");
  EXPECT_EQ(c.flash_attention_efficiency, c.attention_efficiency);
  EXPECT_EQ(c.flash_backward_efficiency, c.attention_efficiency);
  EXPECT_EQ(c.eager_hidden_bytes_per_element, c.hidden_bytes_per_element);
  EXPECT_EQ(c.logit_bytes_per_element, 12);
  EXPECT_EQ(c.network_step_latency_s, c.ring_step_latency_s);
  EXPECT_EQ(c.nccl_communicator_bytes, 0);
  j["logit_bytes_per_element"] = 20;
  expect_calibration_error([&] { calibration_from_json(j, "v2.json"); },
                           "/logit_bytes_per_element: not a version 2 field");
}

TEST(ClusterFile, YamlWithRepeatedMachines) {
  const std::string path = write_calibration("cluster.yml", R"(format: paraplan-cluster
version: 1
name: four-h100-nodes
device_types:
  - {name: H100, memory_bytes: 85899345920, peak_flops_per_s: 9.89e14}
machines:
  - {devices: 8, device_type: H100, count: 4}
tiers:
  - {name: nvlink, bandwidth_bytes_per_s: 4.5e11}
  - {name: infiniband, bandwidth_bytes_per_s: 5.0e10}
)");
  const Cluster c = read_cluster_file(path);
  EXPECT_EQ(c.name, "four-h100-nodes");
  EXPECT_EQ(c.device_count(), 32);
  EXPECT_EQ(c.machine_count(), 4);
  EXPECT_DOUBLE_EQ(c.device_types[0].peak_flops_per_s, 9.89e14);
  EXPECT_DOUBLE_EQ(c.tiers[1].bandwidth_bytes_per_s, 5e10);
  const std::string wrong = write_calibration("wrong.yaml", R"(format: paraplan-cluster
version: 1
device_types: [{name: H100, memory_bytes: 1}]
machines: [{devices: 8, device_type: H200}]
tiers: [{name: nvlink, bandwidth_bytes_per_s: 1}]
)");
  expect_calibration_error([&] { read_cluster_file(wrong); }, "/machines/0/device_type");
}

TEST(Yaml, ScalarsBecomeTypedValues) {
  const Json j = parse_yaml_text("a: 3\nb: 2.5e3\nc: true\nd: ~\ne: text\nf: '7'\n", "t.yaml");
  EXPECT_TRUE(j["a"].is_number_integer());
  EXPECT_EQ(j["b"], 2500.0);
  EXPECT_EQ(j["c"], true);
  EXPECT_TRUE(j["d"].is_null());
  EXPECT_EQ(j["e"], "text");
  EXPECT_EQ(j["f"], "7");
}

}  // namespace
}  // namespace paraplan::io
