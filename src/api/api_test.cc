// The library API without the CLI: each job's request and result, the smallest-memory search,
// the simulator's re-ranking, plan files read by what they state, field errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "api/evaluate.h"
#include "api/inputs.h"
#include "api/plan.h"
#include "api/plan_file.h"
#include "api/results_json.h"
#include "api/simulate.h"
#include "io/native_json.h"
#include "io/transformer_json.h"
#include "ir/error.h"
#include "sweep.h"
#include "zoo/cluster_presets.h"
#include "zoo/transformer_stack.h"

namespace paraplan::api {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

PipelinePlanRequest small_pipeline(double memory_bytes) {
  PipelinePlanRequest r;
  r.model = zoo::transformer_stack({});
  const Cluster c = zoo::default_cluster();
  r.settings.max_devices = c.device_count();
  r.settings.memory_per_device_bytes = memory_bytes;
  r.settings.bandwidth_bytes_per_s = c.flat_bandwidth_bytes_per_s();
  r.settings.microbatches = r.model.microbatches;
  return r;
}

TEST(ApiPlanPipeline, WhenNothingFitsGivesTheSmallestMemoryThatDoes) {
  PipelinePlanRequest r = small_pipeline(1e6);  // 1 MB: nothing fits
  const PipelinePlanResult none = plan_pipeline(r);
  ASSERT_FALSE(none.plan.feasible);
  EXPECT_EQ(none.plan.kind(), PlanKind::kPipeline);
  ASSERT_TRUE(none.smallest_memory_per_device_bytes);
  const double need = *none.smallest_memory_per_device_bytes;
  EXPECT_EQ(need, std::ceil(need));
  const Error e = no_pipeline_plan(r, none, "m.json");
  EXPECT_EQ(e.kind(), ErrorKind::kInfeasible);
  EXPECT_NE(std::string(e.what()).find(fmt::format("{:.0f} bytes", need)), std::string::npos);
  // The figure is exact: a plan fits in it, and in nothing a byte and a half below it.
  r.settings.memory_per_device_bytes = need;
  r.products = {true, true};
  const PipelinePlanResult fits = plan_pipeline(r);
  EXPECT_TRUE(fits.plan.feasible);
  EXPECT_FALSE(fits.smallest_memory_per_device_bytes);
  ASSERT_TRUE(fits.simulation);
  EXPECT_GT(fits.simulation->makespan_s, 0);
  EXPECT_NE(fits.report_html.find("<html"), std::string::npos);
  r.settings.memory_per_device_bytes = need - 1.5;
  r.products = {};
  EXPECT_FALSE(plan_pipeline(r).plan.feasible);
}

TransformerPlanRequest small_transformer() {
  TransformerPlanRequest r;
  r.model = load_transformer("llama3-8b");
  r.cluster_name = "dgx-h100";
  r.cluster = load_cluster(r.cluster_name, 16);
  r.calibration = load_calibration("", r.cluster);
  r.settings.devices = 16;
  r.settings.global_batch = 64;
  r.settings.seq_len = 2048;
  r.settings.top_k = 6;
  return r;
}

// A profile on the PCIe server: the placer keeps replicas that talk on shared PCIe switches
// and beats rank order in simulation; every stage names its devices.
PipelinePlanRequest placed_request(const std::string& profile, const std::string& cluster,
                                   int devices) {
  Workload w = load_workload(
      {std::string(PARAPLAN_DATA) + "/dapple/" + profile, "auto", cluster, 0, devices});
  PipelinePlanRequest r;
  r.model = w.model;
  r.settings = piper_settings(w, devices, 0, 0, 32);
  r.cluster = w.cluster;
  r.cluster_name = cluster;
  return r;
}

TEST(ApiPlanPipeline, PlacesStageReplicasOnTheClusterNetwork) {
  PipelinePlanRequest r = placed_request("amoeba-18-pbs-8.txt", "pcie-2socket", 8);
  // Piper's plan, whose stage replicas gain from being placed (the iteration objective's plan
  // here has one stage, which every placement prices the same).
  r.steady_state = true;
  r.products.report = true;
  const PipelinePlanResult placed = plan_pipeline(r);
  // The report draws the placement on the network: every device with its stage/replica/rank.
  EXPECT_NE(placed.report_html.find("Placement on the network"), std::string::npos);
  EXPECT_NE(placed.report_html.find("socket 0 – socket 1"), std::string::npos);
  for (const Stage& st : placed.plan.stages)
    for (int id : st.device_ids)
      EXPECT_NE(placed.report_html.find(fmt::format("<title>device {}: ", id)), std::string::npos);
  r.products.report = false;
  ASSERT_TRUE(placed.plan.as<PipelineDetail>().placement);
  std::set<int> used;
  for (const Stage& st : placed.plan.stages) {
    EXPECT_EQ(static_cast<int>(st.device_ids.size()), st.devices());
    for (int id : st.device_ids) EXPECT_TRUE(used.insert(id).second) << id;
  }
  const PlacementFigures& p = *placed.plan.as<PipelineDetail>().placement;
  EXPECT_EQ(p.cluster, "pcie-2socket");
  EXPECT_LT(p.cost_s, p.rank_order_cost_s);
  EXPECT_TRUE(p.exact);
  ASSERT_TRUE(placed.placed_simulated_s && placed.rank_order_simulated_s);
  EXPECT_LT(*placed.placed_simulated_s, 0.95 * *placed.rank_order_simulated_s);
  // Rank order on request: consecutive devices, priced the same as the placer's start.
  r.rank_order = true;
  const PipelinePlanResult ranked = plan_pipeline(r);
  int next = 0;
  for (const Stage& st : ranked.plan.stages)
    for (int id : st.device_ids) EXPECT_EQ(id, next++);
  EXPECT_DOUBLE_EQ(ranked.plan.as<PipelineDetail>().placement->cost_s, p.rank_order_cost_s);
  // The plan file keeps the placement.
  const io::Json doc = io::plan_to_json(placed.plan, r.model);
  const Plan back = io::plan_from_json(doc, r.model, "p.json");
  EXPECT_EQ(back.stages[0].device_ids, placed.plan.stages[0].device_ids);
  EXPECT_EQ(io::plan_to_json(back, r.model).dump(), doc.dump());
}

TEST(ApiPlanPipeline, PlacementNeverLosesToRankOrderInSimulation) {
  std::size_t index = 0;  // every second case under the sanitizers
  for (const auto& [profile, cluster, devices] :
       std::vector<std::tuple<std::string, std::string, int>>{
           {"vgg-19-pbs-32.txt", "dgx-a100-rails", 32},
           {"bert-24-pbs-6.txt", "dgx-a100-rails", 32},
           {"amoeba-18-pbs-8.txt", "oversubscribed-2to1", 32},
           {"bert-24-pbs-6.txt", "pcie-2socket", 8}}) {
    if (!testing_support::sweep_runs(index++, 2)) continue;
    const PipelinePlanResult out = plan_pipeline(placed_request(profile, cluster, devices));
    ASSERT_TRUE(out.placed_simulated_s) << profile << " " << cluster;
    EXPECT_LE(*out.placed_simulated_s, *out.rank_order_simulated_s) << profile << " " << cluster;
    const PlacementFigures& placed = *out.plan.as<PipelineDetail>().placement;
    EXPECT_LE(placed.cost_s, placed.rank_order_cost_s);
  }
}

// 8 A100 + 8 H100 (the built-in layer model's times are A100 times): stages choose their
// group, the split is uneven, and the plan beats the H100 alone and the plan made as if all
// sixteen were A100s; the plan file replays with its groups.
TEST(ApiPlanPipeline, MixedClustersGiveEachStageADeviceGroup) {
  Workload w = load_workload({"", "auto", "mixed-a100-h100", 0, 16});
  PipelinePlanRequest r;
  r.model = w.model;
  r.settings = piper_settings(w, 16, 0, 0, 0);
  ASSERT_EQ(r.settings.device_groups.size(), 2u);
  EXPECT_EQ(r.settings.device_groups[0].name, "A100");
  EXPECT_EQ(r.settings.device_groups[1].count, 8);
  EXPECT_NEAR(r.settings.device_groups[1].time_factor, 312.0 / 989.0, 1e-12);
  r.cluster = w.cluster;
  r.cluster_name = "mixed-a100-h100";
  const PipelinePlanResult out = plan_pipeline(r);
  ASSERT_TRUE(out.plan.feasible);
  ASSERT_TRUE(out.mixed);
  EXPECT_LT(out.plan.objective, out.mixed->fastest_alone);
  EXPECT_LT(out.plan.objective, out.mixed->blind_on_cluster);
  EXPECT_EQ(out.mixed->fastest_group, "H100");
  std::set<int> groups;
  for (const Stage& st : out.plan.stages) {
    groups.insert(st.device_type);
    for (int id : st.device_ids) EXPECT_EQ(id / 8, st.device_type) << id;  // A100 nodes first
  }
  EXPECT_EQ(groups.size(), 2u);
  // The same model on the H100s alone, priced against the A100 it was measured on.
  Workload h = load_workload({"", "auto", "dgx-h100", 0, 8});
  const PiperSettings alone = piper_settings(h, 8, 0, 0, 0, "A100");
  ASSERT_EQ(alone.device_groups.size(), 1u);
  PiperCostModel alone_cost(h.model, alone);
  EXPECT_DOUBLE_EQ(search_pipeline(h.model, alone_cost).plan.objective, out.mixed->fastest_alone);
  EXPECT_THROW(piper_settings(h, 8, 0, 0, 0, "TPUv9"), FieldError);
  // Written and replayed: the groups travel in piper_settings.
  const std::string path = write_temp("mixed.json", pipeline_plan_file(r, out).dump());
  const SimulateResult s = simulate_plan({path, "", false});
  EXPECT_GT(s.iteration_time_s, 0);
  EXPECT_TRUE(s.on_network);
}

// A profile taken on a GPU holds that GPU's times: on its own type they stand as measured, on
// another they scale by the ratio of the two peaks. The profiler's fp32 512² matmul rate on a GPU
// (6.6 TFLOP/s on an H100: launch-bound) is no basis; priced by it, an H100 profile on H100s came
// out 150 times too fast.
TEST(ApiPlanPipeline, AGpuProfileIsPricedByItsDevicesPeak) {
  Workload h = load_workload({"", "auto", "dgx-h100", 0, 8});
  h.model.profiled.device = "NVIDIA H100 80GB HBM3";
  h.model.profiled.flops_per_s = 6.63e12;
  EXPECT_TRUE(piper_settings(h, 8, 0, 0, 0).device_groups.empty());  // its own device
  EXPECT_TRUE(piper_settings(h, 1, 0, 0, 0).device_groups.empty());
  Workload a = load_workload({"", "auto", "dgx-a100", 0, 8});
  a.model.profiled = h.model.profiled;
  const PiperSettings on_a100 = piper_settings(a, 8, 0, 0, 0);
  ASSERT_EQ(on_a100.device_groups.size(), 1u);
  EXPECT_NEAR(on_a100.device_groups[0].time_factor, 989.0 / 312.0, 1e-12);
  // A GPU of no known type: the user says which type its times are.
  a.model.profiled.device = "Some Accelerator 9000";
  try {
    piper_settings(a, 8, 0, 0, 0);
    ADD_FAILURE() << "an unknown GPU was priced";
  } catch (const FieldError& e) {
    EXPECT_NE(std::string(e.what()).find("--model-device"), std::string::npos) << e.what();
  }
  EXPECT_EQ(piper_settings(a, 8, 0, 0, 0, "H100").device_groups.size(), 1u);
}

TEST(ApiPlanTransformer, ResimulationRanksTheFirstKBySimulatedTime) {
  TransformerPlanRequest r = small_transformer();
  const TransformerPlanResult plain = plan_transformer(r);
  ASSERT_EQ(plain.search.top.size(), 6u);
  ASSERT_EQ(plain.plans.size(), 6u);  // the same top as Plans
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_EQ(plain.plans[i].objective, plain.search.top[i].result.iteration_time_s);
  for (double s : plain.simulated_s) EXPECT_EQ(s, -1);
  r.resimulate = 4;
  const TransformerPlanResult ranked = plan_transformer(r);
  ASSERT_EQ(ranked.simulated_s.size(), 6u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_GT(ranked.simulated_s[i], 0);
  // In simulated order, but for the leanest of the ties, which leads (within the band).
  const std::size_t from = ranked.leaner_chosen ? 2 : 1;
  for (std::size_t i = from; i < 4; ++i)
    EXPECT_LE(ranked.simulated_s[i - 1], ranked.simulated_s[i]) << "rank " << i;
  for (std::size_t i = 1; i < 4; ++i)
    EXPECT_LE(ranked.simulated_s[0], ranked.simulated_s[i] * (1 + ranked.time_band));
  EXPECT_EQ(ranked.simulated_s[4], -1);
  // The first K are the same plans, reordered; the rest keep their place.
  EXPECT_EQ(ranked.search.top[5].result.iteration_time_s,
            plain.search.top[5].result.iteration_time_s);
}

// Every plan offered is one its engine runs: on each stack, and for each export's engine, every
// plan of the top passes the engine's rules (ir/engine_rules.h); a knob fixed against them is
// refused with the engine's reason.
// torchtitan recomputes every k-th layer of a rank: 40 of 80 layers (k = 2) it runs, 77 it
// cannot (its export used to refuse the plans the search offered: llama3-70b on 64 H100).
TEST(ApiPlanTransformer, TorchtitanRecomputesOnlyWhatSomeLayerFrequencyGives) {
  TrainingConfig t;
  t.stack = Stack::kFsdp;
  t.zero_stage = 3;
  t.dp = 8;
  t.recompute = Recompute::kFull;
  t.recompute_layers = 40;
  const EngineRules& titan = engine_rules(Engine::kTorchtitan);
  EXPECT_EQ(rules::engine(titan, t, 80), std::nullopt);
  t.recompute_layers = 77;
  const auto broken = rules::engine(titan, t, 80);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, "engine_every_kth");
}

// NeMo 1.x sets only the first and last stages' layers and splits the rest evenly: 80 layers on
// 6 stages run as 14 | 13 × 4 | 14, never as the even 13 | 14 | 14 | 13 | 13 | 13 (its
// divisibility check refused the export), and a split with no such form is refused by name.
TEST(ApiPlanTransformer, NemoSplitsOnlyItsFirstAndLastStages) {
  EXPECT_EQ(first_last_split(80, 6), (std::vector<int>{14, 13, 13, 13, 13, 14}));
  EXPECT_EQ(first_last_split(80, 4), (std::vector<int>{20, 20, 20, 20}));
  EXPECT_EQ(first_last_split(61, 2), (std::vector<int>{31, 30}));
  EXPECT_EQ(first_last_split(61, 32), std::nullopt);  // 30 middle stages of 2 leave 1
  const EngineRules& nemo = engine_rules(Engine::kNemo);
  TrainingConfig t;
  t.stack = Stack::kMegatron;
  t.pp = 6;
  t.dp = 2;
  const auto broken = rules::engine(nemo, t, 80);  // the even split: 13 | 14 | 14 | 13 | ...
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, "engine_first_last_split");
  EXPECT_EQ(rules::engine(engine_rules(Engine::kMegatronLm), t, 80), std::nullopt);
  t.stage_layers = *first_last_split(80, 6);
  EXPECT_EQ(rules::engine(nemo, t, 80), std::nullopt);
}

