// The analytic model against the measured vTrain runs, and the reader's handling of bad rows.
#include "validate/vtrain.h"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>

#include "io/calibration_file.h"
#include "io/mpt_reader.h"
#include "ir/error.h"

namespace paraplan::validate {
namespace {

double mape(const std::string& file) {
  auto runs = io::read_vtrain_csv(std::string(PARAPLAN_DATA) + "/vtrain/" + file);
  return mean_absolute_percentage_error(score_runs(runs));
}

TEST(Validate, MeetsTheAccuracyTargetsOnMeasuredRuns) {
  EXPECT_LE(mape("ground_truth_multi.csv"), 8.0);    // 109 runs on 64-512 A100
  EXPECT_LE(mape("ground_truth_single.csv"), 10.0);  // 1,440 single-node runs
}

TEST(Validate, RankingsCoverEveryMultiNodeModel) {
  auto runs = io::read_vtrain_csv(std::string(PARAPLAN_DATA) + "/vtrain/ground_truth_multi.csv");
  auto scored = score_runs(runs);
  auto r = rankings(scored);
  ASSERT_EQ(r.size(), 4u);  // GPT 3.6B, 18.4B, 39.1B, 175B
  int configurations = 0;
  for (const auto& x : r) {
    configurations += x.configurations;
    // The first-ranked is the fastest predicted of its group, the best the fastest measured.
    for (const auto& row : scored) {
      const auto& key = x.picked->run;
      if (row.run.hidden != key.hidden || row.run.layers != key.layers ||
          row.run.gpus != key.gpus || row.run.global_batch != key.global_batch)
        continue;
      EXPECT_LE(x.picked->predicted_s, row.predicted_s) << row.run.line;
      EXPECT_LE(x.best->run.iteration_time_s, row.run.iteration_time_s) << row.run.line;
    }
  }
  EXPECT_EQ(configurations, 109);
  // The first-ranked configuration is within 2 % of the measured best for 3.6B, 39.1B and
  // 175B; 18.4B is the documented gap (docs/cost-models.md).
  int within = 0;
  for (const auto& x : r) within += x.slowdown() <= 0.02;
  EXPECT_GE(within, 3);
}

TEST(Validate, MalformedRowsNameTheLine) {
  std::string path = testing::TempDir() + "vtrain_bad.csv";
  std::ofstream(path) << "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,"
                         "sequence length,tensor parallelism,data parallelism,pipeline parallelism,"
                         "iteration time (ms)\n2,16,8,1024,16,24,1024,1,1,2,372.1\n"
                         "2,16,x,1024,16,24,1024,1,1,2,372.1\n";
  try {
    io::read_vtrain_csv(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find(":3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("micro batch"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace paraplan::validate

namespace paraplan::validate {
namespace {

// The calibration files shipped in data/calibration hold exactly the compiled-in defaults.
TEST(Calibration, ShippedFilesEqualTheDefaults) {
  for (const char* device : {"A100", "H100", "H200", "B200", "GB200"}) {
    std::string file = device;
    for (char& ch : file) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const Calibration shipped =
        io::read_calibration_file(std::string(PARAPLAN_CALIBRATION_DIR) + "/" + file + ".json");
    EXPECT_EQ(io::calibration_to_json(shipped),
              io::calibration_to_json(default_calibration(device)))
        << device;
  }
}

}  // namespace
}  // namespace paraplan::validate

namespace paraplan::validate {
namespace {

// The flash-era FSDP runs (data/mpt): the same A100 calibration prices them within the target,
// and says every one of them, which all ran, fits its GPU.
TEST(Validate, MptRunsMeetTheTargetAndFit) {
  const auto table = io::read_mpt_table(std::string(PARAPLAN_DATA) + "/mpt/mpt_a100.tsv");
  const auto rows = score_runs(table.runs);
  ASSERT_EQ(rows.size(), 139u);
  EXPECT_LE(mean_absolute_percentage_error(rows), 8.0);
  for (const auto& r : rows) {
    EXPECT_TRUE(r.fits) << "line " << r.run.line << ": " << r.predicted_peak_bytes / (1 << 30)
                        << " GiB";
    // Composer halves an automatic micro-batch until it fits: a run above one sequence filled a
    // good part of its GPU (one sequence is as small as it gets, full or not).
    if (r.run.micro_batch > 1) {
      EXPECT_GT(r.predicted_peak_bytes, 0.3 * r.run.device_memory_bytes) << "line " << r.run.line;
    }
  }
}

}  // namespace
}  // namespace paraplan::validate
