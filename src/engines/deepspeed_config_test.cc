// DeepSpeed configurations read as paraplan prices them: the example, and bad keys as one placed
// usage error.
#include "engines/deepspeed_config.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "io/json_fields.h"
#include "ir/error.h"

namespace paraplan::engines {

using io::read_text_file;
namespace {

TEST(DeepSpeedConfig, ReadsTheExample) {
  const std::string path =
      std::string(PARAPLAN_SOURCE_DIR) + "/docs/examples/deepspeed_llama3_8b.json";
  const LaunchConfig l = read_deepspeed_config(read_text_file(path), path);
  EXPECT_EQ(l.format, "deepspeed");
  EXPECT_EQ(l.world_size, 64);  // 512 ÷ (1 × 8)
  EXPECT_FALSE(l.model.has_value());
  const TrainingConfig& t = l.training;
  EXPECT_EQ(t.stack, Stack::kDeepSpeed);
  EXPECT_EQ(t.zero_stage, 3);
  EXPECT_TRUE(t.overlap_grad_reduce);
  EXPECT_EQ(t.recompute, Recompute::kFull);
  EXPECT_EQ(t.micro_batch, 1);
  EXPECT_EQ(t.global_batch, 512);
  EXPECT_EQ(l.accumulation, 8);
  EXPECT_TRUE(t.bf16_gradient_reduction);
  EXPECT_EQ(t.tp * t.pp * t.cp, 1);
}

TEST(DeepSpeedConfig, BadKeysAreOnePlacedUsageError) {
  const std::string base = R"("train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": true})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{" + base + R"(, "zero_optimisation": {"stage": 2}})",
       "ds.json: zero_optimisation: not a key"},
      {"{" + base + R"(, "zero_optimization": {"stag": 2}})", "ds.json: zero_optimization.stag"},
      {"{" + base + R"(, "zero_optimization": {"stage": 4}})", "expected 0, 1, 2 or 3"},
      {R"({"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": "auto"}})", "is \"auto\""},
      {"{" + base +
           R"(, "zero_optimization": {"stage": 3, "mics_shard_size": 8, "mics_hierarchical_params_gather": true}})",
       "two-level gather"},
      {R"({"train_micro_batch_size_per_gpu": 1, "fp16": {"enabled": true}, "bf16": {"enabled": true}})",
       "fp16.enabled: and bf16.enabled both true"},
      {R"({"train_micro_batch_size_per_gpu": 1})", "ds.json: bf16: without bf16.enabled"},
      {"{" + base + R"(, "zero_optimization": {"offload_optimizer": {"device": "cpu"}}})",
       "offloading"},
      {"{" + base + R"(, "train_batch_size": 30, "gradient_accumulation_steps": 4})",
       "30 is not micro-batch × accumulation × GPUs"},
      {"{" + base + R"(, "optimizer": {"type": "Lamb"}})", "optimizer.type"},
      // Every refusal at once, not the first.
      {R"({"train_micro_batch_size_per_gpu": "two", "zero_optimization": {"stag": 2, "stage": 4}})",
       "ds.json: 4 settings refused (paraplan prices the others):\n"
       "  zero_optimization.stag: not a key paraplan knows in a DeepSpeed configuration (a typo? "
       "keys that change time or memory are read, the others listed as ignored)\n"
       "  bf16: without bf16.enabled DeepSpeed trains in fp32, which paraplan does not price\n"
       "  zero_optimization.stage: expected 0, 1, 2 or 3\n"
       "  train_micro_batch_size_per_gpu: expected an integer >= 1, got \"two\""}};
  for (const auto& [text, message] : cases) {
    try {
      read_deepspeed_config(text, "ds.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << text << "\n" << e.what();
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << text << "\n" << e.what();
    }
  }
}

}  // namespace
}  // namespace paraplan::engines

namespace paraplan::engines {
namespace {

const char* kScriptJson = R"({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2,
  "gradient_accumulation_steps": 4, "bf16": {"enabled": true}, "zero_optimization": {"stage": 1}})";

std::string script(const std::string& args, const std::string& json = kScriptJson) {
  return "# a Megatron-DeepSpeed launch\ncat > ds_config.json <<'EOF'\n" + json +
         "\nEOF\ndeepspeed --num_nodes 2 --num_gpus 8 pretrain_gpt.py \\\n"
         "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --num-key-value-heads 2 \\\n"
         "--normalization rmsnorm --disable-bias-linear --swiglu --vocab-size 1000 --seq-length "
         "1024 \\\n"
         "--micro-batch-size 2 --global-batch-size 64 --tensor-model-parallel-size 2 "
         "--bf16 --deepspeed --deepspeed_config ds_config.json " +
         args + "\n";
}