// torchtitan enables bf16 autocast only under FSDP (sharded replicas or context parallelism):
// tp 8 × pp 6 on 48 GPUs with no sharding trains in fp32 there (engine-check: "Mixed precision
// training is disabled"), so it is not a torchtitan plan unless in pure bf16.
TEST(ApiPlanTransformer, TorchtitanMixedPrecisionNeedsFsdp) {
  const EngineRules& titan = engine_rules(Engine::kTorchtitan);
  TrainingConfig t;
  t.stack = Stack::kFsdp;
  t.tp = 8;
  t.pp = 6;
  t.sequence_parallel = true;
  const auto broken = rules::engine(titan, t, 80);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, "engine_amp_needs_fsdp");
  t.bf16_gradient_reduction = true;  // pure bf16 (training.dtype = "bfloat16")
  t.fp32_loss = false;
  EXPECT_EQ(rules::engine(titan, t, 80), std::nullopt);
  t.bf16_gradient_reduction = false;
  t.fp32_loss = true;
  t.tp = 4;
  t.dp = 2;
  t.zero_stage = 3;  // FSDP over two replicas
  EXPECT_EQ(rules::engine(titan, t, 80), std::nullopt);
}

TEST(ApiPlanTransformer, EveryPlanOfferedIsOneItsEngineRuns) {
  for (const Engine engine : kEngines) {
    TransformerPlanRequest r = small_transformer();
    r.settings.stack = engine_rules(engine).stack;
    r.engine = engine;
    const TransformerPlanResult a = plan_transformer(r);
    ASSERT_FALSE(a.search.top.empty()) << engine_name(engine);
    for (const LlmCandidate& c : a.search.top) {
      const auto broken =
          rules::engine(engine_rules(engine), c.config, static_cast<int>(r.model.num_layers));
      EXPECT_FALSE(broken) << engine_name(engine) << ": " << broken->text;
      EXPECT_EQ(rules::engine(engine_rules(stack_engine(c.config.stack)), c.config,
                              static_cast<int>(r.model.num_layers)),
                std::nullopt);
    }
  }
  // Without an engine, the stack's: Megatron-LM shards at most the optimizer.
  TransformerPlanRequest r = small_transformer();
  for (const auto& c : plan_transformer(r).search.top) EXPECT_LE(c.config.zero_stage, 1);
  r.settings.zero_stage = 3;
  try {
    plan_transformer(r);
    ADD_FAILURE() << "ZeRO 3 planned for Megatron-LM";
  } catch (const RuleViolation& e) {
    EXPECT_EQ(e.violation().rule, "engine_zero") << e.what();
  }
}

