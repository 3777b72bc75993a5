// DeepSpeed configurations read as paraplan prices them: the example, and bad keys as one placed
// usage error.
#include "io/deepspeed_config.h"

#include <gtest/gtest.h>

#include "io/json_fields.h"
#include "ir/error.h"

namespace paraplan::io {
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
      {R"({"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": true}})", "is \"auto\""},
      {R"({"train_micro_batch_size_per_gpu": 1, "fp16": {"enabled": true}})", "fp16.enabled"},
      {R"({"train_micro_batch_size_per_gpu": 1})", "ds.json: bf16: without bf16.enabled"},
      {"{" + base + R"(, "zero_optimization": {"offload_optimizer": {"device": "cpu"}}})",
       "offloading"},
      {"{" + base + R"(, "train_batch_size": 30, "gradient_accumulation_steps": 4})",
       "30 is not micro-batch × accumulation × GPUs"},
      {"{" + base + R"(, "optimizer": {"type": "Lamb"}})", "optimizer.type"},
      {R"({"bf16": {"enabled": true}})", "train_micro_batch_size_per_gpu: is missing"}};
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
}  // namespace paraplan::io
