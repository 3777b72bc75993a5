// The intra-op frontier: equal to every assignment's non-dominated (objective, memory, devices)
// on random networks, its fastest point equal to the single-objective optimum, deterministic.
#include "search/intra_op_frontier.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <random>

#include "ir/error.h"
#include "search/intra_op.h"
#include "search/intra_op_test_support.h"

namespace paraplan {
namespace {

using testing_support::random_network;

/// Random memory (integers, ties happen) and devices (1, 2 or 4) per configuration.
IntraOpResources random_resources(const IntraOpNetwork& net, std::mt19937& rng) {
  std::uniform_int_distribution<int> bytes(0, 8), pick(0, 2);
  IntraOpResources r;
  for (const auto& unary : net.unary) {
    r.memory_bytes.emplace_back();
    r.devices.emplace_back();
    for (std::size_t c = 0; c < unary.size(); ++c) {
      r.memory_bytes.back().push_back(bytes(rng));
      r.devices.back().push_back(1 << pick(rng));
    }
  }
  return r;
}

void expect_equal(const IntraOpFrontierResult& a, const IntraOpFrontierResult& b) {
  RC_ASSERT(a.points.size() == b.points.size());
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    RC_ASSERT(a.points[i].objective == b.points[i].objective);
    RC_ASSERT(a.points[i].memory_bytes == b.points[i].memory_bytes);
    RC_ASSERT(a.points[i].devices == b.points[i].devices);
  }
}

RC_GTEST_PROP(IntraOpFrontier, EqualsEveryAssignmentsNonDominatedSet, ()) {
  std::mt19937 rng(*rc::gen::arbitrary<unsigned>());
  const IntraOpNetwork net = random_network(rng);
  const IntraOpResources resources = random_resources(net, rng);
  const IntraOpFrontierOptions options;
  const IntraOpFrontierResult exact = intra_op_frontier(net, resources, options);
  expect_equal(exact, brute_force_intra_op_frontier(net, resources));
  // Each point's assignment has the objectives it claims.
  for (const auto& p : exact.points) {
    RC_ASSERT(net.evaluate(p.choice) == p.objective);
    double memory = 0;
    int devices = 0;
    for (int v = 0; v < net.size(); ++v) {
      memory += resources.memory_bytes[v][p.choice[v]];
      devices = std::max(devices, resources.devices[v][p.choice[v]]);
    }
    RC_ASSERT(memory == p.memory_bytes);
    RC_ASSERT(devices == p.devices);
  }
  // The fastest point is the single-objective optimum.
  RC_ASSERT(!exact.points.empty());
  RC_ASSERT(exact.points.front().objective == solve_intra_op(net).objective);
  // Deterministic, assignments included.
  const IntraOpFrontierResult again = intra_op_frontier(net, resources, options);
  RC_ASSERT(again.points.size() == exact.points.size());
  for (std::size_t i = 0; i < exact.points.size(); ++i)
    RC_ASSERT(again.points[i].choice == exact.points[i].choice);
}

// With a memory step ε the points are real shardings with their exact figures, and every point of
// the exact frontier has one no slower, on no more devices, within (1 − ε)^-n of its memory.
RC_GTEST_PROP(IntraOpFrontier, AMemoryStepKeepsEveryTradeOffWithinItsBound, ()) {
  std::mt19937 rng(*rc::gen::arbitrary<unsigned>());
  const IntraOpNetwork net = random_network(rng);
  const IntraOpResources resources = random_resources(net, rng);
  IntraOpFrontierOptions options;
  options.memory_step = *rc::gen::element(0.05, 0.2, 0.5);
  const IntraOpFrontierResult coarse = intra_op_frontier(net, resources, options);
  const IntraOpFrontierResult exact = brute_force_intra_op_frontier(net, resources);
  RC_ASSERT(coarse.points.size() <= exact.points.size());
  // Both ends are exact.
  RC_ASSERT(coarse.points.front().objective == exact.points.front().objective);
  auto leanest = [](const IntraOpFrontierResult& f) {
    double m = f.points.front().memory_bytes;
    for (const auto& p : f.points) m = std::min(m, p.memory_bytes);
    return m;
  };
  RC_ASSERT(leanest(coarse) == leanest(exact));
  const double slack = std::pow(1 - options.memory_step, -(net.size() + 1));
  for (const auto& p : coarse.points) {
    RC_ASSERT(net.evaluate(p.choice) == p.objective);
    double memory = 0;
    for (int v = 0; v < net.size(); ++v) memory += resources.memory_bytes[v][p.choice[v]];
    RC_ASSERT(memory == p.memory_bytes);
  }
  for (const auto& e : exact.points) {
    bool covered = false;
    for (const auto& p : coarse.points)
      covered = covered || (p.objective <= e.objective && p.devices <= e.devices &&
                            p.memory_bytes <= e.memory_bytes * slack + 1e-9);
    RC_ASSERT(covered);
  }
}

TEST(IntraOpFrontier, AChainTradesTimeForMemory) {
  // Two layers, each either fast and large (time 1, 10 bytes, 1 device) or slow and small (time
  // 4, 2 bytes, 4 devices); switching between them costs 1.
  IntraOpNetwork net;
  net.unary = {{1, 4}, {1, 4}};
  PairFactor p;
  p.u = 0;
  p.v = 1;
  p.u_class = {0, 1};
  p.v_class = {0, 1};
  p.u_classes = p.v_classes = 2;
  p.cost = std::make_shared<const std::vector<double>>(std::vector<double>{0, 1, 1, 0});
  net.pairs.push_back(p);
  const IntraOpResources r{{{10, 2}, {10, 2}}, {{1, 4}, {1, 4}}};
  const IntraOpFrontierResult f = intra_op_frontier(net, r);
  ASSERT_EQ(f.points.size(), 3u);
  EXPECT_EQ(f.points[0].choice, (std::vector<int>{0, 0}));  // time 2, 20 bytes, 1 device
  EXPECT_EQ(f.points[1].objective, 6);  // one fast, one small layer (either): 12 bytes, 4 devices
  EXPECT_EQ(f.points[1].memory_bytes, 12);
  EXPECT_EQ(f.points[1].devices, 4);
  EXPECT_EQ(f.points[2].choice, (std::vector<int>{1, 1}));  // time 8, 4 bytes, 4 devices
  EXPECT_EQ(f.solves, 2);
}

TEST(IntraOpFrontier, TablesBeyondTheLimitAreRefused) {
  std::mt19937 rng(7);
  IntraOpNetwork net;
  while (net.size() < 4) net = random_network(rng);
  const IntraOpResources r = random_resources(net, rng);
  IntraOpFrontierOptions options;
  options.max_points = 1;
  try {
    intra_op_frontier(net, r, options);
    FAIL() << "no limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kLimit);
    EXPECT_NE(std::string(e.what()).find("memory step"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace paraplan
