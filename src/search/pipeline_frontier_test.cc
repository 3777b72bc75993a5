// The pipeline planner's frontier: exact (memory_step 0) on BERT's Piper file, checked against
// the planner's own optimum and its smallest-memory plan.
#include "search/pipeline_frontier.h"

#include <gtest/gtest.h>

#include "cost/piper_cost.h"
#include "io/piper_reader.h"
#include "search/pipeline.h"

namespace paraplan {
namespace {

TEST(PipelineFrontier, ExactFrontierSpansOptimumToLeanest) {
  const io::PiperInput in = io::read_piper(std::string(PARAPLAN_DATA) + "/piper/bert32a100.json");
  const Model& model = in.model;
  PiperSettings base{in.max_devices, in.memory_per_device_bytes, in.bandwidth_bytes_per_s,
                     model.microbatches};
  auto factory = [&](int devices, double memory) -> std::unique_ptr<PipelineCostModel> {
    PiperSettings s = base;
    s.max_devices = devices;
    s.memory_per_device_bytes = memory;
    return std::make_unique<PiperCostModel>(model, s);
  };
  PipelineFrontierOptions exact;
  exact.memory_step = 0;
  const auto f = pipeline_frontier(model, factory, {1, 2, 4, 8, in.max_devices},
                                   base.memory_per_device_bytes, exact);
  ASSERT_FALSE(f.points.empty());
  EXPECT_FALSE(f.truncated);
  for (const auto& a : f.points) {
    EXPECT_LE(a.objectives.peak_bytes, base.memory_per_device_bytes);
    for (const auto& b : f.points) EXPECT_FALSE(a.objectives.dominates(b.objectives));
  }
  // The fastest point is the planner's optimum with every device and the full memory.
  PiperCostModel full(model, base);
  EXPECT_EQ(f.points.front().objectives.time_s, search_pipeline(model, full).plan.objective);
  // The leanest point needs exactly the smallest memory any plan needs.
  PiperSettings lean = base;
  lean.objective = PiperSettings::Objective::kMemory;
  PiperCostModel memory_cost(model, lean);
  const double smallest = plan_peak_memory(search_pipeline(model, memory_cost).plan);
  double leanest = 1e300;
  for (const auto& p : f.points) leanest = std::min(leanest, p.objectives.peak_bytes);
  EXPECT_NEAR(leanest, smallest, 1e-9 * smallest);
  // Each point is the fastest plan that fits in its own memory.
  for (const auto& p : f.points) {
    PiperSettings s = base;
    s.max_devices = p.objectives.devices;
    s.memory_per_device_bytes = p.objectives.peak_bytes;
    PiperCostModel at(model, s);
    EXPECT_EQ(search_pipeline(model, at).plan.objective, p.objectives.time_s);
  }
}

}  // namespace
}  // namespace paraplan
