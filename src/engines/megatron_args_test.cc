// Megatron-LM's arguments read as paraplan prices them: the example launch, one option per line,
// and every kind of bad input as one placed usage error.
#include "engines/megatron_args.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "io/json_fields.h"
#include "ir/error.h"

namespace paraplan::engines {

using io::read_text_file;
namespace {

bool has(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

TEST(MegatronArgs, ReadsTheExampleLaunch) {
  const std::string path =
      std::string(PARAPLAN_SOURCE_DIR) + "/docs/examples/megatron_llama3_8b.sh";
  const LaunchConfig l = read_megatron_args(read_text_file(path), path);
  EXPECT_EQ(l.format, "megatron");
  EXPECT_EQ(l.world_size, 64);  // torchrun --nproc_per_node 8 --nnodes 8
  EXPECT_TRUE(has(l.environment, "CUDA_DEVICE_MAX_CONNECTIONS=1"));
  ASSERT_TRUE(l.model.has_value());
  const TransformerConfig& m = *l.model;
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.ffn_hidden_size, 14336);
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.vocab_size, 128256);
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.learned_positions);
  EXPECT_FALSE(m.biases);
  EXPECT_FALSE(m.dropout);
  const TrainingConfig& t = l.training;
  EXPECT_EQ(t.tp, 8);
  EXPECT_EQ(t.pp, 1);
  EXPECT_EQ(t.cp, 1);
  EXPECT_EQ(t.micro_batch, 1);
  EXPECT_EQ(t.global_batch, 512);
  EXPECT_EQ(t.seq_len, 8192);
  EXPECT_TRUE(t.sequence_parallel);
  EXPECT_EQ(t.recompute, Recompute::kFull);
  EXPECT_EQ(t.recompute_layers, 0);  // uniform: every layer
  EXPECT_EQ(t.zero_stage, 1);
  EXPECT_TRUE(t.overlap_grad_reduce);
  EXPECT_FALSE(t.tp_comm_overlap);
  EXPECT_FALSE(t.fp8);
  EXPECT_TRUE(has(l.read, "--tensor-model-parallel-size"));
  EXPECT_TRUE(has(l.ignored, "--lr"));
  EXPECT_TRUE(has(l.ignored, "--data-path"));
}

TEST(MegatronArgs, OnePerLineEqualsFormsAndTheEngineDefaults) {
  const LaunchConfig l = read_megatron_args(
      "--num-layers=24\n--hidden-size 2048\n--num-attention-heads 16\n--seq-length 2048\n"
      "--tokenizer-type GPT2BPETokenizer\n--micro-batch-size 4\n--bf16\n"
      "--recompute-granularity full\n--recompute-method block\n--recompute-num-layers 3\n"
      "--pipeline-model-parallel-size 4\n--num-virtual-stages-per-pipeline-rank 2\n"
      "--fp8-format hybrid\n",
      "args.txt");
  EXPECT_EQ(l.world_size, 0);
  ASSERT_TRUE(l.model.has_value());
  EXPECT_EQ(l.model->vocab_size, 50257);          // GPT-2's tokenizer
  EXPECT_EQ(l.model->ffn_hidden_size, 4 * 2048);  // Megatron's default
  EXPECT_TRUE(l.model->learned_positions);        // learned_absolute by default
  EXPECT_TRUE(l.model->biases);
  EXPECT_TRUE(l.model->dropout);              // 0.1 by default
  EXPECT_EQ(l.training.recompute_layers, 3);  // block: the first 3 of each stage
  EXPECT_EQ(l.training.vpp, 2);
  EXPECT_EQ(l.training.global_batch, 0);  // micro-batch × dp, once dp is known
  EXPECT_TRUE(l.training.fp8);
  EXPECT_EQ(l.vocab_multiple, 128);
  const LaunchConfig no_shape = read_megatron_args(
      "--seq-length 4096 --micro-batch-size 2 --bf16 --recompute-activations", "args.txt");
  EXPECT_FALSE(no_shape.model.has_value());
  EXPECT_EQ(no_shape.training.recompute, Recompute::kSelective);
}