// Megatron-DeepSpeed's launch script: the JSON it writes and pretrain_gpt.py's arguments in
// Megatron-DeepSpeed's spellings, read together.
TEST(DeepSpeedConfig, ReadsAMegatronDeepSpeedScript) {
  const LaunchConfig l =
      read_deepspeed_config(script("--zero-stage 1 --use-flash-attn-v2"), "run.sh");
  ASSERT_TRUE(l.model.has_value());
  EXPECT_EQ(l.model->num_kv_heads, 2);
  EXPECT_FALSE(l.model->biases);
  EXPECT_EQ(l.world_size, 16);
  EXPECT_EQ(l.training.tp, 2);
  EXPECT_EQ(l.training.seq_len, 1024);
  EXPECT_EQ(l.training.zero_stage, 1);
  EXPECT_EQ(l.training.stack, Stack::kDeepSpeed);
  EXPECT_EQ(l.training.attention, Attention::kFlash);
}

// Megatron-DeepSpeed's examples as shipped: the configuration written through the script's
// variables (cat <<EOT > $DS_CONFIG, expanded), the arguments gathered in a string, the launch.
TEST(DeepSpeedConfig, ReadsAScriptAsBashRunsIt) {
  const std::string text = R"(DS_CONFIG=./tmp/deepspeed.json
TP=2
ZERO_STAGE=0
MICRO_BATCH_SIZE=4
GLOBAL_BATCH_SIZE=32
activation_checkpoint="false"
cat <<EOT > $DS_CONFIG
{
  "train_batch_size" : $GLOBAL_BATCH_SIZE,
  "train_micro_batch_size_per_gpu": $MICRO_BATCH_SIZE,
  "zero_optimization": {"stage": $ZERO_STAGE},
  "bf16": {"enabled": true}
}
EOT
ds_args=""
ds_args=" --deepspeed ${ds_args}"
ds_args=" --deepspeed_config=$DS_CONFIG ${ds_args}"
ds_args=" --zero-stage=$ZERO_STAGE ${ds_args}"
if [ "${activation_checkpoint}" = "true" ]; then
  ds_args="--deepspeed-activation-checkpointing ${ds_args}"
fi
DISTRIBUTED_ARGS="--nproc_per_node 8 --nnodes 1"
torchrun $DISTRIBUTED_ARGS pretrain_gpt.py --tensor-model-parallel-size $TP \
  --num-layers 4 --hidden-size 256 --num-attention-heads 8 --num-key-value-heads 4 \
  --micro-batch-size $MICRO_BATCH_SIZE --global-batch-size $GLOBAL_BATCH_SIZE \
  --seq-length 1024 --max-position-embeddings 1024 --vocab-size 32000 --bf16 \
  --data-impl mmap --no-query-key-layer-scaling --layernorm-epsilon 1e-5 $ds_args
)";
  const LaunchConfig l = read_deepspeed_config(text, "pretrain_llama2.sh");
  ASSERT_TRUE(l.model.has_value());
  EXPECT_EQ(l.model->num_kv_heads, 4);
  EXPECT_EQ(l.world_size, 8);
  EXPECT_EQ(l.training.tp, 2);
  EXPECT_EQ(l.training.micro_batch, 4);
  EXPECT_EQ(l.training.global_batch, 32);
  EXPECT_EQ(l.training.zero_stage, 0);
  EXPECT_NE(l.training.recompute, Recompute::kFull);
  // Megatron-DeepSpeed's spelling of the norms' epsilon, numerics alone (Megatron-LM refuses it).
  EXPECT_NE(std::find(l.ignored.begin(), l.ignored.end(), "--layernorm-epsilon"), l.ignored.end());
}

TEST(DeepSpeedConfig, BadScriptsAreOnePlacedUsageError) {
  const std::string json = kScriptJson;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"deepspeed pretrain_gpt.py --num-layers 2\n", "neither a DeepSpeed JSON configuration"},
      {"cat > ds_config.json <<'EOF'\n{}\n", "run.sh:1: the here-document is not closed"},
      {script("--zero-stage 2"), "run.sh: --zero-stage: 2 in the arguments, 1 in ds_config.json"},
      {script("--zero-stage x"), "expected 0, 1, 2 or 3"},
      {script("--zero-stage 1 --checkpoint-activations"), "run.sh: --checkpoint-activations"},
      {script("--zero-stage 1 --num-layers-per-virtual-pipeline-stage 1"), "run.sh"},
      {script("").replace(script("").find("--deepspeed_config ds_config.json"), 34,
                          "--deepspeed_config other.json"),
       "names \"other.json\", the script writes \"ds_config.json\""},
      {script("--zero-stage 1 --tensor-model-paralel-size 2"), "did you mean"}};
  for (const auto& [text, message] : cases) {
    try {
      read_deepspeed_config(text, "run.sh");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << text;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << text << "\n" << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace paraplan::engines
