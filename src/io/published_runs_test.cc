#include "io/published_runs.h"

#include <gtest/gtest.h>

#include <functional>

#include "ir/error.h"

namespace paraplan::io {
namespace {

void expect_published_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(PublishedRuns, ShippedFileReads) {
  const auto runs = read_published_runs(std::string(PARAPLAN_DATA) + "/moe/published_moe.json");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].model_name, "mixtral-8x7b");
  EXPECT_FALSE(runs[0].model.has_value());
  EXPECT_EQ(runs[0].config.devices(), 64);
  EXPECT_EQ(runs[0].config.vpp, 8);
  ASSERT_TRUE(runs[1].model.has_value());
  EXPECT_EQ(runs[1].model->name, "Qwen/Qwen3-30B-A3B");
  EXPECT_TRUE(runs[1].model->gated_mlp);                      // qwen3_moe: SwiGLU experts
  EXPECT_NEAR(runs[1].model->parameters() / 1e9, 30.5, 0.1);  // Qwen3-30B-A3B
  EXPECT_NEAR(runs[1].model->active_parameters() / 1e9, 3.3, 0.1);
  EXPECT_EQ(runs[1].config.moe_capacity_factor, 1);
  EXPECT_FALSE(runs[1].config.fp32_loss);
  EXPECT_EQ(runs[1].tokens_per_s_per_device, 12040);
}

Json one_run() {
  return Json::parse(R"({"format": "paraplan-published-runs", "version": 1, "runs": [
    {"name": "n", "source": "s", "url": "u", "model": "mixtral-8x7b", "cluster": "dgx-h100",
     "config": {"global_batch": 8, "micro_batch": 1, "seq_len": 4096, "tp": 1, "cp": 1, "pp": 1,
                "dp": 8, "ep": 8, "vpp": 1, "recompute": "none", "sequence_parallel": false,
                "zero": 1, "overlap_grad_reduce": false, "attention": "flash", "stage_layers": []},
     "tokens_per_s_per_device": 1000}]})");
}

TEST(PublishedRuns, BadEntriesNameTheirField) {
  EXPECT_NO_THROW(published_runs_from_json(one_run(), "p.json"));
  Json j = one_run();
  j["runs"][0]["hf_config"] = Json::object();
  expect_published_error([&] { published_runs_from_json(j, "p.json"); }, "p.json: /runs/0/model");
  j = one_run();
  j["runs"][0].erase("model");
  expect_published_error([&] { published_runs_from_json(j, "p.json"); }, "either \"model\"");
  j = one_run();
  j["runs"][0]["tokens_per_s_per_device"] = 0;
  expect_published_error([&] { published_runs_from_json(j, "p.json"); },
                         "/runs/0/tokens_per_s_per_device");
  j = one_run();
  j["runs"][0]["config"]["moe_capacity_factor"] = 0.5;
  expect_published_error([&] { published_runs_from_json(j, "p.json"); },
                         "/runs/0/config/moe_capacity_factor");
  j = one_run();
  j["version"] = 2;
  expect_published_error([&] { published_runs_from_json(j, "p.json"); }, "/version");
  j = one_run();
  j["runs"][0]["tflops"] = 1;
  expect_published_error([&] { published_runs_from_json(j, "p.json"); }, "tflops");
}

}  // namespace
}  // namespace paraplan::io
