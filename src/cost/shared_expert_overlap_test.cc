// Megatron-Core's shared-expert overlap (--moe-shared-expert-overlap) in the analytic model: the
// shared experts' GEMMs hide part of the expert-parallel all-to-all, never more than they take.
#include <gtest/gtest.h>

#include "cost/analytic.h"
#include "ir/error.h"
#include "ir/training_rules.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan {
namespace {

TrainingConfig deepseek_config() {
  TrainingConfig t;
  t.global_batch = 256;
  t.seq_len = 4096;
  t.tp = 2;  // ep 8 at stride 2: half the peers across the network
  t.pp = 8;
  t.dp = 8;
  t.ep = 8;
  t.recompute = Recompute::kNone;
  t.zero_stage = 1;
  return t;
}

TEST(SharedExpertOverlap, HidesTheAllToAllUpToTheSharedExpertsTime) {
  const AnalyticCostModel cost(*zoo::llm_model("deepseek-v3-like"),
                               *zoo::cluster_preset("dgx-h100", 128), default_calibration("H100"));
  TrainingConfig t = deepseek_config();
  const BlockCosts off = cost.block_costs(t);
  t.moe_shared_expert_overlap = true;
  const BlockCosts on = cost.block_costs(t);
  ASSERT_GT(off.ep_comm_s, 0);
  EXPECT_LT(on.ep_comm_s, off.ep_comm_s);
  EXPECT_LT(on.layer_s, off.layer_s);
  EXPECT_NEAR(off.layer_s - on.layer_s, off.ep_comm_s - on.ep_comm_s, 1e-12);
  // The shared expert (one 2,048-wide SwiGLU MLP over the layer's tokens, split tp ways) is a
  // small share of the all-to-all here: what is hidden is at most its three passes, less the
  // slowdown overlapped work pays (0.2 of it).
  const double h = 7168, tokens = 4096, ffn = 2048;
  const double shared_flops = 3 * 2 * tokens * 3 * ffn * h / t.tp;  // forward + backward
  const double peak = 989e12;                                       // H100 SXM bf16 dense
  EXPECT_LE(off.ep_comm_s - on.ep_comm_s, 0.8 * shared_flops / (0.3 * peak));
  EXPECT_GE(off.ep_comm_s - on.ep_comm_s, 0.8 * shared_flops / peak);
  // Without expert parallelism there is no all-to-all to hide: nothing changes.
  t.ep = 1;
  TrainingConfig plain = t;
  plain.moe_shared_expert_overlap = false;
  EXPECT_DOUBLE_EQ(cost.block_costs(t).layer_s, cost.block_costs(plain).layer_s);
}

TEST(SharedExpertOverlap, IsMegatronsAndNeedsSharedExperts) {
  // On where it applies: megatron, shared experts, ep > 1.
  TrainingConfig t = deepseek_config();
  const TransformerConfig deepseek = *zoo::llm_model("deepseek-v3-like");
  const TransformerConfig mixtral = *zoo::llm_model("mixtral-8x7b");
  apply_stack_defaults(t, {}, &deepseek);
  EXPECT_TRUE(t.moe_shared_expert_overlap);
  apply_stack_defaults(t, {}, &mixtral);  // routed experts only
  EXPECT_FALSE(t.moe_shared_expert_overlap);
  apply_stack_defaults(t, {});  // the model unknown: off unless fixed
  EXPECT_FALSE(t.moe_shared_expert_overlap);
  StackChoices off;
  off.moe_shared_expert_overlap = false;
  apply_stack_defaults(t, off, &deepseek);
  EXPECT_FALSE(t.moe_shared_expert_overlap);
  // Asked for where it cannot be: refused by name.
  t.moe_shared_expert_overlap = true;
  const auto none = check_training(mixtral, t, 128);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->rule, "shared_expert_overlap_needs_shared_experts");
  t.stack = Stack::kDeepSpeed;
  t.tp_comm_overlap = t.overlap_param_gather = t.overlap_p2p_comm = false;
  const auto stack = check_training(deepseek, t, 128);
  ASSERT_TRUE(stack.has_value());
  EXPECT_EQ(stack->rule, "shared_expert_overlap_needs_megatron");
}

}  // namespace
}  // namespace paraplan
