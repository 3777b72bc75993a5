// PaSE's cost model on its own graphs: configuration counts and worked examples of the spec.
#include "cost/pase_cost.h"

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

TEST(PaseCost, GraphSizesMatchSpec) {
  struct Case {
    const char* name;
    int nodes, flows_after_collapse;
  } cases[] = {{"alexnet", 14, 13},
               {"resnet101", 245, 277},
               {"inception3", 219, 253},
               {"rnnlm", 4, 3},
               {"transformer", 204, 256}};
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
  EXPECT_DOUBLE_EQ(total(10, {1, 4, 8}), 2706178048.0);     // FC6
  EXPECT_DOUBLE_EQ(total(10, {32, 1, 1}), 366143913984.0);  // FC6 data parallel
  EXPECT_DOUBLE_EQ(total(13, {1, 4}), 1411328.0);           // SCE
  EXPECT_DOUBLE_EQ(cost.flow_cost(10, 0, {1, 4, 8}, 11, 0, {1, 8, 4}), 0.0);
  EXPECT_DOUBLE_EQ(cost.flow_cost(10, 0, {1, 4, 8}, 11, 0, {32, 1, 1}), 163840000.0);
  EXPECT_DOUBLE_EQ(cost.flow_cost(9, 0, {16, 1}, 10, 0, {1, 4, 8}), 1382400000.0);
}

// The network's pair tables (shared between pairs of equal tensors and projections) hold the
// formulas' redistribution cost for every pair of configurations.
TEST(PaseCost, PairTablesEqualTheFlowFormula) {
  for (const char* name : {"transformer", "inception3"}) {
    auto w = zoo::pase_graph(name, 128);
    for (bool all_flows : {false, true}) {
      PaseSettings s = settings_for(8, w.min_block);
      s.keep_all_flows = all_flows;
      PaseCostModel cost(w.model, s);
      std::size_t checked = 0;
      for (const auto& p : cost.network().pairs)
        for (std::size_t cu = 0; cu < cost.configs(p.u).size(); cu += 3)
          for (std::size_t cv = 0; cv < cost.configs(p.v).size(); cv += 5) {
            double want = 0;
            for (const auto& f : cost.flows())
              if (f.from == p.u && f.to == p.v)
                want += cost.flow_cost(p.u, f.from_output, cost.configs(p.u)[cu], p.v, f.to_input,
                                       cost.configs(p.v)[cv]);
            ASSERT_EQ(p.at(static_cast<int>(cu), static_cast<int>(cv)), want)
                << name << " pair " << p.u << "-" << p.v << " configurations " << cu << ", " << cv;
            ++checked;
          }
      EXPECT_GT(checked, 5000u) << name;
    }
  }
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