TEST(MegatronArgs, BadInputIsOnePlacedUsageError) {
  const std::string base = "--seq-length 2048 --micro-batch-size 1 --bf16\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {base + "--tensor-model-paralel-size 2\n",
       "args.txt:2: --tensor-model-paralel-size: not an option of Megatron-LM (d98e8a6)'s "
       "pretrain_gpt.py; did you mean --tensor-model-parallel-size?"},
      // Spellings of older Megatron-LMs (and Megatron-DeepSpeed's) that d98e8a6's parser refuses
      // as unrecognized arguments: refused, not read as costing nothing.
      {base + "--layernorm-epsilon 1e-5\n",
       "args.txt:2: --layernorm-epsilon: not an option of Megatron-LM (d98e8a6)'s pretrain_gpt.py"},
      {base + "--check-for-nan-in-loss-and-grad\n",
       "--check-for-nan-in-loss-and-grad: not an option of Megatron-LM (d98e8a6)"},
      {base + "--bias-swiglu-fusion\n",
       "--bias-swiglu-fusion: not an option of Megatron-LM (d98e8a6)'s pretrain_gpt.py; did you "
       "mean --no-bias-swiglu-fusion?"},
      {base + "--untie-embeddings-and-output-weights-init\n",
       "--untie-embeddings-and-output-weights-init: not an option of Megatron-LM (d98e8a6)"},
      // Megatron-LM's own option that paraplan does not price: refused by name, with why.
      {base + "--enable-cuda-graph\n",
       "args.txt:2: --enable-cuda-graph: CUDA graphs change launch overheads"},
      {base + "--tensor-model-parallel-size $TP\n", "args.txt:2: --tensor-model-parallel-size"},
      {base + "--tensor-model-parallel-size two\n", "expected an integer >= 1, got \"two\""},
      {base + "--fp16 --bf16\n", "args.txt:2: --fp16: and --bf16 both given"},
      {"--seq-length 2048 --micro-batch-size 1\n", "--bf16 is missing"},
      {base + "--sequence-parallel yes\n", "is a switch"},
      {base + "--recompute-granularity most\n", "expected one of none, full, selective"},
      {base + "--data-path 'unclosed\n", "args.txt:2: unclosed quote"},
      {base + "--num-layers 24 --hidden-size 2048\n", "--num-attention-heads is missing"},
      {base + "--num-layers 2 --hidden-size 64 --num-attention-heads 4\n",
       "--vocab-size is missing"},
      {base + "--decoder-first-pipeline-num-layers 3\n", "--num-layers is missing"},
      {base + "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout Et*3|x*2,L\n",
       "'x' is not a layer"},
      {base + "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout t*3|t*2,L\n",
       "expected one E first and one L last"},
      {base + "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout Et*3|t|t,L\n",
       "3 stages are not a multiple of the pipeline-parallel size 2"},
      {base + "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout \"(Et|t|\"\n",
       "an unclosed parenthesis"},
      {base + "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout Et*|t,L\n",
       "expected a count after *"},
      {base + "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout Et*3|t*2,L "
              "--num-virtual-stages-per-pipeline-rank 2\n",
       "no virtual-stage option beside a layout"},
      {base + "--num-layers 10 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 "
              "--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 3\n",
       "the other 7 layers do not divide evenly over the other 3 stages"},
      {base + "--sequence-parallel x y\n", "expected an option (--name), got \"y\""},
      {base + "--overlap-param-gather --overlap-grad-reduce\n", "--use-distributed-optimizer"},
      {base + "--tp-comm-overlap --tensor-model-parallel-size 2\n",
       "only with --sequence-parallel"},
      {base + "--context-parallel-size 3\n", "--seq-length a multiple of 2 × 3 (got 2048)"},
      {base + "--expert-model-parallel-size 4 --num-experts 6\n", "multiple of 4 (got 6)"},
      {base + "--num-layers 10 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 "
              "--pipeline-model-parallel-size 4\n",
       "Number of layers should be divisible by the pipeline-model-parallel size"},
      {"torchrun --nproc_per_node eight pretrain_gpt.py " + base,
       "args.txt:1: --nproc_per_node \"eight\": expected a count of processes of at least 1"},
      {"torchrun --nnodes=1:4 --nproc_per_node=8 pretrain_gpt.py " + base,
       "--nnodes \"1:4\": an elastic range of nodes; paraplan prices one world size"},
      {"torchrun --nproc-per-node=gpu pretrain_gpt.py " + base,
       "--nproc-per-node \"gpu\": the launcher counts the devices itself; give the count"},
      {"", "no Megatron-LM arguments"}};
  for (const auto& [text, message] : cases) {
    try {
      read_megatron_args(text, "args.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << text;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << text << "\n" << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

// Uneven stages as Megatron-LM takes them: Megatron-Core's layout (with repeats and groups, an
// MTP module, interleaved stages) or the first and last stages' layer counts.
TEST(MegatronArgs, ReadsUnevenPipelineStages) {
  const std::string base =
      "--seq-length 2048 --micro-batch-size 1 --bf16 --num-layers 61 --hidden-size 64 "
      "--num-attention-heads 4 --vocab-size 100 ";
  const LaunchConfig layout =
      read_megatron_args(base +
                             "--pipeline-model-parallel-size 4 --pipeline-model-parallel-layout "
                             "\"Et*13|(t*16|)*2,t*16,m,L\" --mtp-num-layers 1",
                         "args.txt");
  EXPECT_EQ(layout.training.stage_layers, (std::vector<int>{13, 16, 16, 16}));
  EXPECT_EQ(layout.model->mtp_layers, 1);
  const LaunchConfig interleaved = read_megatron_args(
      "--seq-length 2048 --micro-batch-size 1 --bf16 --pipeline-model-parallel-size 2 "
      "--pipeline-model-parallel-layout \"E(tt|)*3,tt,L\"",
      "args.txt");
  EXPECT_EQ(interleaved.training.vpp, 2);
  EXPECT_TRUE(interleaved.training.stage_layers.empty());
  const LaunchConfig ends = read_megatron_args(
      base +
          "--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 13 "
          "--decoder-last-pipeline-num-layers 12",
      "args.txt");
  EXPECT_EQ(ends.training.stage_layers, (std::vector<int>{13, 18, 18, 12}));
  // DeepSeek-V3's layout (Megatron-Bridge's recipe, pp 8 × vpp 4): 61 layers and the MTP
  // module over 32 uneven virtual stages, the last two holding the MTP module and the loss.
  const LaunchConfig deepseek =
      read_megatron_args(base +
                             "--pipeline-model-parallel-size 8 --pipeline-model-parallel-layout "
                             "\"Et*3|(tt|)*29,m|L\" --mtp-num-layers 1",
                         "args.txt");
  EXPECT_EQ(deepseek.training.vpp, 4);
  EXPECT_EQ(deepseek.training.stage_layers, (std::vector<int>{9, 8, 8, 8, 8, 8, 6, 6}));
  std::vector<int> chunks = {3};
  chunks.resize(30, 2);
  chunks.resize(32, 0);
  EXPECT_EQ(deepseek.training.virtual_stage_layers, chunks);
  EXPECT_EQ(virtual_split(deepseek.training, 61), chunks);
  // Interleaved ends: each stage's layers split evenly over its virtual stages.
  const std::string sixty =
      "--seq-length 2048 --micro-batch-size 1 --bf16 --num-layers 60 --hidden-size 64 "
      "--num-attention-heads 4 --vocab-size 100 --pipeline-model-parallel-size 4 "
      "--num-virtual-stages-per-pipeline-rank 2 ";
  const LaunchConfig ends_interleaved = read_megatron_args(
      sixty + "--decoder-first-pipeline-num-layers 12 --decoder-last-pipeline-num-layers 12",
      "args.txt");
  EXPECT_EQ(ends_interleaved.training.stage_layers, (std::vector<int>{12, 18, 18, 12}));
  EXPECT_EQ(ends_interleaved.training.vpp, 2);
  try {
    read_megatron_args(
        sixty + "--decoder-first-pipeline-num-layers 13 --decoder-last-pipeline-num-layers 11",
        "args.txt");
    ADD_FAILURE() << "13 layers over 2 virtual stages accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("do not split evenly over 2 virtual stages"),
              std::string::npos)
        << e.what();
  }
}

TEST(MegatronArgs, SearchedOptionsAreInMegatronsSpelling) {
  TransformerConfig m;
  TrainingConfig t;
  t.tp = 4;
  t.pp = 2;
  t.vpp = 3;
  t.recompute = Recompute::kFull;
  t.recompute_layers = 2;
  t.zero_stage = 1;
  t.overlap_p2p_comm = false;
  const auto options = megatron_searched_options(m, t);
  auto find = [&](const std::string& flag) {
    for (const auto& [f, v] : options)
      if (f == flag) return v;
    return std::string("absent");
  };
  EXPECT_EQ(find("--tensor-model-parallel-size"), "4");
  EXPECT_EQ(find("--num-virtual-stages-per-pipeline-rank"), "3");
  EXPECT_EQ(find("--recompute-method"), "block");
  EXPECT_EQ(find("--recompute-num-layers"), "2");
  EXPECT_EQ(find("--use-distributed-optimizer"), "");
  EXPECT_EQ(find("--no-overlap-p2p-communication"), "");
  EXPECT_EQ(find("--sequence-parallel"), "absent");
}

// Every refusal at once, each placed, not the first alone.
TEST(MegatronArgs, ReportsEveryRefusalAtOnce) {
  try {
    read_megatron_args(
        "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100\n"
        "--seq-length 2048 --micro-batch-size 1 --bf16\n--enable-cuda-graph\n"
        "--tensor-model-paralel-size 2\n--cpu-offloading-num-layers 2\n",
        "args.txt");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("3 options refused"), std::string::npos) << what;
    for (const char* each :
         {"args.txt:3: --enable-cuda-graph: CUDA graphs", "args.txt:4: --tensor-model-paralel-size",
          "args.txt:5: --cpu-offloading-num-layers: offloading"})
      EXPECT_NE(what.find(each), std::string::npos) << each << "\n" << what;
  }
  // Values refused beside the options: a type, a missing option, a choice, Megatron-LM's
  // assertions, with the options unknown.
  try {
    read_megatron_args(
        "--num-layers 2 --hidden-size 64 --num-attention-heads four --vocab-size 100\n"
        "--seq-length 2048 --recompute-granularity most\n--bogus-option\n"
        "--context-parallel-size 3 --pipeline-model-parallel-size $PP\n",
        "args.txt");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "args.txt: 7 options refused (paraplan prices the others):\n"
              "  args.txt:3: --bogus-option: not an option of Megatron-LM (d98e8a6)'s "
              "pretrain_gpt.py\n"
              "  args.txt:1: --num-attention-heads: expected an integer >= 1, got \"four\"\n"
              "  args.txt: --bf16 is missing (without it Megatron-LM trains in fp32, which "
              "paraplan does not price)\n"
              "  args.txt:4: --pipeline-model-parallel-size: \"$PP\" is a shell variable; give "
              "its value\n"
              "  args.txt: --micro-batch-size is missing (Megatron-LM requires it)\n"
              "  args.txt:2: --recompute-granularity: expected one of none, full, selective, got "
              "\"most\"\n"
              "  args.txt:4: --context-parallel-size: Megatron-LM needs --seq-length a multiple "
              "of 2 × 3 (got 2048)");
  }
}

