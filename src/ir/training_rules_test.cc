#include "ir/training_rules.h"

#include <gtest/gtest.h>

namespace paraplan {
namespace {

TransformerConfig gpt_config() {
  TransformerConfig m;
  m.name = "gpt";
  m.hidden_size = 1024;
  m.num_layers = 24;
  m.num_attention_heads = 16;
  m.num_kv_heads = 16;
  m.head_dim = 64;
  m.ffn_hidden_size = 4096;
  m.vocab_size = 50257;
  return m;
}

TEST(TrainingRules, EachFrontEndNamesTheKnobsItsOwnWay) {
  TrainingConfig t;
  t.global_batch = 64;
  t.pp = 2;
  t.dp = 4;
  t.zero_stage = 3;
  const auto v = check_training(gpt_config(), t, 8);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->knob, Knob::kZero);
  EXPECT_EQ(v->rule, "zero_without_pipeline");
  ASSERT_EQ(v->values.size(), 1u);
  EXPECT_EQ(v->values[0], (std::pair<std::string, std::string>{"pp", "2"}));
  // Every knob the text mentions takes the front end's name.
  EXPECT_EQ(v->render([](Knob k) {
    std::string name = "<";
    name += knob_field(k);
    name += '>';
    return name;
  }),
            "<zero> 3: ZeRO stages 2 and 3 partition gradients per micro-batch and do not combine "
            "with pipeline parallelism (<pp> 2); use <zero> 0 or 1");
  EXPECT_STREQ(RuleViolation(*v).what(),
               "zero 3: ZeRO stages 2 and 3 partition gradients per micro-batch and do not combine "
               "with pipeline parallelism (pp 2); use zero 0 or 1");
  t.zero_stage = 1;
  EXPECT_FALSE(check_training(gpt_config(), t, 8));
  EXPECT_TRUE(check_training(gpt_config(), t, 7));  // 8 devices on 7
  t.tp = 3;
  EXPECT_EQ(check_training(gpt_config(), t, 64)->rule, "tp_divides_heads");
}

// Interleaved stages may be uneven (Megatron-Core's layouts): each rank's layers, and layers per
// virtual stage that sum to them.
TEST(TrainingRules, UnevenVirtualStagesSumToTheirRanks) {
  TransformerConfig m = gpt_config();
  m.num_layers = 22;  // not a multiple of pp × vpp = 8
  TrainingConfig t;
  t.global_batch = 64, t.pp = 2, t.vpp = 4, t.dp = 4;
  EXPECT_EQ(check_training(m, t, 8)->rule, "vpp_divides_layers");
  t.stage_layers = {12, 10};
  EXPECT_FALSE(check_training(m, t, 8));
  EXPECT_EQ(virtual_split(t, 22), (std::vector<int>{3, 3, 3, 3, 3, 2, 3, 2}));
  t.virtual_stage_layers = {4, 2, 4, 2, 4, 3, 0, 3};
  EXPECT_FALSE(check_training(m, t, 8));
  EXPECT_EQ(virtual_split(t, 22), t.virtual_stage_layers);
  t.virtual_stage_layers = {4, 2, 4, 2, 4, 3, 0};
  EXPECT_EQ(check_training(m, t, 8)->rule, "one_per_virtual_stage");
  t.virtual_stage_layers = {4, 2, 4, 2, 4, 3, 1, 2};
  EXPECT_EQ(check_training(m, t, 8)->rule, "virtual_stages_sum");
  t.virtual_stage_layers = {5, 2, 4, 2, 4, 3, -1, 3};
  EXPECT_EQ(check_training(m, t, 8)->rule, "virtual_stage_negative");
  t.vpp = 1;
  t.virtual_stage_layers = {12, 10};
  EXPECT_EQ(check_training(m, t, 8)->rule, "virtual_stages_need_vpp");
}

TEST(TrainingRules, SearchAndCheckAgreeOnEveryShape) {
  // The per-knob functions the search prunes with accept exactly what the whole check accepts.
  const TransformerConfig m = gpt_config();
  for (int tp : {1, 2, 3, 4, 8, 16, 32})
    for (int pp : {1, 2, 4, 24, 25})
      for (std::int64_t b : {1, 2, 3}) {
        TrainingConfig t;
        t.tp = tp;
        t.pp = pp;
        t.dp = 2;
        t.micro_batch = b;
        t.global_batch = 8;
        t.zero_stage = 0;
        const bool parts = !rules::tensor_parallel(m, tp) && !rules::pipeline(m, pp) &&
                           !rules::batch(t.global_batch, b, t.dp);
        EXPECT_EQ(parts, !check_training(m, t, 1 << 20)) << tp << " " << pp << " " << b;
      }
}

}  // namespace
}  // namespace paraplan
