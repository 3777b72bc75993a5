// PaSE's cost model on its own graphs: configuration counts and worked examples of the spec.
#include "cost/pase_cost.h"

#include <sstream>

#include <gtest/gtest.h>

#include "ir/error.h"
#include "zoo/pase_graphs.h"

namespace paraplan {
namespace {

PaseSettings settings_for(int p, int min_block) {
  PaseSettings s;
  s.devices = p;
  s.min_block = min_block;
  return s;
}

/// Expands "13, 19, 4×2, 20" into a list.
std::vector<int> expand(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    auto x = item.find("×");
    int value = std::stoi(item.substr(0, x));
    int times = x == std::string::npos ? 1 : std::stoi(item.substr(x + 2));
    for (int i = 0; i < times; ++i) out.push_back(value);
  }
  return out;
}

std::vector<int> counts(const std::string& graph, int p) {
  auto w = zoo::pase_graph(graph, 128);
  PaseCostModel cost(w.model, settings_for(p, w.min_block));
  std::vector<int> k;
  for (int v = 0; v < w.model.size(); ++v) k.push_back(static_cast<int>(cost.configs(v).size()));
  return k;
}

TEST(PaseCost, ConfigurationCountsMatchReference) {
  // shared/data/pase/reference.md, "Per-node configuration counts".
  EXPECT_EQ(counts("alexnet", 8), expand("13, 19, 24, 10, 24, 28, 24, 10, 4×2, 24, 20×2, 10"));
  EXPECT_EQ(counts("alexnet", 32), expand("30, 60, 75, 21, 76, 100, 76, 21, 6×2, 80, 56×2, 21"));
  EXPECT_EQ(counts("alexnet", 64), expand("38, 89, 113, 27, 118, 163, 118, 27, 6×2, 128, 83×2, 27"));
  EXPECT_EQ(counts("rnnlm", 8), expand("36, 30, 36, 21"));
  EXPECT_EQ(counts("rnnlm", 32), expand("142, 91, 142, 67"));
  auto t = counts("transformer", 8);
  ASSERT_EQ(t.size(), 204u);
  EXPECT_EQ(t[0], 36);
  EXPECT_EQ(t[2], 62);
  EXPECT_EQ(t[203], 21);
}

TEST(PaseCost, GraphSizesMatchSpec) {
  struct Case {
    const char* name;
    int nodes, flows_after_collapse;
  } cases[] = {{"alexnet", 14, 13}, {"resnet101", 245, 277}, {"inception3", 219, 253},
               {"rnnlm", 4, 3}, {"transformer", 204, 256}};
  for (const auto& c : cases) {
    auto w = zoo::pase_graph(c.name, 128);
    PaseCostModel cost(w.model, settings_for(8, w.min_block));
    EXPECT_EQ(w.model.size(), c.nodes) << c.name;
    EXPECT_EQ(static_cast<int>(cost.flows().size()), c.flows_after_collapse) << c.name;
  }
  auto w = zoo::pase_graph("transformer", 128);
  PaseSettings s = settings_for(8, 1);
  s.keep_all_flows = true;
  PaseCostModel all(w.model, s);
  EXPECT_EQ(all.flows().size(), 280u);  // PaSE drops 24 of 280 flows
}

TEST(PaseCost, WorkedExamplesOfTheSpec) {
  auto w = zoo::pase_graph("alexnet", 128);
  PaseCostModel cost(w.model, settings_for(32, 4));
  EXPECT_DOUBLE_EQ(cost.word_cost(), 5000);
  auto total = [&](int v, std::vector<int> c) {
    auto lc = cost.layer_cost(v, c);
    return lc.compute + lc.communication;
  };
  EXPECT_DOUBLE_EQ(total(10, {1, 4, 8}), 2706178048.0);        // FC6
  EXPECT_DOUBLE_EQ(total(10, {32, 1, 1}), 366143913984.0);     // FC6 data parallel
  EXPECT_DOUBLE_EQ(total(13, {1, 4}), 1411328.0);              // SCE
  EXPECT_DOUBLE_EQ(cost.flow_cost(10, 0, {1, 4, 8}, 11, 0, {1, 8, 4}), 0.0);
  EXPECT_DOUBLE_EQ(cost.flow_cost(10, 0, {1, 4, 8}, 11, 0, {32, 1, 1}), 163840000.0);
  EXPECT_DOUBLE_EQ(cost.flow_cost(9, 0, {16, 1}, 10, 0, {1, 4, 8}), 1382400000.0);
}

TEST(PaseCost, OptionsRestrictTheStrategySpace) {
  auto w = zoo::pase_graph("alexnet", 128);
  PaseSettings s = settings_for(32, 4);
  s.powers_of_two = true;
  PaseCostModel pow2(w.model, s);
  for (int v = 0; v < w.model.size(); ++v)
    for (const auto& c : pow2.configs(v))
      for (int f : c) EXPECT_EQ(f & (f - 1), 0);
  s.powers_of_two = false;
  s.use_all_devices = true;
  s.devices = 8;
  PaseCostModel all(w.model, s);
  for (int v = 0; v < w.model.size(); ++v)
    for (const auto& c : all.configs(v)) {
      int prod = 1;
      for (int f : c) prod *= f;
      EXPECT_EQ(prod, 8);
    }
  // 7 devices: no layer of AlexNet has an extent divisible by 7 with blocks of at least 4.
  s.devices = 7;
  try {
    PaseCostModel none(w.model, s);
    FAIL() << "expected an infeasible error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInfeasible);
    EXPECT_NE(std::string(e.what()).find("conv1"), std::string::npos) << e.what();
  }
}

TEST(PaseCost, ZeroDevicesIsAUsageError) {
  auto w = zoo::pase_graph("rnnlm", 128);
  try {
    PaseCostModel cost(w.model, settings_for(0, 1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  }
}

}  // namespace
}  // namespace paraplan
