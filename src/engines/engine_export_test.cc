// Export to Megatron-LM arguments and DeepSpeed configuration.
#include "engines/engine_export.h"

#include <gtest/gtest.h>

#include "zoo/llm_models.h"

namespace paraplan::engines {

using io::Json;
namespace {

TEST(EngineExport, MegatronArgumentsCarryEveryKnob) {
  TrainingConfig t;
  t.seq_len = 4096;
  t.global_batch = 256;
  t.micro_batch = 2;
  t.tp = 4;
  t.pp = 8;
  t.dp = 2;
  t.recompute = Recompute::kFull;
  t.sequence_parallel = true;
  t.zero_stage = 1;
  std::string args = megatron_arguments(*zoo::llm_model("llama3-70b"), t);
  for (const char* want :
       {"--num-layers 80 \\\n", "--num-query-groups 8 \\\n", "--group-query-attention \\\n",
        "--swiglu \\\n", "--tensor-model-parallel-size 4 \\\n",
        "--pipeline-model-parallel-size 8 \\\n", "--micro-batch-size 2 \\\n",
        "--global-batch-size 256 \\\n", "--sequence-parallel \\\n",
        "--recompute-granularity full \\\n", "--recompute-method uniform \\\n",
        "--use-distributed-optimizer \\\n", "--seq-length 4096 \\\n"})
    EXPECT_NE(args.find(want), std::string::npos) << want << "\n" << args;
  EXPECT_EQ(args.substr(args.size() - 7), "--bf16\n");  // no dangling continuation
  t.recompute = Recompute::kNone;
  t.zero_stage = 0;
  std::string plain = megatron_arguments(*zoo::llm_model("gpt3-175b"), t);
  EXPECT_EQ(plain.find("--recompute"), std::string::npos);
  EXPECT_EQ(plain.find("--use-distributed-optimizer"), std::string::npos);
  EXPECT_EQ(plain.find("--swiglu"), std::string::npos);
  EXPECT_EQ(plain.find("--context-parallel-size"), std::string::npos);
  // Context and expert parallelism, interleaving, a layer layout, some recomputed layers.
  t.cp = 2;
  t.vpp = 5;
  t.recompute = Recompute::kFull;
  t.recompute_layers = 3;
  t.overlap_grad_reduce = true;
  std::string more = megatron_arguments(*zoo::llm_model("llama3-70b"), t);
  for (const char* want :
       {"--context-parallel-size 2 \\\n", "--num-layers-per-virtual-pipeline-stage 2 \\\n",
        "--recompute-method block \\\n", "--recompute-num-layers 3 \\\n",
        "--overlap-grad-reduce \\\n"})
    EXPECT_NE(more.find(want), std::string::npos) << want << "\n" << more;
  t.vpp = 1;
  t.pp = 3;
  t.stage_layers = {27, 27, 26};
  std::string layout = megatron_arguments(*zoo::llm_model("llama3-70b"), t);
  EXPECT_NE(layout.find("--pipeline-model-parallel-layout \"Et*27|t*27|t*26,L\""),
            std::string::npos)
      << layout;
  t.ep = 8;
  const std::string moe = megatron_arguments(*zoo::llm_model("mixtral-8x7b"), t);
  for (const char* want : {"--expert-model-parallel-size 8 \\\n", "--moe-grouped-gemm \\\n",
                           "--moe-token-dispatcher-type alltoall \\\n"})
    EXPECT_NE(moe.find(want), std::string::npos) << want << "\n" << moe;
  EXPECT_EQ(moe.find("--moe-expert-capacity-factor"), std::string::npos);  // dropless
  t.moe_capacity_factor = 1.25;
  const std::string dropping = megatron_arguments(*zoo::llm_model("mixtral-8x7b"), t);
  EXPECT_NE(dropping.find("--moe-expert-capacity-factor 1.25 \\\n"), std::string::npos) << dropping;
  EXPECT_NE(dropping.find("--moe-pad-expert-input-to-capacity \\\n"), std::string::npos)
      << dropping;
  t.moe_capacity_factor = 0;
  t.zero_stage = 3;
  EXPECT_THROW(megatron_arguments(*zoo::llm_model("gpt3-175b"), t), Error);
}

// The deepspeed launcher passes only its own prefixes' variables (NCCL, PYTHON, UCX, MLFLOW) and
// .deepspeed_env's to the other nodes: a multi-node tensor-parallel launch writes the one
// Megatron asserts there, a one-node launch only sets it.
TEST(EngineExport, DeepSpeedSendsTheEnvironmentToEveryNode) {
  TrainingConfig t;
  t.global_batch = 64;
  t.tp = 2;
  t.dp = 8;
  t.sequence_parallel = true;
  t.stack = Stack::kDeepSpeed;
  const std::string two_nodes = megatron_deepspeed_launch(*zoo::llm_model("llama3-8b"), t, 8);
  EXPECT_NE(two_nodes.find("|| echo 'CUDA_DEVICE_MAX_CONNECTIONS=1' >> .deepspeed_env\n"
                           "cat > ds_config.json"),
            std::string::npos)
      << two_nodes;
  EXPECT_NE(two_nodes.find("EOF\nCUDA_DEVICE_MAX_CONNECTIONS=1 deepspeed --num_nodes 2"),
            std::string::npos)
      << two_nodes;
  t.dp = 4;
  const std::string one_node = megatron_deepspeed_launch(*zoo::llm_model("llama3-8b"), t, 8);
  EXPECT_EQ(one_node.find(".deepspeed_env"), std::string::npos) << one_node;
  EXPECT_NE(one_node.find("CUDA_DEVICE_MAX_CONNECTIONS=1 deepspeed --num_nodes 1"),
            std::string::npos)
      << one_node;
}

TEST(EngineExport, DeepSpeedBatchArithmetic) {
  TrainingConfig t;
  t.global_batch = 512;
  t.micro_batch = 4;
  t.dp = 16;
  t.zero_stage = 1;
  Json j = deepspeed_config(t);
  EXPECT_EQ(j["train_batch_size"], 512);
  EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 4);
  EXPECT_EQ(j["gradient_accumulation_steps"], 8);  // 512 = 4 × 8 × 16
  EXPECT_EQ(j["zero_optimization"]["stage"], 1);
  EXPECT_TRUE(j.contains("activation_checkpointing"));
}

}  // namespace
}  // namespace paraplan::engines
