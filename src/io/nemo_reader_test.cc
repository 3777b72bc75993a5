// The NeMo H100 table: the shipped rows, and bad rows named by file, line and column.
#include "io/nemo_reader.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "zoo/llm_models.h"

namespace paraplan::io {
namespace {

const std::string kHeader =
    "id\tmodel\tlayers\thidden\theads\tkv_heads\tffn\tvocab\tseq\tgpu\tgpus\tglobal_batch\t"
    "micro_batch\ttp\tpp\tdp\tcp\tep\tvpp\trecompute\tsp\tzero\toverlap\tattention\t"
    "measured_iter_s\tref\n";
const std::string kRow =
    "r\tllama3-70b\t80\t8192\t64\t8\t28672\t128256\t8192\tH100-80GB\t64\t128\t1\t4\t4\t2\t2\t1\t5\t"
    "none\tyes\t1\tyes\tflash\t14.72\tref\n";

TEST(NemoReader, ReadsTheShippedTableWithTheRecipesOverlaps) {
  const auto runs =
      read_nemo_table(std::string(PARAPLAN_DATA) + "/nemo-h100/nemo_h100.tsv", zoo::llm_model);
  ASSERT_EQ(runs.size(), 8u);
  const PublishedRun& r = runs[4];  // Llama 3.1 70B on 64 GPUs
  EXPECT_EQ(r.name, "dgxc-llama31-70b-64");
  EXPECT_EQ(r.cluster, "dgx-h100");
  EXPECT_EQ(r.config.devices(), 64);
  EXPECT_EQ(r.config.vpp, 5);
  EXPECT_EQ(r.config.stack, Stack::kMegatron);
  EXPECT_TRUE(r.config.tp_comm_overlap);
  EXPECT_TRUE(r.config.overlap_p2p_comm);
  EXPECT_TRUE(r.config.overlap_param_gather);
  EXPECT_DOUBLE_EQ(r.tokens_per_s_per_device, 128.0 * 8192 / (14.72 * 64));
  EXPECT_EQ(runs[6].model->num_kv_heads, 16);  // 405B as benchmarked: its config.json beside
}

void expect_bad_nemo(const std::string& row, const std::string& needle) {
  try {
    parse_nemo_table(kHeader + row, "t.tsv", ".", zoo::llm_model);
    ADD_FAILURE() << "accepted: " << row;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("t.tsv:2"), std::string::npos) << e.what();
  }
}

TEST(NemoReader, BadRowsNameTheColumn) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string row = kRow;
    row.replace(row.find(from), from.size(), to);
    return row;
  };
  expect_bad_nemo(with("llama3-70b", "llama9"), "column \"model\"");
  expect_bad_nemo(with("\t80\t8192", "\t81\t8192"), "column \"layers\"");
  expect_bad_nemo(with("\t64\t128\t1\t4", "\t63\t128\t1\t4"), "column \"gpus\"");
  expect_bad_nemo(with("none", "sometimes"), "column \"recompute\"");
  expect_bad_nemo(with("H100-80GB", "A100-80GB"), "column \"gpu\"");
  expect_bad_nemo(with("14.72", "-1"), "column \"measured_iter_s\"");
  expect_bad_nemo(with("\tyes\t1\tyes", "\tmaybe\t1\tyes"), "column \"sp\"");
  expect_bad_nemo("r\tllama3-70b\n", "cells");
  try {
    parse_nemo_table("id\tmodel\n", "t.tsv", ".", zoo::llm_model);
    ADD_FAILURE() << "accepted a header without its columns";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing column"), std::string::npos) << e.what();
  }
  // A column named twice (the fuzzer's finding: rows then matched the shorter header).
  try {
    parse_nemo_table("id\t" + kHeader + kRow, "t.tsv", ".", zoo::llm_model);
    ADD_FAILURE() << "accepted a header with a column twice";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("appears twice"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace paraplan::io
