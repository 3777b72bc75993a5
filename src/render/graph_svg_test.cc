// The operator graph figure and the plots' axes.
#include "render/graph_svg.h"

#include <gtest/gtest.h>

#include "cost/pase_cost.h"
#include "ir/error.h"
#include "render/svg_plot.h"
#include "search/intra_op.h"
#include "zoo/pase_graphs.h"

namespace paraplan::render {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(GraphSvg, DrawsEveryLayerWithItsSplitAndEveryFlow) {
  zoo::OperatorWorkload w = zoo::pase_graph("inception3", 128);
  PaseSettings s;
  s.devices = 8;
  s.min_block = w.min_block;
  PaseCostModel cost(w.model, s);
  const Plan plan = cost.to_plan(solve_intra_op(cost.network()).choice);
  const std::string svg = operator_graph_svg(w.model, plan);
  EXPECT_EQ(count(svg, "<g><title>"), static_cast<std::size_t>(w.model.size()));
  EXPECT_EQ(count(svg, "<line "), w.model.edges.size());
  EXPECT_NE(
      svg.find(w.model.layers[0].op->split_text(plan.as<IntraOpDetail>().layer_splits[0].split)),
      std::string::npos);
  EXPECT_EQ(svg, operator_graph_svg(w.model, plan));  // deterministic
}

TEST(GraphSvg, RefusesACycle) {
  Model m;
  m.name = "loop";
  m.layers.resize(2);
  m.edges = {{0, 1}, {1, 0}};
  EXPECT_THROW(operator_graph_svg(m, Plan{}), Error);
}

TEST(ScatterSvg, ValuesSpanningOrdersOfMagnitudeGetALogAxisAndPlainLabels) {
  const std::string wide = scatter_svg({{"s", {{1, 5}, {2, 40}, {3, 4000}}}}, "t", "x", "time (s)");
  EXPECT_NE(wide.find("time (s), log scale"), std::string::npos);
  EXPECT_NE(wide.find(">10000<"), std::string::npos);  // not 1e+04
  EXPECT_EQ(wide.find("x, log scale"), std::string::npos);
  const std::string narrow = scatter_svg({{"s", {{1, 5}, {2, 6}}}}, "t", "x", "time (s)");
  EXPECT_EQ(narrow.find("log scale"), std::string::npos);
}

}  // namespace
}  // namespace paraplan::render
