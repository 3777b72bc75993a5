// The event engine on hand-checked programs, and transformer iterations against the analytic
// model: streams never overlap, the makespan agrees where the model is exact, schedules order.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <map>

#include "ir/error.h"
#include "ir/training_rules.h"
#include "sim/transformer_program.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan::sim {
namespace {

Task fixed(int device, int stream, double seconds, std::vector<int> after = {}) {
  Task t;
  t.device = device;
  t.stream = stream;
  t.duration_s = seconds;
  t.after = std::move(after);
  t.name = "task";
  return t;
}

TEST(Simulator, StreamsSerialiseAndDependenciesWait) {
  Program p;
  p.devices = {"a", "b"};
  p.streams = {"compute", "comm"};
  const int x = p.add(fixed(0, 0, 1.0));
  p.add(fixed(0, 0, 2.0));                     // after x on the same stream: 1 .. 3
  const int z = p.add(fixed(1, 0, 0.5, {x}));  // 1 .. 1.5
  p.add(fixed(1, 1, 4.0, {z}));                // 1.5 .. 5.5
  const Result r = simulate(p);
  EXPECT_DOUBLE_EQ(r.makespan_s, 5.5);
  EXPECT_DOUBLE_EQ(r.devices[0].busy_s, 3.0);
  EXPECT_DOUBLE_EQ(r.devices[1].busy_s, 0.5);
  ASSERT_EQ(r.timeline.events.size(), 4u);
  EXPECT_DOUBLE_EQ(r.timeline.events[1].start_s, 1.0);
}

TEST(Simulator, ConcurrentTransfersShareALink) {
  Program p;
  p.devices = {"a"};
  p.streams = {"s0", "s1"};
  p.links = {{"nic", 100.0}};
  Task t = fixed(0, 0, 0.0);
  t.link = 0;
  t.bytes = 100;
  p.add(t);  // alone it would take 1 s
  t.stream = 1;
  t.bytes = 50;
  p.add(t);  // both at 50 B/s until the second ends at 1 s; the first then has 50 B left at 100 B/s
  const Result r = simulate(p);
  EXPECT_NEAR(r.makespan_s, 1.5, 1e-12);
}

TEST(Simulator, RoutesMoveAtTheirSlowestLinksShare) {
  Program p;
  p.devices = {"a", "b"};
  p.streams = {"s"};
  p.links = {{"a up", 100.0}, {"spine", 100.0}, {"b up", 40.0}};
  Task t = fixed(0, 0, 0.0);
  t.link = 0;
  t.route = {1};
  t.bytes = 100;  // a up + spine, shared on the spine with the next: 50 B/s while both run
  const int first = p.add(t);
  t.device = 1;
  t.link = 2;
  t.route = {1};
  t.bytes = 40;  // b up (40 B/s) + spine (50 B/s shared): 40 B/s, ends at 1 s
  p.add(t);
  const Result r = simulate(p);
  // The first moved 50 B by 1 s (its spine share 50 B/s), then 50 B alone at 100 B/s.
  EXPECT_NEAR(r.timeline.events[0].end_s, 1.5, 1e-12);
  EXPECT_EQ(r.timeline.events[0].device, p.tasks[first].device);
  // Each link's traffic over time: the spine carries 50 + 40 B/s, then 100 B/s, then nothing.
  ASSERT_EQ(r.timeline.links, (std::vector<std::string>{"a up", "spine", "b up"}));
  const auto& spine = r.timeline.link_traffic[1];
  ASSERT_EQ(spine.size(), 3u);
  EXPECT_DOUBLE_EQ(spine[0].bytes_per_s, 90);
  EXPECT_NEAR(spine[1].time_s, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(spine[1].bytes_per_s, 100);
  EXPECT_NEAR(spine[2].time_s, 1.5, 1e-12);
  EXPECT_EQ(spine[2].bytes_per_s, 0);
  t.route = {7};
  p.tasks.push_back(t);
  EXPECT_THROW(simulate(p), Error);
}

TEST(Simulator, MemoryAndDeadlocks) {
  Program p;
  p.devices = {"a"};
  p.streams = {"compute"};
  p.static_bytes = {10};
  Task a = fixed(0, 0, 1.0);
  a.allocate_bytes = 5;
  Task b = fixed(0, 0, 1.0);
  b.allocate_bytes = 7;
  b.free_bytes = 12;
  p.add(a);
  p.add(b);
  const Result r = simulate(p);
  EXPECT_DOUBLE_EQ(r.devices[0].peak_bytes, 22);
  EXPECT_DOUBLE_EQ(r.timeline.memory[0].back().bytes, 10);
  Program cyc;
  cyc.devices = {"a"};
  cyc.streams = {"compute", "other"};
  cyc.add(fixed(0, 0, 1.0, {1}));
  cyc.add(fixed(0, 1, 1.0, {0}));
  try {
    simulate(cyc);
    ADD_FAILURE() << "a cycle simulated";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal) << e.what();  // our programs never deadlock
  }
}

AnalyticCostModel gpt_cost(int devices, const std::string& name = "gpt-1.7b") {
  return AnalyticCostModel(*zoo::llm_model(name), *zoo::cluster_preset("dgx-a100", devices),
                           default_calibration("A100"));
}

void expect_no_overlap(const Result& r) {
  std::map<std::pair<int, int>, double> busy_until;
  for (const auto& e : r.timeline.events) {
    auto& until = busy_until[{e.device, e.stream}];
    EXPECT_GE(e.start_s, until - 1e-12) << e.name;
    EXPECT_GE(e.end_s, e.start_s);
    until = e.end_s;
  }
}

TEST(TransformerSimulation, AgreesWithTheModelWhereItIsExact) {
  for (auto [tp, pp, dp, mb] : {std::tuple{2, 1, 4, 2}, std::tuple{1, 4, 2, 1},
                                std::tuple{2, 4, 1, 2}, std::tuple{1, 8, 1, 1}}) {
    auto cost = gpt_cost(8);
    TrainingConfig t;
    t.global_batch = 64;
    t.tp = tp;
    t.pp = pp;
    t.dp = dp;
    t.micro_batch = mb;
    t.recompute = Recompute::kSelective;
    const auto s = simulate_transformer(cost, t, Schedule::kOneFOneB);
    expect_no_overlap(s.result);
    // Without a pipeline the model is exact. With one, the model charges every stage two sends
    // per micro-batch (the form it was calibrated with); the simulated ends send once.
    EXPECT_LE(std::abs(s.difference), pp == 1 ? 1e-9 : 0.025)
        << tp << " " << pp << " " << dp << ": simulated " << s.iteration_time_s << " analytic "
        << s.analytic_time_s;
    if (pp == 1) {
      EXPECT_NEAR(s.result.devices[0].peak_bytes, s.analytic_peak_bytes,
                  1e-9 * s.analytic_peak_bytes);
    }
    for (const auto& d : s.result.devices) EXPECT_LE(d.peak_bytes, s.analytic_peak_bytes * 1.0001);
  }
}

// Every stage's analytic peak is the replay's, under 1F1B and Megatron-Core's interleaved
// schedule alike: the later ranks of an interleaved pipeline hold (pp − s − 1)·2 + (vpp − 1)·pp
// + 1 model chunks (the analytic model gave them plain 1F1B's pp − s micro-batches, a third of
// the replay's on the last rank of a 70B plan).
TEST(TransformerSimulation, EveryStagesPeakIsTheReplays) {
  auto cost = gpt_cost(16);
  for (int vpp : {1, 2, 3, 6}) {
    TrainingConfig t;
    t.global_batch = 64;
    t.pp = 4;
    t.dp = 4;
    t.vpp = vpp;
    t.recompute = Recompute::kSelective;
    const auto s =
        simulate_transformer(cost, t, vpp > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB);
    const AnalyticResult a = cost.evaluate(t);
    for (int stage = 0; stage < t.pp; ++stage)
      EXPECT_NEAR(s.result.devices[stage].peak_bytes, a.stages[stage].memory.peak_bytes,
                  1e-6 * a.stages[stage].memory.peak_bytes)
          << "vpp " << vpp << " stage " << stage;
  }
}

// Uneven interleaved stages (Megatron-Core's layouts), virtual stages of no layers among them:
// replayed chunk by chunk, without deadlock or overlap, near the analytic model that prices each
// rank's layers.
TEST(TransformerSimulation, ReplaysUnevenVirtualStages) {
  auto cost = gpt_cost(16);
  const int layers = static_cast<int>(cost.model().num_layers);
  ASSERT_EQ(layers, 24);
  for (const std::vector<int>& chunks :
       {std::vector<int>{}, std::vector<int>{4, 3, 3, 3, 3, 3, 3, 2},
        std::vector<int>{7, 3, 3, 3, 0, 3, 3, 2}}) {
    TrainingConfig t;
    t.global_batch = 64;
    t.pp = 4;
    t.dp = 4;
    t.vpp = 2;
    t.stage_layers = {7, 6, 6, 5};
    t.virtual_stage_layers = chunks;
    ASSERT_EQ(check_training(cost.model(), t, 16), std::nullopt);
    const auto s = simulate_transformer(cost, t, Schedule::kInterleaved);
    expect_no_overlap(s.result);
    // The analytic model prices each rank's layers and the bubble of equal chunks: near the
    // replay for near-even chunks; a very uneven one (7 layers, then none) stalls the ranks
    // after it, which only the replay shows.
    if (chunks.empty() || chunks[4] > 0)
      EXPECT_NEAR(s.iteration_time_s / s.analytic_time_s, 1.0, 0.05)
          << "chunks " << chunks.size() << ": simulated " << s.iteration_time_s << " analytic "
          << s.analytic_time_s;
    else
      EXPECT_GT(s.iteration_time_s, s.analytic_time_s);
    int compute_events = 0;
    for (const auto& e : s.result.timeline.events) compute_events += e.stream == 0 ? 1 : 0;
    EXPECT_GT(compute_events, 0);
  }
}

TEST(TransformerSimulation, ZeroStagesAgreeWithoutPipelining) {
  auto cost = gpt_cost(16, "gpt-7.5b");
  for (int zero : {0, 1, 2, 3}) {
    TrainingConfig t;
    t.global_batch = 64;
    t.tp = 2;
    t.dp = 8;
    t.micro_batch = 2;
    t.zero_stage = zero;
    const auto s = simulate_transformer(cost, t, Schedule::kOneFOneB);
    expect_no_overlap(s.result);
    EXPECT_NEAR(s.iteration_time_s, s.analytic_time_s, 1e-9 * s.analytic_time_s) << "ZeRO " << zero;
    EXPECT_NEAR(s.result.devices[0].peak_bytes, s.analytic_peak_bytes,
                1e-9 * s.analytic_peak_bytes);
  }
}

TEST(TransformerSimulation, SchedulesOrderAsExpected) {
  auto cost = gpt_cost(8);
  TrainingConfig t;
  t.global_batch = 32;
  t.pp = 4;
  t.dp = 2;
  t.recompute = Recompute::kNone;
  const auto one = simulate_transformer(cost, t, Schedule::kOneFOneB);
  const auto gpipe = simulate_transformer(cost, t, Schedule::kGpipe);
  // Same work, but GPipe keeps every micro-batch's activations.
  EXPECT_NEAR(gpipe.iteration_time_s, one.iteration_time_s, 0.02 * one.iteration_time_s);
  EXPECT_GT(gpipe.result.devices[0].peak_bytes, one.result.devices[0].peak_bytes);
  t.vpp = 3;  // 24 layers = 4 stages × 3 chunks × 2
  const auto interleaved = simulate_transformer(cost, t, Schedule::kInterleaved);
  expect_no_overlap(interleaved.result);
  EXPECT_LT(interleaved.result.bubble_fraction, one.result.bubble_fraction);
  EXPECT_THROW(simulate_transformer(cost, t, Schedule::kOneFOneB), Error);
}

TEST(TransformerSimulation, ZeroBubbleFillsTheDrain) {
  auto cost = gpt_cost(8);
  TrainingConfig t;
  t.global_batch = 32;
  t.pp = 4;
  t.dp = 2;
  t.recompute = Recompute::kNone;
  const auto one = simulate_transformer(cost, t, Schedule::kOneFOneB);
  const auto zb = simulate_transformer(cost, t, Schedule::kZeroBubble);
  expect_no_overlap(zb.result);
  EXPECT_LT(zb.iteration_time_s, one.iteration_time_s);
  EXPECT_LT(zb.result.bubble_fraction, one.result.bubble_fraction);
  // The first stage defers no weight gradient: its peak memory is 1F1B's.
  EXPECT_NEAR(zb.result.devices[0].peak_bytes, one.result.devices[0].peak_bytes,
              1e-9 * one.result.devices[0].peak_bytes);
  // Same work on every device.
  for (std::size_t d = 0; d < zb.result.devices.size(); ++d)
    EXPECT_NEAR(zb.result.devices[d].busy_s, one.result.devices[d].busy_s,
                1e-9 * one.result.devices[d].busy_s);
}

TEST(TransformerSimulation, OverlapHidesTheGradientSync) {
  auto cost = gpt_cost(64, "gpt-18.4b");
  TrainingConfig t;
  t.global_batch = 128;
  t.tp = 8;
  t.pp = 2;
  t.dp = 4;
  const auto plain = simulate_transformer(cost, t, Schedule::kOneFOneB);
  t.overlap_grad_reduce = true;
  const auto overlapped = simulate_transformer(cost, t, Schedule::kOneFOneB);
  EXPECT_LT(overlapped.iteration_time_s, plain.iteration_time_s);
  expect_no_overlap(overlapped.result);
}

}  // namespace
}  // namespace paraplan::sim

