// Piper reader: the shipped inputs, and one clear message for each kind of bad input.
#include "io/piper_reader.h"

#include <gtest/gtest.h>

#include <regex>

namespace paraplan::io {
namespace {

const std::string kPiperFiles = std::string(PARAPLAN_DATA) + "/piper/";

TEST(PiperReader, ReadsTheThreeInputs) {
  struct Expect {
    const char* file;
    int nodes, edges;
  };
  for (auto e : {Expect{"bert32a100.json", 37, 67}, Expect{"gnmt.json", 78, 104},
                 Expect{"resnet.json", 177, 193}}) {
    PiperInput in = read_piper(kPiperFiles + e.file);
    EXPECT_EQ(in.model.size(), e.nodes) << e.file;
    EXPECT_EQ(static_cast<int>(in.model.edges.size()), e.edges) << e.file;
    EXPECT_EQ(in.max_devices, 10);
    EXPECT_EQ(in.memory_per_device_bytes, 8e10);
    EXPECT_EQ(in.bandwidth_bytes_per_s, 2.5e10);
  }
  PiperInput bert = read_piper(kPiperFiles + "bert32a100.json");
  EXPECT_EQ(bert.model.microbatches, 1920);
  EXPECT_EQ(bert.model.common_degrees(), (std::vector<int>{1, 2, 4, 8}));
  // syncTimeFw is keyed by predecessors (the README says the opposite).
  const Layer& first = bert.model.layers[3];
  EXPECT_EQ(first.by_degree[0].options[0].sync_in_bytes.size(), bert.model.in_edge_ids[3].size());
}

// A minimal valid input; each test breaks one thing.
std::string valid() {
  return R"({"maxMemoryPerDevice": 100, "maxDevices": 2, "bandwidth": 1, "mbsInBatch": 4,
 "nodes": [
  {"id": 0, "TMPCs": {"1": [{"id": "vanilla", "timePerSample": 1, "parameterSize": 1,
     "memoryUsageA": 1, "memoryUsageB": 1, "syncTimeFw": {}, "syncTimeBw": {"1": 0}}]}},
  {"id": 1, "TMPCs": {"1": [{"id": "vanilla", "timePerSample": 1, "parameterSize": 1,
     "memoryUsageA": 1, "memoryUsageB": 1, "syncTimeFw": {"0": 0}, "syncTimeBw": {}}]}}],
 "edges": [{"sourceId": 0, "destId": 1, "communicationCost": 5}]})";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

void expect_piper_error(const std::string& text, const std::string& pattern) {
  try {
    parse_piper(text, "in.json");
    ADD_FAILURE() << "accepted; expected an error matching " << pattern;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_TRUE(std::regex_search(e.what(), std::regex(pattern)))
        << "message: " << e.what() << "\nexpected: " << pattern;
  }
}

TEST(PiperReader, AcceptsTheMinimalInput) {
  PiperInput in = parse_piper(valid(), "in.json");
  EXPECT_EQ(in.model.size(), 2);
}

TEST(PiperReader, RejectsBadInput) {
  expect_piper_error("{\"nodes\": [", R"(in\.json:1:\d+: malformed JSON)");
  expect_piper_error(replace(valid(), "\"timePerSample\": 1,", "\"timePerSample\": NaN,"),
                     R"(in\.json:3:\d+: malformed JSON)");
  expect_piper_error(
      replace(valid(), "\"timePerSample\": 1,", "\"timePerSample\": -1,"),
      R"(in\.json: /nodes/0/TMPCs/1/0/timePerSample: must be a finite non-negative number, got -1)");
  expect_piper_error(replace(valid(), "\"timePerSample\": 1,", "\"timePerSample\": 1e999,"),
                     R"(malformed JSON|finite)");
  expect_piper_error(replace(valid(), "\"mbsInBatch\": 4,", "\"maxBatchSize\": 4,"),
                     R"(/maxBatchSize: unknown field)");
  expect_piper_error(replace(valid(), "\"mbsInBatch\": 4,", ""),
                     R"(/mbsInBatch: missing required field)");
  expect_piper_error(replace(valid(), "\"maxDevices\": 2,", "\"maxDevices\": 0,"),
                     R"(/maxDevices: must be an integer in \[1, 1000000\], got 0)");
  expect_piper_error(replace(valid(), "\"destId\": 1,", "\"destId\": 7,"),
                     R"(/edges/0/destId: no node has id 7)");
  expect_piper_error(replace(valid(), "\"communicationCost\": 5}]",
                             "\"communicationCost\": 5}, "
                             "{\"sourceId\": 0, \"destId\": 1, \"communicationCost\": 5}]"),
                     R"(duplicate edge 0 -> 1)");
  expect_piper_error(replace(valid(), "\"communicationCost\": 5}]",
                             "\"communicationCost\": 5}, "
                             "{\"sourceId\": 1, \"destId\": 0, \"communicationCost\": 5}]"),
                     R"(cycle)");
  expect_piper_error(replace(valid(), "\"syncTimeFw\": {\"0\": 0}", "\"syncTimeFw\": {}"),
                     R"(/nodes/1/TMPCs/1/0/syncTimeFw/0: missing)");
  expect_piper_error(replace(valid(), "\"syncTimeFw\": {}", "\"syncTimeFw\": {\"1\": 0}"),
                     R"(/nodes/0/TMPCs/1/0/syncTimeFw/1: no edge into this node from node 1)");
  expect_piper_error(replace(valid(), "{\"1\": [{\"id\": \"vanilla\", \"timePerSample\": 1",
                             "{\"0\": [{\"id\": \"vanilla\", \"timePerSample\": 1"),
                     R"(/nodes/0/TMPCs/0: a TMPCs key must be a tensor-parallel degree)");
  expect_piper_error(replace(valid(), "\"id\": 1,", "\"id\": 0,"), R"(duplicate node id 0)");
  expect_piper_error(replace(valid(), "\"nodes\": [", "\"nodes\": 3, \"x\": ["),
                     R"(unknown field|must be an array)");
}

TEST(PiperReader, MissingFileIsAnIoError) {
  try {
    read_piper("/nonexistent/model.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace paraplan::io
