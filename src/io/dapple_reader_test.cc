// DAPPLE / PipeDream profile reader: the shipped profiles and line-numbered errors.
#include "io/dapple_reader.h"

#include <gtest/gtest.h>

#include <regex>

#include "ir/error.h"

namespace paraplan::io {
namespace {

const std::string kDappleFiles = std::string(PARAPLAN_DATA) + "/dapple/";

TEST(DappleReader, ReadsProfiles) {
  Model vgg = read_dapple(kDappleFiles + "vgg-19-pbs-32.txt");
  EXPECT_EQ(vgg.profile_batch_size, 32);
  EXPECT_EQ(vgg.size(), 26);
  EXPECT_EQ(vgg.edges.size(), 25u);
  Model vgg16 = read_dapple(kDappleFiles + "vgg16.txt", 32);  // the file name states no batch
  EXPECT_EQ(vgg16.profile_batch_size, 32);
  EXPECT_EQ(read_dapple(kDappleFiles + "vgg16.txt").profile_batch_size, 1);
  Model bert = read_dapple(kDappleFiles + "bert-24-pbs-6.txt");  // has a trailing space
  EXPECT_EQ(bert.layers[0].name, "input_ids");
  EXPECT_EQ(bert.layers[0].id, 1);
}

void expect_dapple_error(const std::string& text, const std::string& pattern) {
  try {
    parse_dapple(text, "p.txt", 1);
    ADD_FAILURE() << "accepted; expected " << pattern;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_TRUE(std::regex_search(e.what(), std::regex(pattern)))
        << e.what() << "\nexpected: " << pattern;
  }
}

const std::string kNode1 =
    "node1 -- Conv -- forward_compute_time=1, backward_compute_time=2, activation_size=100, "
    "parameter_size=10\n";
const std::string kNode2 =
    "node2 -- Linear -- forward_compute_time=3, backward_compute_time=4, activation_size=[1; 2], "
    "parameter_size=5\n";

TEST(DappleReader, ParsesListsAndStageIds) {
  Model m = parse_dapple(kNode1 + kNode2 + "\tnode1 -- node2\n", "p.txt", 4);
  EXPECT_EQ(m.layers[1].output_bytes, 3);
  EXPECT_DOUBLE_EQ(m.layers[0].by_degree[0].options[0].compute_time_s, 0.003);
  EXPECT_EQ(m.edges[0].bytes, 100);
  Model staged = parse_dapple(
      "node1 -- A -- forward_compute_time=1, backward_compute_time=2, activation_size=1, "
      "parameter_size=1 -- stage_id=0\n",
      "p.txt", 1);
  EXPECT_EQ(staged.size(), 1);
}

TEST(DappleReader, RejectsBadInput) {
  expect_dapple_error("", R"(p\.txt: no node lines)");
  expect_dapple_error(kNode1 + "\tnode1 -- node9\n",
                      R"(p\.txt:2: edge names node "node9", which is not defined)");
  expect_dapple_error(
      kNode1 +
          "node2 -- X -- forward_compute_time=-1, backward_compute_time=2, "
          "activation_size=1, parameter_size=1\n",
      R"(p\.txt:2: forward_compute_time must be a finite non-negative number, got "-1")");
  expect_dapple_error(kNode1 +
                          "node2 -- X -- forward_compute_time=nan, backward_compute_time=2, "
                          "activation_size=1, parameter_size=1\n",
                      R"(p\.txt:2: forward_compute_time must be a finite)");
  expect_dapple_error(kNode1 + "node2 -- X -- forward_compute_time=1, backward_compute_time=2\n",
                      R"(p\.txt:2: expected 4 metadata items)");
  expect_dapple_error(kNode1 +
                          "node2 -- X -- backward_compute_time=1, forward_compute_time=2, "
                          "activation_size=1, parameter_size=1\n",
                      R"(p\.txt:2: metadata item 1 must be forward_compute_time)");
  expect_dapple_error(kNode1 + kNode1, R"(p\.txt:2: node "node1" is defined twice)");
  expect_dapple_error(
      "layer7 -- X -- forward_compute_time=1, backward_compute_time=2, activation_size=1, "
      "parameter_size=1\n",
      R"(p\.txt:1: node ids must look like node<number>)");
  expect_dapple_error(kNode1 + kNode2 + "\tnode1 -- node2\n\tnode2 -- node1\n", R"(cycle)");
  expect_dapple_error(kNode1 + kNode2 + "\tnode1 -- node2\n\tnode1 -- node2\n",
                      R"(duplicate edge)");
  expect_dapple_error(kNode1 + "\tnode1\n", R"(p\.txt:2: an edge line must be)");
}

}  // namespace
}  // namespace paraplan::io