#include "cost/piper_cost.h"
#include "io/piper_reader.h"
#include "search/pipeline.h"
#include "sim/pipeline_program.h"

namespace paraplan::sim {
namespace {

// Piper's plans: the simulated iteration is at least N × the bottleneck time per micro-batch
// (Piper's throughput has no fill or drain) and equals it for one stage; every replica's peak
// memory is the cost model's a·y + b.
TEST(PipelineSimulation, PiperPlansReplayAboveTheirBound) {
  const io::PiperInput in = io::read_piper(std::string(PARAPLAN_DATA) + "/piper/bert32a100.json");
  for (auto [devices, memory_gib] : {std::pair{10, 32.0}, std::pair{64, 8.0}, std::pair{32, 4.0}}) {
    PiperSettings settings{devices, memory_gib * 1073741824.0, in.bandwidth_bytes_per_s,
                           in.model.microbatches};
    PiperCostModel cost(in.model, settings);
    const Plan plan = search_pipeline(in.model, cost).plan;
    ASSERT_TRUE(plan.feasible) << devices;
    const auto s = simulate_pipeline_plan(in.model, plan, settings.microbatches);
    expect_no_overlap(s.result);
    EXPECT_GE(s.makespan_s, s.bound_s * (1 - 1e-9)) << devices;
    if (plan.stages.size() == 1) {
      EXPECT_NEAR(s.makespan_s, s.bound_s, 1e-9 * s.bound_s);
    }
    std::size_t device = 0;
    for (const Stage& st : plan.stages)
      for (int r = 0; r < st.data_parallel; ++r, ++device)
        EXPECT_NEAR(s.result.devices[device].peak_bytes, st.memory_bytes, 1e-6 * st.memory_bytes)
            << "stage with y = " << st.inflight_microbatches;
    EXPECT_EQ(device, s.result.devices.size());
  }
}

// A profile's terms: each layer's measured forward share places forward and backward, the
// optimizer step runs once after the all-reduce, and the all-reduce is priced at the cluster's
// all-reduce bandwidth; a one-stage plan still replays exactly at N x its time per micro-batch.
TEST(PipelineSimulation, ProfiledForwardShareOptimizerAndAllReduceBandwidth) {
  Model m;
  m.name = "profiled";
  for (int v = 0; v < 3; ++v) {
    LayerOption o;
    o.id = "vanilla";
    o.compute_time_s = 0.3;
    o.forward_time_s = 0.1 * (v + 1) / 2;
    o.optimizer_time_s = 0.02;
    o.parameter_bytes = 1e6;
    m.layers.push_back(Layer{v, "l" + std::to_string(v), {{1, {o}}}, 0, {}});
  }
  for (int v = 0; v + 1 < 3; ++v) m.edges.push_back({v, v + 1, 0.0});
  m.index();
  for (std::size_t v = 0; v < m.layers.size(); ++v) {
    auto& o = m.layers[v].by_degree[0].options[0];
    o.sync_in_bytes.assign(m.in_edge_ids[v].size(), 0.0);
    o.sync_out_bytes.assign(m.out_edge_ids[v].size(), 0.0);
  }
  PiperSettings settings{2, 1e12, 1e9, 4};
  settings.allreduce_bandwidth_bytes_per_s = 1e8;
  Plan plan;
  Stage st;
  st.layers = {0, 1, 2};
  st.option_index = {0, 0, 0};
  st.data_parallel = 2;
  plan.stages.push_back(st);
  plan = PiperCostModel(m, settings).evaluate(plan);
  const Stage& priced = plan.stages[0];
  EXPECT_NEAR(priced.allreduce_time, 4.0 * 1 / 2 * 3e6 / 4 / 1e8, 1e-15);
  EXPECT_NEAR(priced.optimizer_time, 0.06 / 4, 1e-15);
  EXPECT_NEAR(priced.time, 0.9 / 2 + priced.allreduce_time + priced.optimizer_time, 1e-15);
  const auto s = simulate_pipeline_plan(m, plan, settings.microbatches);
  EXPECT_NEAR(s.makespan_s, s.bound_s, 1e-12);
  int optimizer_steps = 0;
  for (const auto& e : s.result.timeline.events) {
    if (e.phase == "optimizer") {
      ++optimizer_steps;
      EXPECT_NEAR(e.end_s - e.start_s, 0.06, 1e-15);
    }
    if (e.phase == "forward") {
      EXPECT_NEAR(e.end_s - e.start_s, 0.3, 1e-12);  // 0.05 + 0.1 + 0.15
    }
    if (e.phase == "backward") {
      EXPECT_NEAR(e.end_s - e.start_s, 0.6, 1e-12);
    }
  }
  EXPECT_EQ(optimizer_steps, 2);  // once per replica
}

}  // namespace
}  // namespace paraplan::sim