// Megatron-LM's example scripts as shipped: variables set in the file, ${VAR:-default}, arrays
// expanded into torchrun's line, $((arithmetic)), if/else on the script's own arguments (their
// defaults), quoted array elements split where bash splits them, a here-document skipped, and
// a line that merely names the script (PRETRAIN_SCRIPT_PATH="pretrain_gpt.py") not taken for
// the launch.
TEST(MegatronArgs, ReadsShellScriptsAsBashRunsThem) {
  const std::string script = R"(#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-1}
TOKENIZER_ARG=${1:-"MOCK"}
GPUS_PER_NODE=8
NUM_NODES=2
WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))
PRETRAIN_SCRIPT_PATH="pretrain_gpt.py"
TP_SIZE=2
DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
)
MODEL_ARGS=(
    --num-layers 4 --hidden-size 256  # a comment
    --num-attention-heads 8 --seq-length 1024
)
TRAINING_ARGS=(--micro-batch-size 1 --global-batch-size 64 --bf16)
if [[ "$TOKENIZER_ARG" == "MOCK" ]] || [[ -z "$TOKENIZER_ARG" ]]; then
    DATA_ARGS=("--mock-data" "--tokenizer-type NullTokenizer" "--vocab-size 32000")
else
    DATA_ARGS=("--tokenizer-type HuggingFaceTokenizer" "--tokenizer-model $TOKENIZER_ARG")
