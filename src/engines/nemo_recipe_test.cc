// NeMo GPT recipes read as paraplan prices them: the example recipe, its interpolations, and bad
// keys as one placed usage error.
#include "engines/nemo_recipe.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "io/json_fields.h"
#include "ir/error.h"

namespace paraplan::engines {

using io::read_text_file;
namespace {

TEST(NemoRecipe, ReadsTheExampleRecipe) {
  const std::string path = std::string(PARAPLAN_SOURCE_DIR) + "/docs/examples/nemo_llama3_8b.yaml";
  const LaunchConfig l = read_nemo_recipe(read_text_file(path), path);
  EXPECT_EQ(l.format, "nemo");
  EXPECT_EQ(l.world_size, 64);
  ASSERT_TRUE(l.model.has_value());
  EXPECT_EQ(l.model->num_layers, 32);
  EXPECT_EQ(l.model->num_kv_heads, 8);
  EXPECT_EQ(l.model->ffn_hidden_size, 14336);
  EXPECT_EQ(l.model->vocab_size, 128256);
  EXPECT_EQ(l.model->max_positions, 8192);  // ${.encoder_seq_length}
  EXPECT_TRUE(l.model->gated_mlp);
  EXPECT_FALSE(l.model->tied_embeddings);
  EXPECT_FALSE(l.model->learned_positions);
  EXPECT_FALSE(l.model->biases);
  EXPECT_FALSE(l.model->dropout);
  const TrainingConfig& t = l.training;
  EXPECT_EQ(t.tp, 8);
  EXPECT_EQ(t.vpp, 1);
  EXPECT_EQ(t.seq_len, 8192);
  EXPECT_EQ(t.global_batch, 512);
  EXPECT_TRUE(t.sequence_parallel);
  EXPECT_EQ(t.recompute, Recompute::kFull);
  EXPECT_EQ(t.recompute_layers, 0);
  EXPECT_EQ(t.zero_stage, 1);
  EXPECT_TRUE(t.overlap_grad_reduce);
  EXPECT_TRUE(t.overlap_param_gather);
  auto has = [](const std::vector<std::string>& v, const std::string& k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  EXPECT_TRUE(has(l.read, "model.tensor_model_parallel_size"));
  EXPECT_TRUE(has(l.read, "model.optim.overlap_grad_sync"));
  EXPECT_TRUE(has(l.ignored, "model.optim.lr"));
  EXPECT_TRUE(has(l.ignored, "exp_manager"));
}

TEST(NemoRecipe, BadKeysAreOnePlacedUsageError) {
  const std::string base =
      "trainer: {devices: 8, num_nodes: 1, precision: bf16-mixed}\n"
      "model:\n  micro_batch_size: 1\n  encoder_seq_length: 2048\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {base + "  tensor_model_paralel_size: 2\n", "recipe.yaml: model.tensor_model_paralel_size"},
      {base + "  tensor_model_parallel_size: two\n", "expected an integer >= 1"},
      {base + "  sequence_parallel: 1\n", "expected true or false"},
      {base + "  optim: {name: sgd}\n", "model.optim.name: expected one of"},
      {base + "  optim: {nam: fused_adam}\n", "model.optim.nam"},
      {"trainer: {precision: 16-mixed}\nmodel: {micro_batch_size: 1, encoder_seq_length: 8}\n",
       "trainer.precision: paraplan prices bf16"},
      {base + "  global_batch_size: ${.nowhere}\n", "refers to a key the recipe does not have"},
      {base + "  cpu_offloading: true\n", "model.cpu_offloading"},
      {base + "  fsdp: true\n", "model.fsdp: NeMo's PyTorch-FSDP path is not priced"},
      {base + "  drop_layers: [3]\n", "model.drop_layers: dropping layers changes the model"},
      // Every refusal at once, not the first: unknown keys, a value of the wrong type, in
      // every section.
      {base + "  tensor_model_paralel_size: 2\n  pipline_model_parallel_size: 2\n"
              "  sequence_parallel: 1\n  optim: {name: sgd}\n",
       "recipe.yaml: 4 settings refused (paraplan prices the others):\n"
       "  model.pipline_model_parallel_size: not a key paraplan knows in this section of a NeMo "
       "GPT recipe (a typo? keys that change time or memory are read, the others listed as "
       "ignored)\n"
       "  model.tensor_model_paralel_size: not a key paraplan knows"},
      {base + "  tensor_model_paralel_size: 2\n  pipline_model_parallel_size: 2\n"
              "  sequence_parallel: 1\n  optim: {name: sgd}\n",
       "\n  model.sequence_parallel: expected true or false, got 1\n"
       "  model.optim.name: expected one of distributed_fused_adam, fused_adam, adam, "
       "mcore_distributed_optim, got \"sgd\""},
      {"trainer: {devices: 8}\n", "no `model` section"}};
  for (const auto& [text, message] : cases) {
    try {
      read_nemo_recipe(text, "recipe.yaml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << text;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << text << "\n" << e.what();
    }
  }
}

// NeMo's stock megatron_gpt_config.yaml keys that change neither time nor memory are ignored,
// by name; the vocabulary is override_vocab_size where given (the key NeMo sizes the embedding
// by), else the tokenizer's.
TEST(NemoRecipe, StockKeysAreIgnoredAndTheVocabularyIsWhatNemoBuilds) {
  const std::string text =
      "trainer: {devices: 8, num_nodes: 1, precision: bf16-mixed}\n"
      "model:\n  micro_batch_size: 1\n  global_batch_size: 8\n  encoder_seq_length: 2048\n"
      "  num_layers: 4\n  hidden_size: 1024\n  num_attention_heads: 8\n"
      "  apply_query_key_layer_scaling: false\n  fsdp: false\n  drop_layers: []\n"
      "  fsdp_sharding_strategy: full\n  enable_megatron_timers: false\n  reset_lr: false\n"
      "  megatron_amp_O2: true\n  override_vocab_size: 32000\n"
      "  tokenizer: {library: huggingface, type: org/model, vocab_size: 50257}\n";
  const LaunchConfig l = read_nemo_recipe(text, "stock.yaml");
  ASSERT_TRUE(l.model.has_value());
  EXPECT_EQ(l.model->vocab_size, 32000);
  for (const char* key : {"model.apply_query_key_layer_scaling", "model.fsdp_sharding_strategy",
                          "model.enable_megatron_timers", "model.reset_lr"})
    EXPECT_NE(std::find(l.ignored.begin(), l.ignored.end(), key), l.ignored.end()) << key;
}

}  // namespace
}  // namespace paraplan::engines