TEST(ApiInputs, WrongNamesAreFieldErrorsOnTheirField) {
  try {
    load_transformer("no-such-model");
    FAIL();
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "model");
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.rest().find("llama3-8b"), std::string::npos);  // lists the built-ins
  }
  try {
    load_cluster("no-such-preset", 8);
    FAIL();
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "cluster");
  }
  try {
    export_plan("titan", load_transformer("llama3-8b"), TrainingConfig{});
    FAIL();
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "export");
  }
  try {  // a plan of another stack than the engine's is refused by the engine's rules
    export_plan("torchtitan", load_transformer("llama3-8b"), TrainingConfig{});
    FAIL();
  } catch (const RuleViolation& e) {
    EXPECT_EQ(e.violation().knob, Knob::kStack);
  }
}

TEST(ApiSimulate, ReadsEachPlanFileByThePlannerItStates) {
  // A pipeline plan under Piper's cost model, as `plan -o` writes it.
  PipelinePlanRequest r = small_pipeline(zoo::default_cluster().min_device_memory_bytes());
  const PipelinePlanResult p = plan_pipeline(r);
  ASSERT_TRUE(p.plan.feasible);
  io::Json doc = io::plan_to_json(p.plan, r.model);
  EXPECT_EQ(doc["planner"], "pipeline");
  doc["model_config"] = io::model_to_json(r.model);
  doc["piper_settings"] = {{"max_devices", r.settings.max_devices},
                           {"memory_per_device_bytes", r.settings.memory_per_device_bytes},
                           {"bandwidth_bytes_per_s", r.settings.bandwidth_bytes_per_s},
                           {"microbatches", r.settings.microbatches}};
  const std::string path = write_temp("api_pipeline.json", doc.dump());
  const SimulateResult s = simulate_plan({path, "", false});
  EXPECT_EQ(s.kind, PlanKind::kPipeline);
  EXPECT_GE(s.difference, -1e-12);  // Piper's bound has no fill or drain
  EXPECT_NEAR(s.iteration_time_s, s.reference_s * (1 + s.difference), 1e-9 * s.iteration_time_s);
  // GPipe replays too (every forward first: no faster than 1F1B, as many activations held as
  // micro-batches); a schedule pipeline plans have no runtime for is refused at the field.
  const SimulateResult gpipe = simulate_plan({path, "gpipe", false});
  EXPECT_EQ(gpipe.schedule, Schedule::kGpipe);
  EXPECT_GE(gpipe.iteration_time_s, s.iteration_time_s * (1 - 1e-12));
  try {
    simulate_plan({path, "zero-bubble", false});
    FAIL();
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "schedule");
  }
  // The schedule as data: every replica's passes, each micro-batch forward then backward once.
  const io::Json schedule = pipeline_schedule({path, "", false});
  ASSERT_EQ(schedule["stages"].size(), s.stages);
  for (const auto& stage : schedule["stages"]) {
    std::map<int, int> forwards, backwards;
    for (const auto& replica : stage["passes"])
      for (const auto& pass : replica)
        ++(pass[0] == "F" ? forwards : backwards)[pass[1].get<int>()];
    EXPECT_EQ(static_cast<int>(forwards.size()), s.microbatches);
    EXPECT_EQ(forwards, backwards);
  }
  // A planner the cost model does not belong to is refused at the field, not guessed around.
  doc["planner"] = "intra-op";
  const std::string wrong = write_temp("api_wrong_planner.json", doc.dump());
  doc.erase("planner");  // files from before the field: the planner of their cost model
  const std::string old = write_temp("api_old_plan.json", doc.dump());
  EXPECT_EQ(simulate_plan({old, "", false}).kind, PlanKind::kPipeline);
  doc["planner"] = "pipeline";
  doc["cost_model"] = "alpa";
  const std::string unknown = write_temp("api_unknown_cost.json", doc.dump());
  try {
    simulate_plan({unknown, "", false});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("/cost_model"), std::string::npos) << e.what();
  }
  EXPECT_THROW(simulate_plan({wrong, "", false}), Error);

  // An intra-op plan.
  IntraOpPlanRequest ir;
  OperatorGraph g = load_operator_graph("alexnet", "", 32);
  ir.model = g.model;
  ir.batch = g.batch;
  ir.settings.devices = 4;
  ir.settings.flops_per_s = 10e12;
  ir.settings.bandwidth_bytes_per_s = 16e9;
  ir.settings.min_block = g.min_block;
  const IntraOpPlanResult ip = plan_intra_op(ir);
  io::Json idoc = io::plan_to_json(ip.plan, ir.model);
  EXPECT_EQ(idoc["planner"], "intra-op");
  idoc["flops_per_s"] = ir.settings.flops_per_s;
  idoc["devices"] = ir.settings.devices;
  const SimulateResult is = simulate_plan({write_temp("api_intra.json", idoc.dump()), "", false});
  EXPECT_EQ(is.kind, PlanKind::kIntraOp);
  EXPECT_EQ(is.layers, ir.model.layers.size());
  EXPECT_NEAR(is.reference_s, ip.plan.as<IntraOpDetail>().step_time_s, 1e-9 * is.reference_s);

  // A transformer plan.
  TransformerPlanRequest tr = small_transformer();
  const TransformerPlanResult tp = plan_transformer(tr);
  const io::Json tdoc = plan_file_json(
      {tr.model.name, tp.plans[0], TransformerReplay{tr.model, tr.cluster, tr.calibration}},
      {{"config", io::training_to_json(tp.search.top[0].config)}});
  const SimulateResult ts = simulate_plan({write_temp("api_llm.json", tdoc.dump()), "", true});
  EXPECT_EQ(ts.kind, PlanKind::kTransformer);
  EXPECT_NEAR(ts.reference_s, tp.search.top[0].result.iteration_time_s, 1e-9 * ts.reference_s);
  EXPECT_NE(ts.report_html.find("<html"), std::string::npos);
}

}  // namespace
}  // namespace paraplan::api
