// Units and layouts as users type them.
#include "ir/units.h"

#include <gtest/gtest.h>

#include "ir/cluster.h"

namespace paraplan {
namespace {

TEST(Units, BytesAndBandwidths) {
  EXPECT_EQ(parse_bytes("8GiB"), 8589934592.0);
  EXPECT_EQ(parse_bytes("8 GiB"), 8589934592.0);
  EXPECT_EQ(parse_bytes("80GB"), 8e10);
  EXPECT_EQ(parse_bytes("512MiB"), 536870912.0);
  EXPECT_EQ(parse_bytes("1e9"), 1e9);
  EXPECT_EQ(parse_bandwidth("25GiB/s"), 26843545600.0);
  EXPECT_EQ(parse_bandwidth("25GB/s"), 25e9);
  EXPECT_FALSE(parse_bytes("lots"));
  EXPECT_FALSE(parse_bytes("-1GB"));
  EXPECT_FALSE(parse_bytes("nan"));
  EXPECT_FALSE(parse_bytes("inf"));
  EXPECT_FALSE(parse_bytes("GiB"));
  EXPECT_FALSE(parse_bandwidth("3 parsecs"));
}

TEST(Units, ComputeRatesNeedTheirUnit) {
  EXPECT_EQ(parse_flops("10TFLOP/s"), 10e12);
  EXPECT_EQ(parse_flops("312 TFLOP/s"), 312e12);
  EXPECT_EQ(parse_flops("1.5PFLOP/s"), 1.5e15);
  EXPECT_EQ(parse_flops("1e13FLOP/s"), 1e13);
  for (const char* bad : {"10", "TFLOP/s", "-1TFLOP/s", "10TB/s", "fast"})
    EXPECT_FALSE(parse_flops(bad)) << bad;
}

TEST(Units, MachineLayouts) {
  EXPECT_EQ(parse_machine_sizes("2x8"), (std::vector<int>{8, 8}));
  EXPECT_EQ(parse_machine_sizes("4,8,4"), (std::vector<int>{4, 8, 4}));
  EXPECT_EQ(machine_ends({4, 8, 4}), (std::vector<int>{4, 12, 16}));
  EXPECT_EQ(parse_machine_sizes("16x1")->size(), 16u);
  for (const char* bad : {"", "0x8", "2x0", "2y8", "x8", "4,,4", "4,-1", "1000x1000", "2x8x2"})
    EXPECT_FALSE(parse_machine_sizes(bad)) << bad;
}

}  // namespace
}  // namespace paraplan
