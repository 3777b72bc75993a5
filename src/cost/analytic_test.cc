// The analytic transformer cost model: the knob rules and the memory model's directions (its
// accuracy against measured runs is checked in validate/).
#include "cost/analytic.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/error.h"
#include "ir/training_rules.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan {
namespace {

AnalyticCostModel llama8b(int devices) {
  return AnalyticCostModel(*zoo::llm_model("llama3-8b"), *zoo::cluster_preset("dgx-h100", devices),
                           default_calibration("H100"));
}

TEST(Analytic, KnobRulesAreChecked) {
  auto cost = llama8b(16);
  // Each broken rule comes back as a value: the knob, the rule, in field names (no flags).
  auto expect_usage = [&](TrainingConfig t, Knob knob, const std::string& rule,
                          const std::string& needle) {
    try {
      cost.evaluate(t);
      ADD_FAILURE() << "accepted";
    } catch (const RuleViolation& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_EQ(e.violation().knob, knob) << e.what();
      EXPECT_EQ(e.violation().rule, rule) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
    }
  };
  TrainingConfig t;
  t.global_batch = 64;
  t.tp = 3;
  expect_usage(t, Knob::kTp, "tp_divides_heads", "tp 3: the 32 attention heads");
  t.tp = 2;
  t.dp = 8;
  t.micro_batch = 3;
  expect_usage(t, Knob::kGlobalBatch, "batch_divides", "global_batch 64");
  t.micro_batch = 1;
  t.dp = 16;
  expect_usage(t, Knob::kDevices, "devices_fit_cluster", "devices, but the cluster has 16");
  t.dp = 8;
  t.pp = 1;
  EXPECT_NO_THROW(cost.evaluate(t));
  t.sequence_parallel = true;
  t.seq_len = 2047;
  expect_usage(t, Knob::kSequenceParallel, "sequence_divides_tp", "divisible by tp 2");
  t.sequence_parallel = false;
  t.seq_len = 2048;
  t.dp = 4;
  t.cp = 2;
  EXPECT_NO_THROW(cost.evaluate(t));
  t.seq_len = 2050;
  expect_usage(t, Knob::kCp, "cp_divides_sequence", "cp 2");
  t.seq_len = 2048;
  t.ep = 2;
  expect_usage(t, Knob::kEp, "experts_need_moe", "needs a mixture-of-experts model");
  t.ep = 1;
  t.cp = 1;
  t.dp = 8;
  t.zero_stage = 2;
  t.pp = 1;
  EXPECT_NO_THROW(cost.evaluate(t));
  t.tp = 1;
  t.pp = 2;
  expect_usage(t, Knob::kZero, "zero_without_pipeline", "(pp 2); use zero 0 or 1");
  t.zero_stage = 1;
  t.vpp = 3;
  expect_usage(t, Knob::kVpp, "vpp_divides_layers",
               "divisible by pp × vpp");  // 32 layers, 2 × 3 = 6
  t.global_batch = 24;
  t.vpp = 2;
  expect_usage(t, Knob::kVpp, "vpp_microbatches", "multiple of pp 2");  // 24 / 8 = 3 micro-batches
  t.global_batch = 64;
  t.vpp = 1;
  t.stage_layers = {20, 10};
  expect_usage(t, Knob::kStageLayers, "layers_sum", "stage_layers 20,10: they sum to 30");
  t.stage_layers = {20, 12};
  EXPECT_NO_THROW(cost.evaluate(t));
  t.recompute_layers = 13;
  expect_usage(t, Knob::kRecompute, "recompute_within_stage", "recompute 13");
}

TEST(Analytic, EvenSplitFavoursTheMiddle) {
  EXPECT_EQ(even_stage_split(10, 4), (std::vector<int>{2, 3, 3, 2}));
  EXPECT_EQ(even_stage_split(11, 4), (std::vector<int>{3, 3, 3, 2}));
  EXPECT_EQ(even_stage_split(8, 1), (std::vector<int>{8}));
  EXPECT_EQ(even_stage_split(7, 2), (std::vector<int>{4, 3}));
}

TEST(Analytic, KnobsMoveTimeAndMemoryTheRightWay) {
  auto cost = llama8b(64);
  TrainingConfig t;
  t.global_batch = 256;
  t.seq_len = 8192;
  t.tp = 4;
  t.pp = 4;
  t.dp = 4;
  t.recompute = Recompute::kNone;
  const auto base = cost.evaluate(t);
  // Interleaving shrinks the bubble and costs sends.
  t.vpp = 2;
  const auto interleaved = cost.evaluate(t);
  EXPECT_LT(interleaved.bubble_s, base.bubble_s);
  // About halved: the interleaved stages also send twice as often.
  EXPECT_NEAR(interleaved.bubble_s * 2, base.bubble_s, 0.1 * base.bubble_s);
  EXPECT_GT(interleaved.memory.activations_bytes, base.memory.activations_bytes);
  t.vpp = 1;
  // Context parallelism halves the activations per device.
  t.dp = 2;
  t.cp = 2;
  const auto context = cost.evaluate(t);
  EXPECT_NEAR(context.memory.activations_bytes * 2, base.memory.activations_bytes,
              0.3 * base.memory.activations_bytes);
  t.cp = 1;
  t.dp = 4;
  // Recomputing some layers lies between none and all.
  t.recompute = Recompute::kFull;
  const auto all = cost.evaluate(t);
  t.recompute_layers = 4;
  const auto some = cost.evaluate(t);
  EXPECT_LT(some.iteration_time_s, all.iteration_time_s);
  EXPECT_GT(some.iteration_time_s, base.iteration_time_s);
  EXPECT_GT(some.memory.activations_bytes, all.memory.activations_bytes);
  EXPECT_LT(some.memory.activations_bytes, base.memory.activations_bytes);
  t.recompute_layers = 0;
  t.recompute = Recompute::kNone;
  // Overlapping the gradient reduction hides most of it.
  t.overlap_grad_reduce = true;
  const auto overlapped = cost.evaluate(t);
  EXPECT_LT(overlapped.dp_allreduce_s, base.dp_allreduce_s);
  // A lighter last stage (the LM head lives there) is never slower than uneven the other way.
  t.overlap_grad_reduce = false;
  t.stage_layers = {9, 8, 8, 7};
  const auto lighter_last = cost.evaluate(t);
  t.stage_layers = {7, 8, 8, 9};
  const auto heavier_last = cost.evaluate(t);
  EXPECT_LT(lighter_last.iteration_time_s, heavier_last.iteration_time_s);
  ASSERT_EQ(lighter_last.stages.size(), 4u);
  EXPECT_EQ(lighter_last.stages[0].layers, 9);
  // The lower bound holds for every split.
  t.stage_layers.clear();
  const double bound = cost.time_lower_bound(t);
  for (auto split : {std::vector<int>{8, 8, 8, 8}, {9, 8, 8, 7}, {7, 8, 8, 9}, {10, 10, 10, 2}}) {
    t.stage_layers = split;
    EXPECT_LE(bound, cost.evaluate(t).iteration_time_s);
  }
}

// FlashAttention: no s × s scores in memory and no score traffic, half the causal products,
// and a backward that recomputes the scores; faster and leaner than standard attention, more so
// at long sequences.
TEST(Analytic, FlashAttentionDropsTheScores) {
  auto cost = llama8b(8);
  TrainingConfig t;
  t.global_batch = 16;
  t.tp = 8;
  t.dp = 1;
  t.recompute = Recompute::kNone;
  double previous_gain = 1;
  for (std::int64_t s : {2048, 8192, 32768}) {
    t.seq_len = s;
    t.attention = Attention::kStandard;
    const auto standard = cost.evaluate(t);
    t.attention = Attention::kFlash;
    const auto flash = cost.evaluate(t);
    EXPECT_LT(flash.iteration_time_s, standard.iteration_time_s) << s;
    EXPECT_LT(flash.memory.activations_bytes, standard.memory.activations_bytes) << s;
    // The score term, 5·a·b·s²/t bytes per layer (2 without dropout, as Llama trains), is what
    // flash drops (less its log-sum-exp).
    const TransformerConfig m = *zoo::llm_model("llama3-8b");
    const double scores =
        (m.dropout ? 5.0 : 2.0) * m.num_attention_heads * static_cast<double>(s) * s / t.tp;
    const double lse = 4.0 * m.num_attention_heads * static_cast<double>(s) / t.tp;
    EXPECT_NEAR(standard.memory.activations_bytes - flash.memory.activations_bytes,
                static_cast<double>(m.num_layers) * (scores - lse), 1e-6 * scores * m.num_layers)
        << s;
    const double gain = flash.iteration_time_s / standard.iteration_time_s;
    EXPECT_LT(gain, previous_gain) << s;
    previous_gain = gain;
  }
}

TEST(Analytic, ExpertParallelismSplitsTheExperts) {
  AnalyticCostModel cost(*zoo::llm_model("mixtral-8x7b"), *zoo::cluster_preset("dgx-h100", 64),
                         default_calibration("H100"));
  TrainingConfig t;
  t.global_batch = 256;
  t.seq_len = 4096;
  t.tp = 2;
  t.pp = 4;
  t.dp = 8;
  const auto replicated = cost.evaluate(t);
  t.ep = 8;
  const auto split = cost.evaluate(t);
  EXPECT_LT(split.memory.weights_bytes, replicated.memory.weights_bytes / 4);
  EXPECT_GT(split.compute_per_microbatch_s, 0);
  EXPECT_GT(split.pipeline_s, replicated.pipeline_s);  // the all-to-alls cost time
  t.ep = 3;
  EXPECT_THROW(cost.evaluate(t), Error);
}

// Mixtral 8x7B on 64 H100 (8 per node): the MoE terms, each against the configuration that
// lacks it.
TrainingConfig mixtral_config() {
  TrainingConfig t;
  t.global_batch = 256;
  t.seq_len = 4096;
  t.pp = 4;
  t.dp = 16;
  t.ep = 8;
  t.recompute = Recompute::kNone;
  t.zero_stage = 1;
  return t;
}

AnalyticCostModel mixtral64(const Calibration& cal = default_calibration("H100")) {
  return AnalyticCostModel(*zoo::llm_model("mixtral-8x7b"), *zoo::cluster_preset("dgx-h100", 64),
                           cal);
}

TEST(AnalyticMoe, AllToAllCrossingNodesCostsTheNetwork) {
  const auto cost = mixtral64();
  TrainingConfig t = mixtral_config();
  const double intra = cost.block_costs(t).ep_comm_s;  // ep 8 at stride 1: one node
  t.tp = 2;  // ep 8 at stride 2: four peers on the node, four across the network
  t.dp = 8;
  const BlockCosts crossing = cost.block_costs(t);
  // Half of the copies cross at 50 GB/s instead of 450 GB/s: several times slower, although
  // each device sends the same bytes.
  EXPECT_GT(crossing.ep_comm_s, 3 * intra);
  // The same placement on one big NVLink domain (a single tier) stays cheap.
  Cluster flat = *zoo::cluster_preset("dgx-h100", 64);
  flat.tiers.resize(1);
  flat.machine_sizes = {64};
  const AnalyticCostModel one_domain(*zoo::llm_model("mixtral-8x7b"), flat,
                                     default_calibration("H100"));
  EXPECT_LT(one_domain.block_costs(t).ep_comm_s, crossing.ep_comm_s / 3);
}

TEST(AnalyticMoe, LoadImbalanceAndCapacityFactorSetThePace) {
  Calibration cal = default_calibration("H100");
  cal.moe_load_imbalance = 1.25;
  const auto cost = mixtral64(cal);
  TrainingConfig t = mixtral_config();
  const BlockCosts dropless = cost.block_costs(t);
  t.moe_capacity_factor = 1;  // every expert exactly its share
  const BlockCosts balanced = cost.block_costs(t);
  EXPECT_GT(dropless.layer_s, balanced.layer_s);
  // The busiest rank receives 25 % more bytes; the per-peer latency does not grow.
  EXPECT_GT(dropless.ep_comm_s, 1.05 * balanced.ep_comm_s);
  EXPECT_LT(dropless.ep_comm_s, 1.25 * balanced.ep_comm_s);
  EXPECT_GT(dropless.layer_activation_bytes, balanced.layer_activation_bytes);
  t.moe_capacity_factor = 1.25;  // padded to 1.25 × the share: the same pace as the imbalance
  EXPECT_NEAR(cost.block_costs(t).layer_s, dropless.layer_s, 1e-12);
  // Without expert parallelism every expert is local: the grouped GEMM does the same work
  // whatever the routing, so dropless routing costs nothing extra.
  t = mixtral_config();
  t.ep = 1;
  const double local_dropless = cost.block_costs(t).layer_s;
  t.moe_capacity_factor = 1;
  EXPECT_DOUBLE_EQ(cost.block_costs(t).layer_s, local_dropless);
}

TEST(AnalyticMoe, SmallExpertMatmulsRunBelowTheDenseEfficiency) {
  // The same active width split into finer experts: 8 experts of f, top-2, against 64 experts
  // of f/8, top-16; the same FLOPs per token, each expert GEMM eight times smaller. The fine
  // model also moves more bytes (permutations); the size penalty alone is what separates the
  // two ratios below (with and without the GEMM efficiency's dependence on size).
  TransformerConfig coarse = *zoo::llm_model("mixtral-8x7b");
  TransformerConfig fine = coarse;
  fine.num_experts = 64;
  fine.experts_per_token = 16;
  fine.expert_ffn_hidden_size = coarse.expert_ffn_hidden_size / 8;
  const Cluster cluster = *zoo::cluster_preset("dgx-h100", 64);
  TrainingConfig t = mixtral_config();
  t.ep = 1;
  auto ratio = [&](const Calibration& cal) {
    return AnalyticCostModel(fine, cluster, cal).block_costs(t).layer_s /
           AnalyticCostModel(coarse, cluster, cal).block_costs(t).layer_s;
  };
  Calibration size_blind = default_calibration("H100");
  size_blind.gemm_half_efficiency_flops = 0;
  EXPECT_GT(ratio(default_calibration("H100")), ratio(size_blind) * 1.03);
}

TEST(AnalyticMoe, ExpertActivationsFollowTheRoutedCopies) {
  const auto cost = mixtral64();
  TrainingConfig t = mixtral_config();
  t.moe_capacity_factor = 1;
  const double moe = cost.block_costs(t).layer_activation_bytes;
  // The dense formula with Mixtral's shape (ffn 3.5 h, one copy per token) keeps less than
  // two routed SwiGLU copies of width 3.5 h each.
  AnalyticCostModel dense(*zoo::llm_model("llama3-8b"), *zoo::cluster_preset("dgx-h100", 64),
                          default_calibration("H100"));
  TrainingConfig d = t;
  d.ep = 1;
  d.moe_capacity_factor = 0;
  const double dense_bytes = dense.block_costs(d).layer_activation_bytes;
  // Per token per layer: 34 h dense; MoE adds k (2 h + 6 f) + 4 E - 16 h = 2 (2 h + 21 h) - 16 h
  // + 32 = 30 h + 32 bytes (h 4096 in both).
  const double tokens = 4096.0;
  EXPECT_NEAR(moe - dense_bytes, tokens * (30 * 4096.0 + 32), 1.0);
}

TEST(AnalyticMoe, CapacityFactorRules) {
  auto dense = llama8b(16);
  TrainingConfig t;
  t.global_batch = 64;
  t.dp = 16;
  t.moe_capacity_factor = 1.5;
  EXPECT_THROW(dense.evaluate(t), Error);
  const auto cost = mixtral64();
  t = mixtral_config();
  t.moe_capacity_factor = 0.5;
  EXPECT_THROW(cost.evaluate(t), Error);
  t.moe_capacity_factor = 1.5;
  EXPECT_NO_THROW(cost.evaluate(t));
}

TEST(Analytic, MemoryMovesTheRightWay) {
  auto cost = llama8b(64);
  TrainingConfig t;
  t.global_batch = 256;
  t.micro_batch = 2;
  t.tp = 2;
  t.pp = 2;
  t.dp = 16;
  t.seq_len = 4096;
  t.recompute = Recompute::kNone;
  auto none = cost.evaluate(t);
  t.recompute = Recompute::kSelective;
  auto selective = cost.evaluate(t);
  t.recompute = Recompute::kFull;
  auto full = cost.evaluate(t);
  EXPECT_GT(none.memory.activations_bytes, selective.memory.activations_bytes);
  EXPECT_GT(selective.memory.activations_bytes, full.memory.activations_bytes);
  EXPECT_LT(none.iteration_time_s, full.iteration_time_s);  // recomputation costs time
  t.zero_stage = 1;
  auto zero1 = cost.evaluate(t);
  EXPECT_NEAR(zero1.memory.optimizer_bytes * 16, full.memory.optimizer_bytes,
              1e-6 * full.memory.optimizer_bytes);
  EXPECT_NEAR(full.tokens_per_s * full.iteration_time_s, 256.0 * 4096, 1e-6);
  EXPECT_GT(full.mfu, 0.05);
  EXPECT_LT(full.mfu, 1.0);
}

// On the fsdp stack, selective is torchtitan's per-op checkpointing: it keeps every second GEMM's
// output and the attention's, between nothing recomputed and the whole layer, and recomputes
// GEMMs (so it costs more than Megatron's attention-only recomputation would).
TEST(Analytic, TorchtitanSelectiveCheckpointingSitsBetweenNoneAndFull) {
  auto cost = llama8b(64);
  TrainingConfig t;
  t.stack = Stack::kFsdp;
  t.global_batch = 64;
  t.micro_batch = 1;
  t.dp = 64;
  t.seq_len = 8192;
  t.zero_stage = 3;
  t.fused_elementwise = false;
  auto at = [&](Recompute r) {
    t.recompute = r;
    return cost.evaluate(t);
  };
  const auto none = at(Recompute::kNone), op = at(Recompute::kSelective),
             full = at(Recompute::kFull);
  EXPECT_LT(op.memory.activations_bytes, 0.5 * none.memory.activations_bytes);
  EXPECT_GT(op.memory.activations_bytes, 2 * full.memory.activations_bytes);
  EXPECT_GT(op.iteration_time_s, none.iteration_time_s);
  EXPECT_LT(op.iteration_time_s, full.iteration_time_s);
  // FSDP2 with pipeline stages, as torchtitan runs it: allowed on this stack alone.
  EXPECT_FALSE(rules::zero(3, 4, Stack::kFsdp, 8));
  EXPECT_TRUE(rules::zero(3, 4, Stack::kFsdp, 1));  // nothing to shard the stages over
  EXPECT_TRUE(rules::zero(3, 4, Stack::kMegatron));
  EXPECT_TRUE(rules::zero(2, 4, Stack::kDeepSpeed));
}

// Blackwell presets: FP8 (MXFP8) runs there at twice the BF16 rate, on the B200's published
// peak; GB200's NVLink domain holds 72 GPUs, so tp 16 stays on NVLink there and not on B200.
TEST(Analytic, BlackwellPresetsPriceFp8AndTheirNvlinkDomain) {
  const auto b200 = *zoo::cluster_preset("dgx-b200", 16);
  const auto gb200 = *zoo::cluster_preset("gb200-nvl72", 144);
  EXPECT_EQ(b200.machine_sizes, (std::vector<int>{8, 8}));
  EXPECT_EQ(gb200.machine_sizes, (std::vector<int>{72, 72}));
  EXPECT_EQ(b200.device_types[0].peak_flops_per_s, 2.25e15);
  const AnalyticCostModel cost(*zoo::llm_model("llama3-8b"), b200, default_calibration("B200"));
  TrainingConfig t;
  t.global_batch = 64;
  t.dp = 16;
  t.seq_len = 4096;
  const double bf16 = cost.evaluate(t).iteration_time_s;
  t.fp8 = true;
  EXPECT_LT(cost.evaluate(t).iteration_time_s, 0.85 * bf16);
  const AnalyticCostModel a100(*zoo::llm_model("llama3-8b"), *zoo::cluster_preset("dgx-a100", 16),
                               default_calibration("A100"));
  EXPECT_THROW(a100.evaluate(t), RuleViolation);
}

// FP8 parameters (--fp8-param-gather) keep each linear weight in FP8 with its transpose instead
// of bf16 beside an FP8 copy and its transpose: 2 bytes a layer parameter fewer, and the
// distributed optimizer's gather moves half the bytes. --grad-reduce-in-bf16 makes Megatron-
// Core's gradient buffer bf16: 2 bytes a parameter fewer (Llama 3 8B's FP8 recipe on 8 H100
// was "out of memory" at 104 GiB with neither; it runs).
TEST(Analytic, Fp8ParametersAndBf16GradientsTakeTheirBytes) {
  const auto h100 = *zoo::cluster_preset("dgx-h100", 8);
  const TransformerConfig llama = *zoo::llm_model("llama3-8b");
  const AnalyticCostModel cost(llama, h100, default_calibration("H100"));
  TrainingConfig t;
  t.global_batch = 128;
  t.dp = 8;
  t.seq_len = 8192;
  t.zero_stage = 1;
  t.fp8 = true;
  const AnalyticResult copies = cost.evaluate(t);
  t.fp8_param_gather = true;
  const AnalyticResult params = cost.evaluate(t);
  const double layer_params =
      static_cast<double>(llama.num_layers) * (cost.block_costs(t).layer_dense_params);
  EXPECT_NEAR(copies.memory.weights_bytes - params.memory.weights_bytes, 2 * layer_params,
              1e-6 * layer_params);
  EXPECT_LE(params.iteration_time_s, copies.iteration_time_s);
  t.bf16_gradient_reduction = true;
  const AnalyticResult bf16 = cost.evaluate(t);
  EXPECT_NEAR(params.memory.gradients_bytes / bf16.memory.gradients_bytes, 2.0, 1e-9);
  t.fp8 = false;
  try {
    cost.evaluate(t);
    ADD_FAILURE() << "FP8 parameters without FP8";
  } catch (const RuleViolation& e) {
    EXPECT_EQ(e.violation().rule, "fp8_params_need_fp8");
  }
}

// HSDP: the states shard over the group alone (16 times the bytes of 128-way sharding at
// groups of 8), the group's gathers stay on the node's NVLink, and each micro-batch's gradient
// shards are all-reduced across the 16 groups on the inter-node links. A group of every rank is
// full sharding; a group that does not divide dp × cp, or HSDP without ZeRO 3, is refused.
TEST(Analytic, HybridShardingShardsWithinGroupsAndAllReducesAcrossThem) {
  const auto a100 = *zoo::cluster_preset("dgx-a100", 128);
  const AnalyticCostModel cost(*zoo::llm_model("llama2-13b"), a100, default_calibration("A100"));
  TrainingConfig t;
  t.stack = Stack::kFsdp;
  t.zero_stage = 3;
  t.dp = 128;
  t.global_batch = 128;
  t.seq_len = 4096;
  t.recompute = Recompute::kNone;
  const AnalyticResult full = cost.evaluate(t);
  t.shard_group = 128;
  EXPECT_EQ(cost.evaluate(t).iteration_time_s, full.iteration_time_s);
  t.shard_group = 8;
  const AnalyticResult hybrid = cost.evaluate(t);
  EXPECT_NEAR(hybrid.memory.optimizer_bytes, 16 * full.memory.optimizer_bytes,
              1e-9 * hybrid.memory.optimizer_bytes);
  EXPECT_NEAR(hybrid.memory.weights_bytes, 16 * full.memory.weights_bytes,
              1e-9 * hybrid.memory.weights_bytes);
  const double layer = cost.block_costs(t).layer_dense_params;
  const SyncParts parts = cost.sync_parts(t, layer, 0);
  t.shard_group = 0;
  const SyncParts full_parts = cost.sync_parts(t, layer, 0);
  EXPECT_EQ(full_parts.replica_allreduce_s, 0);
  EXPECT_GT(parts.replica_allreduce_s, 0);
  EXPECT_LT(parts.weight_gather_s, full_parts.weight_gather_s);  // NVLink, 8 ranks
  for (const auto& [zero, group, rule] :
       {std::tuple{3, 7, "shard_group_divides"}, std::tuple{2, 8, "shard_group_needs_zero3"}}) {
    t.zero_stage = zero;
    t.shard_group = group;
    try {
      cost.evaluate(t);
      ADD_FAILURE() << "shard group " << group << " with ZeRO " << zero;
    } catch (const RuleViolation& e) {
      EXPECT_EQ(e.violation().rule, rule);
    }
  }
}

// Expert tensor parallelism 1 beside tp 4 (Megatron-Core's MoE recipes): each rank holds whole
// experts (4 times the expert bytes of etp 4), routes its sequence-parallel quarter of the
// tokens, and its expert-parallel peers sit next to it (one node) instead of tp apart (four
// nodes): the all-to-all leaves the network. etp × ep must divide the stage's ranks; a dense
// model has no experts to split.
TEST(Analytic, ExpertTensorParallelismLaysExpertsOverTheStagesRanks) {
  const auto h100 = *zoo::cluster_preset("dgx-h100", 64);
  const AnalyticCostModel cost(*zoo::llm_model("mixtral-8x7b"), h100, default_calibration("H100"));
  TrainingConfig t;
  t.tp = 4;
  t.pp = 2;
  t.dp = 8;
  t.ep = 8;
  t.sequence_parallel = true;
  t.global_batch = 256;
  t.seq_len = 4096;
  const BlockCosts split = cost.block_costs(t);
  const AnalyticResult as_dense = cost.evaluate(t);
  t.etp = 1;
  const BlockCosts whole = cost.block_costs(t);
  const AnalyticResult whole_r = cost.evaluate(t);
  EXPECT_NEAR(whole.layer_expert_params, 4 * split.layer_expert_params,
              1e-9 * whole.layer_expert_params);
  EXPECT_EQ(whole.layer_dense_params, split.layer_dense_params);
  EXPECT_LT(whole.ep_comm_s, split.ep_comm_s / 4);
  EXPECT_LT(whole.tp_comm_s, split.tp_comm_s);
  EXPECT_LT(whole_r.iteration_time_s, as_dense.iteration_time_s);
  EXPECT_GT(whole_r.memory.weights_bytes, as_dense.memory.weights_bytes);
  t.ep = 64;  // 64 × 1 does not divide tp × cp × dp = 32
  try {
    cost.evaluate(t);
    ADD_FAILURE() << "etp 1 × ep 64 over 32 ranks";
  } catch (const RuleViolation& e) {
    EXPECT_EQ(e.violation().rule, "ep_divides_experts");  // Mixtral has 8 experts
  }
  t.ep = 1;
  const AnalyticCostModel dense(*zoo::llm_model("llama3-8b"), h100, default_calibration("H100"));
  try {
    dense.evaluate(t);
    ADD_FAILURE() << "etp on a dense model";
  } catch (const RuleViolation& e) {
    EXPECT_EQ(e.violation().rule, "etp_needs_moe");
  }
}

// FSDP's float8 all-gather (torchtitan's enable_fsdp_float8_all_gather): the layers' gathered
// weights in float8, a byte each, on the wire and in the buffers; only under ZeRO 3.
TEST(Analytic, FsdpFloat8AllGatherHalvesTheGatheredWeights) {
  const auto h100 = *zoo::cluster_preset("dgx-h100", 64);
  const AnalyticCostModel cost(*zoo::llm_model("llama3-8b"), h100, default_calibration("H100"));
  TrainingConfig t;
  t.stack = Stack::kFsdp;
  t.zero_stage = 3;
  t.dp = 64;
  t.global_batch = 256;
  t.seq_len = 8192;
  t.fp8 = true;
  const BlockCosts c = cost.block_costs(t);
  const SyncParts bf16 = cost.sync_parts(t, c.layer_dense_params, 0);
  const double bf16_buffers = cost.zero3_gathered_bytes(t, c, false, false);
  t.fp8_param_gather = true;
  const double fp8 = cost.sync_parts(t, c.layer_dense_params, 0).weight_gather_s;
  EXPECT_LT(fp8, bf16.weight_gather_s);      // half the bytes
  EXPECT_GT(fp8, bf16.weight_gather_s / 2);  // the same calls' latency
  EXPECT_NEAR(bf16_buffers - cost.zero3_gathered_bytes(t, c, false, false),
              2 * c.layer_dense_params, 1e-6 * c.layer_dense_params);
  t.zero_stage = 2;
  try {
    cost.evaluate(t);
    ADD_FAILURE() << "float8 all-gather without ZeRO 3";
  } catch (const RuleViolation& e) {
    EXPECT_EQ(e.violation().rule, "fp8_gather_needs_fsdp");
  }
}

// DeepSpeed's ZeRO 3 fetches a layer's weights in its pre-forward hook, so a recomputed forward
// gathers them again; FSDP keeps the unit gathered from its pre-backward unshard through the
// recomputation. Communication-bound (2,048 A100, one sequence each), the difference is one
// gather per recomputed layer.
TEST(Analytic, DeepSpeedZero3RegathersTheRecomputedLayers) {
  const auto a100 = *zoo::cluster_preset("dgx-a100", 2048);
  const AnalyticCostModel cost(*zoo::llm_model("llama3-8b"), a100, default_calibration("A100"));
  TrainingConfig t;
  t.zero_stage = 3;
  t.dp = 2048;
  t.global_batch = 2048;
  t.seq_len = 1024;
  t.recompute = Recompute::kFull;
  const int layers = 32;
  for (const Stack stack : {Stack::kDeepSpeed, Stack::kFsdp}) {
    t.stack = stack;
    const BlockCosts c = cost.block_costs(t);
    const double gather = cost.sync_parts(t, c.layer_dense_params, 0).weight_gather_s;
    t.recompute_layers = 0;  // every layer recomputed
    const double all = cost.zero3_microbatch_s(t, c, layers, 0.0);
    t.recompute_layers = 8;  // the first 8
    const double some = cost.zero3_microbatch_s(t, c, layers, 0.0);
    t.recompute = Recompute::kNone;
    const double none = cost.zero3_microbatch_s(t, c, layers, 0.0);
    t.recompute = Recompute::kFull;
    if (stack == Stack::kDeepSpeed) {
      EXPECT_NEAR(all - none, layers * gather, 1e-9 * all);
      EXPECT_NEAR(some - none, 8 * gather, 1e-9 * all);
    } else {
      EXPECT_DOUBLE_EQ(all, none);
      EXPECT_DOUBLE_EQ(some, none);
    }
  }
}

// The device holds more than the tensors: the runtime's reserve and the allocator's
// fragmentation of the transient part, both from the calibration; the verdict counts them.
TEST(Analytic, PeakCountsTheRuntimeAndTheAllocator) {
  TrainingConfig t;
  t.global_batch = 64;
  t.micro_batch = 4;
  t.tp = 8;
  t.dp = 1;
  t.seq_len = 4096;
  Calibration bare = default_calibration("H100");
  bare.runtime_reserved_bytes = 0;
  bare.nccl_communicator_bytes = 0;
  bare.allocator_fragmentation = 0;
  const Calibration shipped = default_calibration("H100");
  const auto cluster = *zoo::cluster_preset("dgx-h100", 8);
  const auto tensors = AnalyticCostModel(*zoo::llm_model("llama3-8b"), cluster, bare).evaluate(t);
  const auto device = AnalyticCostModel(*zoo::llm_model("llama3-8b"), cluster, shipped).evaluate(t);
  const MemoryBreakdown& m = device.memory;
  // The CUDA context and one NCCL communicator: the tensor-parallel group (tp 8, dp 1).
  EXPECT_DOUBLE_EQ(m.reserved_bytes,
                   shipped.runtime_reserved_bytes + shipped.nccl_communicator_bytes);
  EXPECT_NEAR(m.fragmentation_bytes,
              shipped.allocator_fragmentation * (m.activations_bytes + m.buffers_bytes), 1.0);
  EXPECT_NEAR(m.peak_bytes, tensors.memory.peak_bytes + m.reserved_bytes + m.fragmentation_bytes,
              1.0);
  EXPECT_NEAR(m.peak_bytes,
              m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes +
                  m.buffers_bytes + m.fragmentation_bytes + m.reserved_bytes,
              1.0);
  EXPECT_DOUBLE_EQ(device.iteration_time_s, tensors.iteration_time_s);  // memory only
  // A device just large enough for the tensors alone no longer fits the configuration.
  auto tight = cluster;
  tight.device_types[0].memory_bytes = tensors.memory.peak_bytes;
  EXPECT_TRUE(AnalyticCostModel(*zoo::llm_model("llama3-8b"), tight, bare).evaluate(t).fits);
  EXPECT_FALSE(AnalyticCostModel(*zoo::llm_model("llama3-8b"), tight, shipped).evaluate(t).fits);
}

}  // namespace
}  // namespace paraplan
