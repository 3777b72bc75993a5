// The single-GPU runs: the shipped lines, and bad lines named by file, line and field.
#include "io/single_gpu_runs.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace paraplan::io {
namespace {

const std::string kFolder = std::string(PARAPLAN_DATA) + "/h100-single-gpu";

TEST(SingleGpuRuns, ReadsTheShippedRunsAndTheirModels) {
  const auto runs = read_single_gpu_runs(kFolder);
  ASSERT_EQ(runs.size(), 17u);
  const SingleGpuRun& r = runs[2];  // Qwen2.5 0.5B, micro-batch 8: out of memory
  EXPECT_EQ(r.model_name, "qwen2.5-0.5b");
  EXPECT_EQ(r.model.hidden_size, 896);
  EXPECT_EQ(r.model.num_kv_heads, 2);
  EXPECT_FALSE(r.ran);
  EXPECT_EQ(r.micro_batch, 8);
  EXPECT_EQ(r.place, kFolder + "/results.jsonl:3");
  EXPECT_TRUE(runs[8].ran);
  EXPECT_EQ(runs[8].recompute, Recompute::kFull);
  EXPECT_NEAR(runs[0].iteration_time_s, 0.9277, 1e-4);
  EXPECT_NEAR(runs[0].peak_reserved_bytes / 1073741824.0, 34.18, 0.01);
}

void expect_bad_single_gpu(const std::string& line, const std::string& needle) {
  try {
    parse_single_gpu_runs(line, "r.jsonl", kFolder);
    ADD_FAILURE() << "accepted: " << line;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(SingleGpuRuns, BadLinesAreNamed) {
  const std::string ok =
      R"("seq": 2048, "batch": 16, "micro_batch": 4, "recompute": "none", "ok": true, )"
      R"("iter_s": 0.5, "peak_allocated_gib": 40, "peak_reserved_gib": 41)";
  expect_bad_single_gpu(R"({"model": "llama-3.2-1b", )" + ok + "}\n{", "r.jsonl:2");
  expect_bad_single_gpu(R"({"model": "no-such-model", )" + ok + "}", "no-such-model");
  expect_bad_single_gpu(R"({"model": "../x", )" + ok + "}", "configs/");
  expect_bad_single_gpu(R"({"model": "llama-3.2-1b", "seq": 2048, "batch": 16, "micro_batch": 3, )"
                        R"("recompute": "none", "ok": true, "iter_s": 1, "peak_allocated_gib": 1, )"
                        R"("peak_reserved_gib": 1})",
                        "does not divide the batch of 16");
  expect_bad_single_gpu(R"({"model": "llama-3.2-1b", "seq": 2048, "batch": 16, "micro_batch": 4, )"
                        R"("recompute": "some", "ok": true, "iter_s": 1, "peak_allocated_gib": 1, )"
                        R"("peak_reserved_gib": 1})",
                        "must be none or full");
  expect_bad_single_gpu(R"({"model": "llama-3.2-1b", "seq": 2048, "batch": 16, "micro_batch": 4, )"
                        R"("recompute": "none", "ok": false, "peak_allocated_gib": 1, )"
                        R"("peak_reserved_gib": 1})",
                        "\"oom\": true");
  expect_bad_single_gpu("[1]", "one JSON object a line");
  expect_bad_single_gpu("", "no runs");
}

}  // namespace
}  // namespace paraplan::io