fi
TRAINING_ARGS+=("--tensor-model-parallel-size ${TP_SIZE}")
if [ ! -f "$PRETRAIN_SCRIPT_PATH" ]; then
    echo "Error: pretrain_gpt.py not found at $PRETRAIN_SCRIPT_PATH"
    exit 1
fi
cat <<NOTES > notes.txt
--num-layers 99
NOTES
torchrun ${DISTRIBUTED_ARGS[@]} "$PRETRAIN_SCRIPT_PATH" \
    ${MODEL_ARGS[@]} ${TRAINING_ARGS[@]} ${DATA_ARGS[@]} 2>&1 | tee log.txt
)";
  const LaunchConfig l = read_megatron_args(script, "train.sh");
  EXPECT_EQ(l.world_size, 16);
  ASSERT_TRUE(l.model.has_value());
  EXPECT_EQ(l.model->num_layers, 4);
  EXPECT_EQ(l.model->vocab_size, 32000);
  EXPECT_EQ(l.training.tp, 2);
  EXPECT_EQ(l.training.global_batch, 64);
  EXPECT_NE(std::find(l.environment.begin(), l.environment.end(), "CUDA_DEVICE_MAX_CONNECTIONS=1"),
            l.environment.end());
}

// Megatron-Core's precision-aware optimizer: both moments in bf16 (or FP8), bf16 main gradients
// as the bf16 gradient buffer; what Megatron-Core asserts, and what paraplan does not price,
// refused.
TEST(MegatronArgs, ReadsThePrecisionAwareOptimizer) {
  const std::string base =
      "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 --seq-length 2048 "
      "--micro-batch-size 1 --bf16 --use-distributed-optimizer ";
  LaunchConfig l = read_megatron_args(base +
                                          "--use-precision-aware-optimizer --exp-avg-dtype bf16 "
                                          "--exp-avg-sq-dtype bf16 --main-grads-dtype bf16\n",
                                      "args.txt");
  EXPECT_EQ(l.training.optimizer_moments, OptimizerMoments::kBf16);
  EXPECT_FALSE(l.training.precision_aware_optimizer);  // implied by the moments
  EXPECT_TRUE(l.training.bf16_gradient_reduction);
  l = read_megatron_args(
      base + "--use-precision-aware-optimizer --exp-avg-dtype fp8 --exp-avg-sq-dtype fp8\n",
      "args.txt");
  EXPECT_EQ(l.training.optimizer_moments, OptimizerMoments::kFp8);
  EXPECT_FALSE(l.training.bf16_gradient_reduction);
  l = read_megatron_args(base + "--use-precision-aware-optimizer\n", "args.txt");
  EXPECT_EQ(l.training.optimizer_moments, OptimizerMoments::kFp32);
  EXPECT_TRUE(l.training.precision_aware_optimizer);  // fp32 moments, the main's remainders
  EXPECT_EQ(optimizer_state_bytes(l.training), 10);
  for (const auto& [args, why] : std::vector<std::pair<std::string, std::string>>{
           {"--exp-avg-dtype bf16", "--exp-avg-dtype: Megatron-Core asserts it can only be fp32"},
           {"--use-precision-aware-optimizer --exp-avg-dtype bf16",
            "--exp-avg-sq-dtype: paraplan prices both moments in one dtype; expected bf16"},
           {"--use-precision-aware-optimizer --exp-avg-dtype fp16 --exp-avg-sq-dtype fp16",
            "--exp-avg-dtype: paraplan prices Adam's moments in fp32, bf16 or fp8"},
           {"--use-precision-aware-optimizer --main-params-dtype fp16",
            "--main-params-dtype: paraplan prices the fp32 main parameters"}}) {
    try {
      read_megatron_args(base + args + "\n", "args.txt");
      ADD_FAILURE() << args;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

// Megatron-Core's split with the embedding and the loss counted as layers.
TEST(MegatronArgs, ReadsTheEmbeddingAndLossCountedInTheSplit) {
  const LaunchConfig l = read_megatron_args(
      "--num-layers 126 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 --seq-length "
      "2048 --micro-batch-size 1 --bf16 --pipeline-model-parallel-size 8 "
      "--num-virtual-stages-per-pipeline-rank 2 --account-for-embedding-in-pipeline-split "
      "--account-for-loss-in-pipeline-split\n",
      "args.txt");
  EXPECT_EQ(l.training.stage_layers, (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  EXPECT_EQ(l.training.virtual_stage_layers.front(), 7);
  EXPECT_THROW(read_megatron_args("--num-layers 126 --hidden-size 64 --num-attention-heads 4 "
                                  "--vocab-size 100 --seq-length 2048 --micro-batch-size 1 --bf16 "
                                  "--pipeline-model-parallel-size 8 "
                                  "--account-for-embedding-in-pipeline-split\n",
                                  "args.txt"),
               Error);  // 127 over 8 stages
}

}  // namespace
}  // namespace paraplan::engines
