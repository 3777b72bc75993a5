// The error bands every answer carries (ir/knobs.h) are what `paraplan validate` measures: each
// stack's time band its validation set's mean error, the peak band the single-GPU runs' peak
// error (both sets pooled), to the tenth of a percent the answers print.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "cli/cli_test_support.h"
#include "ir/knobs.h"

namespace paraplan::cli {
namespace {

using testing_support::run;

constexpr double kTenth = 0.0005 + 1e-12;  // printed to the tenth of a percent, half up

double percent(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return -1;
  return std::stod(m[1]) / 100;
}

TEST(Bands, AreWhatValidateMeasures) {
  const auto r = run("validate --summary");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const double nemo = percent(
      r.out,
      R"(NeMo / Megatron-Core on H100: \d+ runs, mean absolute percentage error ([0-9.]+)%)");
  const double single = percent(
      r.out,
      R"(plain PyTorch on one GPU, all sets: \d+ runs, time mean absolute percentage error ([0-9.]+)%)");
  const double peak =
      percent(r.out, R"(one GPU, all sets: .*peak against the allocator's ([0-9.]+)%)");
  const double peak_largest = percent(
      r.out, R"(one GPU, all sets: .*peak against the allocator's [0-9.]+%, largest ([0-9.]+)%)");
  const double vtrain =
      percent(r.out, R"(vTrain multi-node: +\d+ runs, mean absolute percentage error ([0-9.]+)%)");
  EXPECT_NEAR(kTimeBandMegatron, nemo, kTenth) << r.out;
  EXPECT_NEAR(kTimeBandFsdp, single, kTenth) << r.out;
  EXPECT_NEAR(kTimeBandDeepSpeed, vtrain, kTenth) << r.out;
  EXPECT_NEAR(kPeakBand, peak, kTenth) << r.out;
  EXPECT_NEAR(kPeakBandLargest, peak_largest, kTenth) << r.out;
}

}  // namespace
}  // namespace paraplan::cli
