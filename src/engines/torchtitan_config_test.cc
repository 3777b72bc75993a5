// torchtitan job TOMLs read as paraplan prices them: the example, torchtitan's own stage split,
// the degrees resolved against the world size, and bad input as one placed usage error.
#include "engines/torchtitan_config.h"

#include <gtest/gtest.h>

#include "io/json_fields.h"
#include "ir/error.h"

namespace paraplan::engines {

using io::read_text_file;
namespace {

TEST(TorchtitanConfig, ReadsTheExample) {
  const std::string path =
      std::string(PARAPLAN_SOURCE_DIR) + "/docs/examples/torchtitan_llama3_8b.toml";
  const LaunchConfig l = read_torchtitan_config(read_text_file(path), path);
  EXPECT_EQ(l.format, "torchtitan");
  EXPECT_EQ(l.model_name, "llama3-8b");
  EXPECT_EQ(l.world_size, 64);
  const TrainingConfig t = complete_torchtitan(l, 32, 64);
  EXPECT_EQ(t.stack, Stack::kFsdp);
  EXPECT_EQ(t.dp, 64);
  EXPECT_EQ(t.zero_stage, 3);
  EXPECT_EQ(t.micro_batch, 1);
  EXPECT_EQ(t.global_batch, 512);
  EXPECT_EQ(t.seq_len, 8192);
  EXPECT_EQ(t.recompute, Recompute::kSelective);
  EXPECT_FALSE(t.fused_elementwise);
  EXPECT_FALSE(t.fp8);
}

// torchtitan's other flavors as it builds them: llama3's debug model (ffn 768, the 256-multiple
// of 2/3 · 4 · 256) and deepseek_v3's 16B (DeepSeek-V2-Lite's shape: 15.7 B parameters, 64
// experts, top 6, MLA); a flavor paraplan does not know is named, not guessed.
TEST(TorchtitanConfig, ReadsTorchtitansOtherFlavors) {
  const LaunchConfig debug =
      read_torchtitan_config("[model]\nname = \"llama3\"\nflavor = \"debugmodel\"\n", "j.toml");
  ASSERT_TRUE(debug.model.has_value());
  EXPECT_TRUE(debug.model_from_engine);
  EXPECT_EQ(debug.model->name, "torchtitan-llama3-debugmodel");
  EXPECT_EQ(debug.model->ffn_hidden_size, 768);
  EXPECT_EQ(debug.model->num_layers, 6);
  const LaunchConfig v3 =
      read_torchtitan_config("[model]\nname = \"deepseek_v3\"\nflavor = \"16B\"\n", "j.toml");
  ASSERT_TRUE(v3.model.has_value());
  EXPECT_EQ(v3.model->num_experts, 64);
  EXPECT_EQ(v3.model->experts_per_token, 6);
  EXPECT_EQ(v3.model->kv_lora_rank, 512);
  EXPECT_NEAR(v3.model->parameters(), 15.7e9, 0.1e9);
  const LaunchConfig qwen =
      read_torchtitan_config("[model]\nname = \"qwen3\"\nflavor = \"0.6B\"\n", "j.toml");
  ASSERT_TRUE(qwen.model.has_value());
  EXPECT_TRUE(qwen.model->tied_embeddings);
  EXPECT_NEAR(qwen.model->parameters(), 0.596e9, 0.01e9);  // Qwen3-0.6B: 0.6 B with the tied head
  const LaunchConfig llama4 =
      read_torchtitan_config("[model]\nname = \"llama4\"\nflavor = \"17bx16e\"\n", "j.toml");
  EXPECT_FALSE(llama4.model.has_value());
  EXPECT_TRUE(llama4.model_name.empty());
  EXPECT_EQ(llama4.model_unknown, "torchtitan's llama4 flavor \"17bx16e\"");
}

// generate_llm_fqn_per_model_part: the embedding and the output weigh one layer each by default,
// the first stages take the remainder.
TEST(TorchtitanConfig, SplitsStagesAsTorchtitanDoes) {
  EXPECT_EQ(torchtitan_split(32, 4, 1, 1), (std::vector<int>{8, 9, 8, 7}));
  EXPECT_EQ(torchtitan_split(80, 6, 1, 1), (std::vector<int>{13, 14, 14, 14, 13, 12}));
  EXPECT_EQ(torchtitan_split(3, 2, 2, 2), (std::vector<int>{2, 1}));
  EXPECT_EQ(torchtitan_split(32, 4, 0, 0), (std::vector<int>{8, 8, 8, 8}));
  EXPECT_EQ(torchtitan_split(7, 1, 1, 1), (std::vector<int>{7}));
  // A pipeline read without parts takes that split; interleaved, it must be even.
  LaunchConfig l = read_torchtitan_config(
      "[parallelism]\npipeline_parallel_degree = 4\ndata_parallel_shard_degree = 2\n"
      "[training]\nlocal_batch_size = 8\n",
      "job.toml");
  TrainingConfig t = complete_torchtitan(l, 32, 8);
  EXPECT_EQ(t.stage_layers, (std::vector<int>{8, 9, 8, 7}));
  EXPECT_EQ(t.zero_stage, 2);  // "default": no resharding after the forward under a pipeline
  EXPECT_EQ(t.micro_batch, 1);
  EXPECT_EQ(t.microbatches(), 8);
  l = read_torchtitan_config(
      "[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_schedule = "
      "\"Interleaved1F1B\"\npipeline_parallel_first_stage_less_layers = 0\n"
      "pipeline_parallel_last_stage_less_layers = 0\n[activation_checkpoint]\nmode = "
      "\"selective\"\nselective_ac_option = \"4\"\n",
      "job.toml");
  t = complete_torchtitan(l, 32, 2);
  EXPECT_EQ(t.vpp, 2);
  EXPECT_TRUE(t.stage_layers.empty());
  EXPECT_EQ(t.recompute, Recompute::kFull);
  EXPECT_EQ(t.recompute_layers, 4);  // 16 layers per rank, every 4th
  // torchtitan's own interleaved split weighs the embedding and the output as a layer each:
  // uneven virtual stages, rank r running stages r and r + 2.
  l = read_torchtitan_config(
      "[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_schedule = "
      "\"Interleaved1F1B\"\n",
      "job.toml");
  t = complete_torchtitan(l, 32, 2);
  const std::vector<int> stages = torchtitan_split(32, 4, 1, 1);
  EXPECT_EQ(t.vpp, 2);
  EXPECT_EQ(t.stage_layers, (std::vector<int>{stages[0] + stages[2], stages[1] + stages[3]}));
  EXPECT_EQ(virtual_split(t, 32), stages);
}

TEST(TorchtitanConfig, BadInputIsOnePlacedUsageError) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[parallelism]\ntensor_paralel_degree = 2\n",
       "job.toml: parallelism.tensor_paralel_degree: not a key paraplan knows in a torchtitan job"},
      {"[paralelism]\n", "job.toml: paralelism: not a key"},
      {"[parallelism]\ntensor_parallel_degree = \"two\"\n", "expected an integer >= 1"},
      {"[parallelism\n", "job.toml:1"},
      {"[parallelism]\npipeline_parallel_schedule = \"GPipe\"\n",
       "paraplan prices 1F1B and Interleaved1F1B"},
      {"[training]\nenable_cpu_offload = true\n", "training.enable_cpu_offload"},
      {"[training]\nmixed_precision_param = \"float32\"\n", "expected bfloat16"},
      {"[model]\nconverters = [\"mx\"]\n", "\"mx\" is not priced"},
      {"[activation_checkpoint]\nmode = \"memory_budget\"\n", "not \"memory_budget\""},
      {"[activation_checkpoint]\nselective_ac_option = \"most\"\n", "expected \"op\""},
      {"[parallelism]\nenable_async_tensor_parallel = true\n",
       "needs tensor_parallel_degree 2 or more"},
      {"[optimizer]\nname = \"Muon\"\n", "expected AdamW or Adam"},
      {"[float8]\nenable_fsdp_float8_all_gather = true\n", "float8: not a key"},
      {"[model]\nconverters = [\"float8\"]\n[quantize.linear.float8]\n"
       "recipe_name = \"rowwise_with_gw_hp\"\n",
       "is not priced"},
      {"[model]\nconverters = [\"float8\"]\n[quantize.linear.float8]\nemulate = true\n",
       "emulated FP8"},
      {"[model]\nconverters = [\"float8\"]\n[quantize.linear.float8]\n"
       "filter_fqns = [\"attention.wq\"]\n",
       "kept in bf16"},
      {"[model]\nconverters = [\"quantize.linear.float8\"]\n[quantize.linear.float8]\n"
       "recipe_name = \"rowwise\"\nenable_fsdp_float8_all_gather = true\n",
       "tensorwise scaling only"},
      {"[quantize.linear.float8]\nrecipe = \"rowwise\"\n", "quantize.linear.float8.recipe"}};
  // Every refusal at once, not the first.
  try {
    read_torchtitan_config(
        "[parallelism]\ntensor_paralel_degree = 2\npipeline_parallel_schedule = \"GPipe\"\n"
        "module_fqns_per_model_part = 3\n[training]\nenable_cpu_offload = true\n"
        "seq_len = \"8k\"\n[compile]\ncomponents = [1]\n",
        "job.toml");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "job.toml: 6 settings refused (paraplan prices the others):\n"
              "  parallelism.tensor_paralel_degree: not a key paraplan knows in a torchtitan job "
              "(a typo? keys that change time or memory are read, the others listed as ignored)\n"
              "  training.enable_cpu_offload: offloading to the CPU is not priced; expected false\n"
              "  parallelism.pipeline_parallel_schedule: paraplan prices 1F1B and "
              "Interleaved1F1B, not \"GPipe\"\n"
              "  parallelism.module_fqns_per_model_part: expected lists\n"
              "  compile.components: expected a list of strings\n"
              "  training.seq_len: expected an integer >= 1, got \"8k\"");
  }
  for (const auto& [text, message] : cases) {
    try {
      read_torchtitan_config(text, "job.toml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << text;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << text << "\n" << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  // Resolved against the world size: HSDP without resharding, degrees that do not multiply to
  // it, a batch or a pipeline micro-batch that does not divide.
  const std::vector<std::tuple<std::string, int, std::string>> resolved = {
      {"[parallelism]\ndata_parallel_replicate_degree = 2\nfsdp_reshard_after_forward = "
       "\"never\"\n",
       8, "HSDP without resharding"},
      {"[parallelism]\ndata_parallel_shard_degree = 4\n", 8, "multiply to 4, not the world size 8"},
      {"[parallelism]\ntensor_parallel_degree = 3\n", 8, "does not divide the world size 8"},
      {"[training]\nglobal_batch_size = 12\nlocal_batch_size = 1\n", 8, "not a multiple"},
      {"[training]\nlocal_batch_size = 3\n[parallelism]\npipeline_parallel_degree = 2\n"
       "pipeline_parallel_microbatch_size = 2\n",
       8, "does not divide training.local_batch_size 3"}};
  for (const auto& [text, world, message] : resolved) {
    try {
      complete_torchtitan(read_torchtitan_config(text, "job.toml"), 32, world);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << text;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << text << "\n" << e.what();
    }
  }
}

// HSDP: FSDP over data_parallel_shard_degree × cp, replicated: ZeRO 3 with that shard group.
// Without the float8 converter its section is inert (torchtitan's deepseek_v3_16b.toml keeps
// one with the converter commented out); with it, the LM head and the router may stay bf16.
TEST(TorchtitanConfig, Float8SettingsMatterWithTheConverterOnly) {
  const std::string section =
      "[quantize.linear.float8]\nenable_fsdp_float8_all_gather = true\n"
      "filter_fqns = [\"output\", \"router.gate\"]\n";
  const LaunchConfig off = read_torchtitan_config(section, "j.toml");
  EXPECT_FALSE(off.training.fp8);
  EXPECT_FALSE(off.training.fp8_param_gather);
  const LaunchConfig on = read_torchtitan_config(
      "[model]\nconverters = [\"quantize.linear.float8\"]\n" + section, "j.toml");
  EXPECT_TRUE(on.training.fp8);
  EXPECT_TRUE(on.training.fp8_param_gather);
}

TEST(TorchtitanConfig, HybridShardingIsAShardGroup) {
  const TrainingConfig t = complete_torchtitan(
      read_torchtitan_config("[parallelism]\ndata_parallel_replicate_degree = 4\n"
                             "data_parallel_shard_degree = 4\ncontext_parallel_degree = 2\n",
                             "job.toml"),
      32, 32);
  EXPECT_EQ(t.dp, 16);
  EXPECT_EQ(t.zero_stage, 3);
  EXPECT_EQ(t.shard_group, 8);  // 4 × cp 2
  EXPECT_EQ(torchtitan_degrees(t), (std::pair<int, int>{4, 4}));
}

}  // namespace
}  // namespace paraplan::engines
