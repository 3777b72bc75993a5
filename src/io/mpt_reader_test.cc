// The MPT benchmark reader: both spellings of the table, the derived settings, bad rows.
#include "io/mpt_reader.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace paraplan::io {
namespace {

const char* kMarkdown = R"(# MPT Training Benchmarks

Prose with a | pipe | that is not a table.

## A100 80GB with 1600 Gbps node-node interconnect (RoCE)
|  Model | SeqLen (T) | # GPUs | GPU | MFU | HFU | MicroBatchSize | GradAccum | GlobalBatchSize | Throughput (S/s) | Throughput (T/s) | Throughput (T/s/GPU) | GlobalBatchSize (T) | Precision | MP Mode | Sharding Strategy | Activation Checkpointing | Activation CPUOffload | NumParams |
|  --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
|  7b | 2048 | 8 | a100_80gb | 64.23 | 64.23 | 6 | 2 | 96 | 18 | 37134 | 4641 | 196608 | amp_bf16 | DEFAULT | FULL_SHARD | False | False | 6658859008 |
|  70b | 2048 | 64 | a100_40gb | 35.87 | 47.82 | 2 | 1 | 128 | 8 | 17670 | 276 | 262144 | bf16 | PURE | FULL_SHARD | True | False | 64862437376 |

## H100 80GB FP8
|  Model | SeqLen (T) | # GPUs | GPU | MicroBatchSize | GradAccum | Throughput (T/s) | Precision | MP Mode | Sharding Strategy | Activation Checkpointing | Activation CPUOffload |
|  --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
|  3b | 8192 | 8 | h100_80gb | 3 | 6 | 153174 | amp_fp8 | DEFAULT | FULL_SHARD | False | False |
)";

TEST(MptReader, ReadsLlmFoundrysMarkdownTables) {
  const MptTable t = parse_mpt_table(kMarkdown, "README.md");
  ASSERT_EQ(t.runs.size(), 3u);
  const MeasuredRun& a = t.runs[0];
  EXPECT_EQ(a.line, 8);
  EXPECT_EQ(a.set, "mpt");
  EXPECT_EQ(a.model, "7b");
  EXPECT_EQ(a.hidden, 4096);
  EXPECT_EQ(a.heads, 32);
  EXPECT_EQ(a.layers, 32);
  EXPECT_EQ(a.vocab, 50368);
  EXPECT_EQ(a.global_batch, 96);
  EXPECT_EQ(a.dp, 8);
  EXPECT_EQ(a.zero_stage, 3);
  EXPECT_EQ(a.attention, Attention::kFlash);
  EXPECT_EQ(a.recompute, Recompute::kNone);
  EXPECT_FALSE(a.bf16_gradient_reduction);
  EXPECT_TRUE(a.fp32_loss);
  EXPECT_EQ(a.device, "A100");
  EXPECT_DOUBLE_EQ(a.device_memory_bytes, 80.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(a.iteration_time_s, 196608.0 / 37134.0);  // tokens / (tokens/s)
  const MeasuredRun& b = t.runs[1];
  EXPECT_EQ(b.recompute, Recompute::kFull);
  EXPECT_TRUE(b.bf16_gradient_reduction);  // PURE: bf16 reduction and loss
  EXPECT_FALSE(b.fp32_loss);
  EXPECT_DOUBLE_EQ(b.device_memory_bytes, 40.0 * (1ull << 30));
  // FP8 rows (Transformer Engine's linear layers under Composer) are priced on the H100.
  const MeasuredRun& c = t.runs[2];
  EXPECT_TRUE(c.fp8);
  EXPECT_FALSE(a.fp8);
  EXPECT_EQ(c.device, "H100");
  EXPECT_EQ(c.line, 14);
  EXPECT_TRUE(t.skipped.empty());
}

TEST(MptReader, ReadsTheProjectsTable) {
  const MptTable t = read_mpt_table(std::string(PARAPLAN_DATA) + "/mpt/mpt_a100.tsv");
  EXPECT_EQ(t.runs.size(), 139u);
  EXPECT_TRUE(t.skipped.empty());
}

void expect_bad_mpt(const std::string& text, const std::string& needle) {
  try {
    parse_mpt_table(text, "t.tsv");
    FAIL() << "accepted: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(MptReader, BadRowsNameTheLineAndColumn) {
  const std::string header =
      "model\tseq_len\tgpus\tgpu\tmicro_batch\tgrad_accum\tprecision\tmp_mode\tsharding\t"
      "activation_checkpointing\titeration_time_s\n";
  const std::string good =
      "7b\t2048\t8\ta100_80gb\t6\t2\tamp_bf16\tDEFAULT\tFULL_SHARD\tFalse\t5.3\n";
  EXPECT_EQ(parse_mpt_table(header + good, "t.tsv").runs.size(), 1u);
  expect_bad_mpt(
      header + "7b\t2048\t8\tv100_32gb\t6\t2\tamp_bf16\tDEFAULT\tFULL_SHARD\tFalse\t5.3\n",
      "t.tsv:2: column \"gpu\": unknown GPU \"v100_32gb\" (known: a100_40gb");
  expect_bad_mpt(
      header + "9b\t2048\t8\ta100_80gb\t6\t2\tamp_bf16\tDEFAULT\tFULL_SHARD\tFalse\t5.3\n",
      "unknown MPT size \"9b\"");
  expect_bad_mpt(
      header + "7b\t2048\t8\ta100_80gb\t6\t2\tamp_bf16\tDEFAULT\tFULL_SHARD\tmaybe\t5.3\n",
      "column \"activation_checkpointing\": expected True or False");
  expect_bad_mpt(header + "7b\t-1\t8\ta100_80gb\t6\t2\tamp_bf16\tDEFAULT\tFULL_SHARD\tFalse\t5.3\n",
                 "t.tsv:2: column \"seq_len\": expected a positive number");
  expect_bad_mpt(header + "7b\t2048\t8\n", "t.tsv:2: 3 cells, the header has 11");
  expect_bad_mpt("model\tseq_len\n7b\t2048\n", "missing column \"gpus\"");
  expect_bad_mpt("", "no benchmark table");
}

}  // namespace
}  // namespace paraplan::io
