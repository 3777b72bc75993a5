// The intra-op planner: PaSE's reference totals, and a brute-force twin on random networks and
// random small operator graphs.
#include "search/intra_op.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "cost/pase_cost.h"
#include "ir/error.h"
#include "ir/op_graph.h"
#include "search/intra_op_test_support.h"
#include "zoo/pase_graphs.h"

namespace paraplan {
namespace {

using testing_support::random_network;

double solve_graph(const std::string& graph, int p, int batch = 128) {
  auto w = zoo::pase_graph(graph, batch);
  PaseSettings s;
  s.devices = p;
  s.min_block = w.min_block;
  PaseCostModel cost(w.model, s);
  IntraOpResult r = solve_intra_op(cost.network());
  // The returned strategy re-evaluates to the optimum from the formulas.
  EXPECT_NEAR(cost.evaluate(r.choice), r.objective, 1e-12 * r.objective);
  EXPECT_NEAR(r.table_minimum, r.objective, 1e-12 * r.objective);
  return r.objective;
}

void expect_rel(double got, double want) {
  EXPECT_NEAR(got, want, 1e-9 * want) << std::fixed << got;
}

TEST(IntraOp, MatchesPaseReferenceTotals) {
  // data/pase/reference.md, runs R1-R11 (R4, R5, R10 repeat R2 and R9).
  expect_rel(solve_graph("alexnet", 8), 97098296512.00);
  expect_rel(solve_graph("alexnet", 32), 53136349552.00);
  expect_rel(solve_graph("alexnet", 64), 41120456048.00);
  expect_rel(solve_graph("rnnlm", 8), 7462723813376.00);
  expect_rel(solve_graph("rnnlm", 32), 2625038401536.00);
}

TEST(IntraOp, MatchesPaseReferenceTotalsLargeGraphs) {
  expect_rel(solve_graph("resnet101", 8), 1425262849920.00);
  expect_rel(solve_graph("inception3", 8), 782140602432.00);
  expect_rel(solve_graph("transformer", 8), 2340308361216.00);
}

TEST(IntraOp, AlexNetP32StrategyIsPasesUniqueOptimum) {
  auto w = zoo::pase_graph("alexnet", 128);
  PaseSettings s;
  s.devices = 32;
  s.min_block = 4;
  PaseCostModel cost(w.model, s);
  auto r = solve_intra_op(cost.network());
  std::vector<std::vector<int>> want = {{32, 1, 1, 1, 1, 1, 1},
                                        {32, 1, 1, 1},
                                        {32, 1, 1, 1, 1, 1, 1},
                                        {32, 1, 1, 1},
                                        {32, 1, 1, 1, 1, 1, 1},
                                        {16, 2, 1, 1, 1, 1, 1},
                                        {16, 2, 1, 1, 1, 1, 1},
                                        {16, 1, 1, 1},
                                        {16, 1, 1, 1},
                                        {16, 1},
                                        {1, 4, 8},
                                        {1, 8, 4},
                                        {1, 4, 8},
                                        {1, 4}};
  for (int v = 0; v < w.model.size(); ++v) EXPECT_EQ(cost.configs(v)[r.choice[v]], want[v]) << v;
}

// A network no cost model would make is refused with one message each, not solved wrongly.
TEST(IntraOp, MalformedNetworksAreRefused) {
  auto expect_input_error = [](const IntraOpNetwork& net, const std::string& words) {
    try {
      solve_intra_op(net);
      ADD_FAILURE() << "no error; expected: " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  IntraOpNetwork net;
  net.unary = {{1, 2}, {3, 4}};
  PairFactor p;
  p.u = 0;
  p.v = 1;
  p.u_class = {0, 1};
  p.v_class = {0, 0};
  p.u_classes = 2;
  p.v_classes = 1;
  net.pairs = {p};  // no table
  expect_input_error(net, "classes(u) x classes(v) entries");
  net.pairs[0].cost = std::make_shared<const std::vector<double>>(std::vector<double>{1, 2, 3});
  expect_input_error(net, "classes(u) x classes(v) entries");
  net.pairs[0].cost = std::make_shared<const std::vector<double>>(std::vector<double>{1, 2});
  EXPECT_EQ(solve_intra_op(net).objective, 1 + 3 + 1);
  net.pairs[0].v = 0;
  expect_input_error(net, "paired with itself");
}

TEST(IntraOp, MinDegreeOrderIsPases) {
  auto w = zoo::pase_graph("resnet101", 128);
  PaseSettings s;
  s.min_block = 4;
  PaseCostModel cost(w.model, s);
  auto order = min_degree_order(cost.network());
  std::vector<int> want = {0, 1, 244, 243, 242};
  for (int v = 2; v <= 241; ++v) want.push_back(v);
  EXPECT_EQ(order, want);
}

std::vector<std::string> reference_lines() {
  std::ifstream in(std::string(PARAPLAN_DATA) + "/pase/reference.md");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// "13, 19, 4×2" → 13, 19, 4, 4.
std::vector<int> expand_counts(const std::string& text) {
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

// Every per-node configuration count and every DP table-size summary of reference.md: checks
// the graphs, the strategy enumeration and PaSE's elimination order at once.
TEST(IntraOp, ConfigurationCountsAndTableSizesOfEveryReferenceRun) {
  auto lines = reference_lines();
  ASSERT_GT(lines.size(), 50u) << "data/pase/reference.md not found";
  std::regex counts_row(R"(^\| (\w+), p(\d+), b(\d+) \| (.*) \|$)");
  std::regex sizes_row(R"(^\| (\w+), p(\d+) \| ([\d,]+) \| ([\d,]+) \|$)");
  auto number = [](std::string t) {
    t.erase(std::remove(t.begin(), t.end(), ','), t.end());
    return std::stod(t);
  };
  int count_rows = 0, size_rows = 0;
  for (const auto& line : lines) {
    std::smatch m;
    if (std::regex_match(line, m, counts_row)) {
      auto w = zoo::pase_graph(m[1], std::stoi(m[3]));
      PaseSettings s;
      s.devices = std::stoi(m[2]);
      s.min_block = w.min_block;
      PaseCostModel cost(w.model, s);
      std::vector<int> k;
      for (int v = 0; v < w.model.size(); ++v)
        k.push_back(static_cast<int>(cost.configs(v).size()));
      EXPECT_EQ(k, expand_counts(m[4])) << line.substr(0, 40);
      ++count_rows;
    } else if (std::regex_match(line, m, sizes_row)) {
      auto w = zoo::pase_graph(m[1], 128);
      PaseSettings s;
      s.devices = std::stoi(m[2]);
      s.min_block = w.min_block;
      PaseCostModel cost(w.model, s);
      auto st = elimination_stats(cost.network(), min_degree_order(cost.network()));
      EXPECT_EQ(st.largest_table, number(m[3])) << line;
      EXPECT_EQ(st.total_rows, number(m[4])) << line;
      ++size_rows;
    }
  }
  EXPECT_EQ(count_rows, 8);
  EXPECT_EQ(size_rows, 8);
}

RC_GTEST_PROP(IntraOp, EqualsBruteForceOnRandomNetworks, ()) {
  std::mt19937 rng(*rc::gen::arbitrary<unsigned>());
  IntraOpNetwork net = random_network(rng);
  auto exact = solve_intra_op(net);
  auto brute = brute_force_intra_op(net);
  RC_ASSERT(std::abs(exact.objective - brute.objective) <= 1e-9 * (1 + brute.objective));
  RC_ASSERT(std::abs(exact.table_minimum - exact.objective) <= 1e-9 * (1 + exact.objective));
  // Deterministic: the same network gives the same choice.
  RC_ASSERT(solve_intra_op(net).choice == exact.choice);
}

/// A pair table between a variable of domain ka and one of domain kb: random classes, each
/// used (the first configurations take one each, the rest any), integer costs in [0, 10] (ties
/// happen). u and v are left to the caller.
PairFactor random_pair_table(std::mt19937& rng, int ka, int kb) {
  std::uniform_real_distribution<double> cost(0, 10);
  PairFactor p;
  p.u_classes = std::uniform_int_distribution<int>(1, ka)(rng);
  p.v_classes = std::uniform_int_distribution<int>(1, kb)(rng);
  std::uniform_int_distribution<int> any_a(0, p.u_classes - 1), any_b(0, p.v_classes - 1);
  for (int c = 0; c < ka; ++c) p.u_class.push_back(c < p.u_classes ? c : any_a(rng));
  for (int c = 0; c < kb; ++c) p.v_class.push_back(c < p.v_classes ? c : any_b(rng));
  std::vector<double> values(static_cast<std::size_t>(p.u_classes) * p.v_classes);
  for (auto& x : values) x = std::round(cost(rng));
  p.cost = std::make_shared<const std::vector<double>>(std::move(values));
  return p;
}

/// A network of `copies` identical blocks (same unary costs, same tables) chained by identical
/// links, each block also joined to one shared variable by identical tables: eliminations repeat
/// (their tables are reused) and tables over three dependents are built (their groups are
/// visited in two sorted orders).
IntraOpNetwork repeated_blocks_network(std::mt19937& rng, int copies) {
  std::uniform_int_distribution<int> block_size(1, 3), dom(1, 9);
  std::uniform_real_distribution<double> cost(0, 10);
  const int nb = block_size(rng);
  std::vector<std::vector<double>> unary(nb);
  for (auto& u : unary) {
    u.resize(dom(rng));
    for (auto& x : u) x = std::round(cost(rng));  // integers: ties happen
  }
  std::vector<double> shared_unary(dom(rng));
  for (auto& x : shared_unary) x = std::round(cost(rng));
  auto k = [&](int i) { return static_cast<int>(unary[i].size()); };
  std::vector<std::pair<std::pair<int, int>, PairFactor>> inside;  // (i, j) within a block
  std::bernoulli_distribution edge(0.6);
  for (int i = 0; i < nb; ++i)
    for (int j = i + 1; j < nb; ++j)
      if (edge(rng)) inside.push_back({{i, j}, random_pair_table(rng, k(i), k(j))});
  const int to_shared = std::uniform_int_distribution<int>(0, nb - 1)(rng);
  PairFactor shared_link =
      random_pair_table(rng, k(to_shared), static_cast<int>(shared_unary.size()));
  PairFactor chain_link = random_pair_table(rng, k(nb - 1), k(0));
  IntraOpNetwork net;
  for (int c = 0; c < copies; ++c)
    for (const auto& u : unary) net.unary.push_back(u);
  const int shared = static_cast<int>(net.unary.size());
  net.unary.push_back(shared_unary);
  auto add = [&](PairFactor p, int u, int v) {
    p.u = u;
    p.v = v;
    net.pairs.push_back(std::move(p));
  };
  for (int c = 0; c < copies; ++c) {
    for (const auto& [ij, p] : inside) add(p, c * nb + ij.first, c * nb + ij.second);
    add(shared_link, c * nb + to_shared, shared);
    if (c + 1 < copies) add(chain_link, c * nb + nb - 1, (c + 1) * nb);
  }
  return net;
}

/// The brute-force optimum, whichever way the groups are visited (two sorted orders
/// everywhere, nowhere, as the default chooses) and under every elimination order.
void check_every_visit(const IntraOpNetwork& net) {
  double space = 1;
  for (const auto& u : net.unary) space *= static_cast<double>(u.size());
  RC_PRE(space <= 3e5);
  auto brute = brute_force_intra_op(net);
  for (std::int64_t prefixes :
       {std::int64_t{1}, std::int64_t{1} << 40, IntraOpOptions{}.threshold_min_prefixes})
    for (auto order : {IntraOpOptions::Order::kBest, IntraOpOptions::Order::kMinDegree,
                       IntraOpOptions::Order::kMinWeight}) {
      IntraOpOptions o;
      o.order = order;
      o.threshold_min_prefixes = prefixes;
      auto exact = solve_intra_op(net, o);
      if (prefixes == 1 && order == IntraOpOptions::Order::kBest) {
        RC_CLASSIFY(exact.reused_steps > 0, "tables reused");
        RC_CLASSIFY(exact.threshold_steps > 0, "two sorted orders");
        RC_CLASSIFY(exact.mirrored_steps > 0, "symmetric tables");
      }
      RC_ASSERT(std::abs(exact.objective - brute.objective) <= 1e-9 * (1 + brute.objective));
      RC_ASSERT(std::abs(exact.table_minimum - exact.objective) <= 1e-9 * (1 + exact.objective));
      // Deterministic; and the same choice whichever way the groups are visited (ties go to the
      // smallest configuration index either way).
      RC_ASSERT(solve_intra_op(net, o).choice == exact.choice);
      IntraOpOptions plain = o;
      plain.threshold_min_prefixes = std::int64_t{1} << 40;
      RC_ASSERT(solve_intra_op(net, plain).choice == exact.choice);
    }
}

RC_GTEST_PROP(IntraOp, RepeatedBlocksEqualBruteForce, ()) {
  std::mt19937 rng(*rc::gen::arbitrary<unsigned>());
  check_every_visit(repeated_blocks_network(rng, *rc::gen::inRange(2, 5)));
}

/// Layer 0 feeds 3 or 4 consumers through one table (a residual fan-out); the consumers are
/// joined to each other by random tables, so layer 0 goes first and its table is symmetric in
/// its consumers.
RC_GTEST_PROP(IntraOp, FanOutEqualsBruteForce, ()) {
  std::mt19937 rng(*rc::gen::arbitrary<unsigned>());
  const int consumers = *rc::gen::inRange(3, 5);
  std::uniform_int_distribution<int> dom(1, consumers == 3 ? 9 : 6);
  std::uniform_real_distribution<double> cost(0, 10);
  const int kp = dom(rng), kc = dom(rng);
  IntraOpNetwork net;
  auto unary = [&](int k) {
    std::vector<double> u(k);
    for (auto& x : u) x = std::round(cost(rng));
    return u;
  };
  net.unary.push_back(unary(kp));
  const std::vector<double> consumer_unary = unary(kc);
  for (int c = 0; c < consumers; ++c) net.unary.push_back(consumer_unary);
  const PairFactor link = random_pair_table(rng, kp, kc);
  for (int c = 1; c <= consumers; ++c) {
    PairFactor p = link;
    p.u = 0;
    p.v = c;
    net.pairs.push_back(std::move(p));
    for (int d = c + 1; d <= consumers; ++d) {
      PairFactor q = random_pair_table(rng, kc, kc);
      q.u = c;
      q.v = d;
      net.pairs.push_back(std::move(q));
    }
  }
  check_every_visit(net);
}

/// Random small operator graphs: a chain of FC / elementwise / norm / softmax layers with skip
/// connections, priced by the PaSE model on few devices.
RC_GTEST_PROP(IntraOp, EqualsBruteForceOnRandomOperatorGraphs, ()) {
  const int layers = *rc::gen::inRange(2, 6);
  const int p = *rc::gen::element(2, 4, 6);
  const std::int64_t b = *rc::gen::element(4, 6, 8);
  const std::int64_t width = *rc::gen::element(4, 6, 12);
  OpGraphBuilder g("random");
  std::vector<OpTensor> made;
  OpTensor x = g.fully_connected(g.input({b, width}), width, 1);
  made.push_back(x);
  for (int i = 1; i < layers; ++i) {
    int kind = *rc::gen::inRange(0, 4);
    const OpTensor& other = made[*rc::gen::inRange<std::size_t>(0, made.size())];
    switch (kind) {
      case 0:
        x = g.fully_connected(x, width, *rc::gen::inRange(0, 2));
        break;
      case 1:
        x = g.elementwise({x, other}, 0);
        break;
      case 2:
        x = g.norm(x, -1);
        break;
      default:
        x = g.softmax(x, 1);
        break;
    }
    made.push_back(x);
  }
  g.softmax_cross_entropy(x);
  Model m = g.finish();
  PaseSettings s;
  s.devices = p;
  s.keep_all_flows = *rc::gen::arbitrary<bool>();
  PaseCostModel cost(m, s);
  double space = 1;
  for (int v = 0; v < m.size(); ++v) space *= static_cast<double>(cost.configs(v).size());
  RC_PRE(space <= 2e5);
  auto exact = solve_intra_op(cost.network());
  auto brute = brute_force_intra_op(cost.network());
  RC_ASSERT(std::abs(exact.objective - brute.objective) <= 1e-9 * brute.objective);
  RC_ASSERT(std::abs(cost.evaluate(exact.choice) - exact.objective) <= 1e-9 * exact.objective);
  IntraOpOptions everywhere;
  everywhere.threshold_min_prefixes = 1;
  auto threshold = solve_intra_op(cost.network(), everywhere);
  RC_CLASSIFY(threshold.threshold_steps > 0, "two sorted orders");
  RC_ASSERT(std::abs(threshold.objective - brute.objective) <= 1e-9 * brute.objective);
}

}  // namespace
}  // namespace paraplan
