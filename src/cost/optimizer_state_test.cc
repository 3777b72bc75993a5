// The optimizer's state as Megatron-Core keeps it: fp32 Adam (12 bytes a parameter, sharded by
// the distributed optimizer) or the precision-aware optimizer's low-precision moments with the
// fp32 main parameters kept as 16-bit remainders (bf16: 6 bytes, fp8: 4), and the rules that say
// where it runs.
#include <gtest/gtest.h>

#include "cost/analytic.h"
#include "ir/engine_rules.h"
#include "ir/error.h"
#include "ir/training_rules.h"
#include "zoo/cluster_presets.h"
#include "zoo/llm_models.h"

namespace paraplan {
namespace {

TrainingConfig zero1_on_8() {
  TrainingConfig t;
  t.global_batch = 64;
  t.dp = 8;
  t.seq_len = 4096;
  t.zero_stage = 1;
  return t;
}

TrainingConfig with_moments(OptimizerMoments moments, bool precision_aware = false) {
  TrainingConfig t;
  t.optimizer_moments = moments;
  t.precision_aware_optimizer = precision_aware;
  return t;
}

TEST(OptimizerState, PrecisionAwareMomentsTakeTheirBytes) {
  EXPECT_EQ(optimizer_state_bytes(with_moments(OptimizerMoments::kFp32)), 12);
  EXPECT_EQ(optimizer_state_bytes(with_moments(OptimizerMoments::kBf16)), 6);
  EXPECT_EQ(optimizer_state_bytes(with_moments(OptimizerMoments::kFp8)), 4);
  // The precision-aware optimizer with fp32 moments: the main parameters' remainders (2) and
  // the moments (8). Low-precision moments imply it, so asking for it changes nothing there.
  EXPECT_EQ(optimizer_state_bytes(with_moments(OptimizerMoments::kFp32, true)), 10);
  EXPECT_EQ(optimizer_state_bytes(with_moments(OptimizerMoments::kBf16, true)), 6);
  EXPECT_FALSE(precision_aware_optimizer(with_moments(OptimizerMoments::kFp32)));
  EXPECT_TRUE(precision_aware_optimizer(with_moments(OptimizerMoments::kFp8)));
  const TransformerConfig llama = *zoo::llm_model("llama3-8b");
  const AnalyticCostModel cost(llama, *zoo::cluster_preset("dgx-h100", 8),
                               default_calibration("H100"));
  TrainingConfig t = zero1_on_8();
  const AnalyticResult fp32 = cost.evaluate(t);
  t.optimizer_moments = OptimizerMoments::kBf16;
  const AnalyticResult bf16 = cost.evaluate(t);
  t.optimizer_moments = OptimizerMoments::kFp8;
  const AnalyticResult fp8 = cost.evaluate(t);
  // The state alone changes, by its bytes; weights, gradients and activations stay.
  EXPECT_NEAR(fp32.memory.optimizer_bytes / bf16.memory.optimizer_bytes, 2.0, 1e-9);
  EXPECT_NEAR(fp32.memory.optimizer_bytes / fp8.memory.optimizer_bytes, 3.0, 1e-9);
  EXPECT_EQ(fp32.memory.weights_bytes, bf16.memory.weights_bytes);
  EXPECT_EQ(fp32.memory.gradients_bytes, bf16.memory.gradients_bytes);
  EXPECT_EQ(fp32.memory.activations_bytes, bf16.memory.activations_bytes);
  // Sharded over the 8 replicas: 8.03e9 parameters × 12 / 8 bytes.
  EXPECT_NEAR(fp32.memory.optimizer_bytes, 12.0 * llama.parameters() / 8,
              0.01 * fp32.memory.optimizer_bytes);
  // The step reads and writes less state: no slower.
  EXPECT_LT(bf16.iteration_time_s, fp32.iteration_time_s);
  EXPECT_LT(fp8.iteration_time_s, bf16.iteration_time_s);
  // fp32 moments under the precision-aware optimizer: 10 of 12 bytes, nothing else changes.
  t.optimizer_moments = OptimizerMoments::kFp32;
  t.precision_aware_optimizer = true;
  const AnalyticResult aware = cost.evaluate(t);
  EXPECT_NEAR(aware.memory.optimizer_bytes / fp32.memory.optimizer_bytes, 10.0 / 12.0, 1e-9);
  EXPECT_EQ(aware.memory.weights_bytes, fp32.memory.weights_bytes);
  EXPECT_EQ(aware.memory.gradients_bytes, fp32.memory.gradients_bytes);
  EXPECT_LT(aware.iteration_time_s, fp32.iteration_time_s);
}

TEST(OptimizerState, PrecisionAwareOptimizerIsMegatronsDistributedOne) {
  const AnalyticCostModel cost(*zoo::llm_model("llama3-8b"), *zoo::cluster_preset("dgx-h100", 8),
                               default_calibration("H100"));
  auto rule_of = [&](TrainingConfig t) {
    try {
      cost.evaluate(t);
    } catch (const RuleViolation& e) {
      return e.violation().rule;
    }
    return std::string("accepted");
  };
  TrainingConfig t = zero1_on_8();
  t.optimizer_moments = OptimizerMoments::kBf16;
  EXPECT_EQ(rule_of(t), "accepted");
  t.zero_stage = 0;
  EXPECT_EQ(rule_of(t), "precision_aware_optimizer_needs_distributed");
  t.zero_stage = 3;
  t.stack = Stack::kFsdp;
  EXPECT_EQ(rule_of(t), "precision_aware_optimizer_needs_megatron");
  // NeMo 1.x's recipe has no key for it and refuses it by name; Megatron-LM and Megatron-Bridge
  // express it (the other engines run other stacks, refused by the stack's rule).
  t = zero1_on_8();
  t.optimizer_moments = OptimizerMoments::kFp8;
  for (const Engine e : {Engine::kMegatronLm, Engine::kNemo, Engine::kMegatronBridge}) {
    const auto v = rules::engine(engine_rules(e), t, 32);
    EXPECT_EQ(v && v->rule == "engine_optimizer_moments", e == Engine::kNemo) << engine_name(e);
  }
  // With fp32 moments the same rules, named by the precision-aware optimizer's own knob.
  t = zero1_on_8();
  t.precision_aware_optimizer = true;
  EXPECT_EQ(rule_of(t), "accepted");
  t.zero_stage = 0;
  EXPECT_EQ(rule_of(t), "precision_aware_optimizer_needs_distributed");
  try {
    cost.evaluate(t);
  } catch (const RuleViolation& e) {
    EXPECT_EQ(e.violation().knob, Knob::kPrecisionAwareOptimizer);
  }
  t.zero_stage = 1;
  for (const Engine e : {Engine::kMegatronLm, Engine::kNemo, Engine::kMegatronBridge}) {
    const auto v = rules::engine(engine_rules(e), t, 32);
    EXPECT_EQ(v && v->rule == "engine_precision_aware_optimizer", e == Engine::kNemo)
        << engine_name(e);
  }
}

}  // namespace
}  // namespace paraplan
