#include <gtest/gtest.h>

#include "timeline/clock_conversion.h"
#include "timeline/statistics.h"

namespace gpuoverlap {
namespace {

TEST(ClockConversion, TicksAfterAndBeforeTheCalibrationPoint) {
  GpuCalibration c;
  c.gpu_ticks = 1'000'000;
  c.cpu_ns = 5'000'000'000;
  c.tick_period_ns = 1.0;
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, 1'000'500), 5'000'000'500);
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, 999'000), 4'999'999'000);
}

TEST(ClockConversion, AppliesTheTickPeriod) {
  GpuCalibration c;
  c.gpu_ticks = 100;
  c.cpu_ns = 0;
  c.tick_period_ns = 52.08;  // e.g. a 19.2 MHz counter
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, 200), 5208);
}

TEST(ClockConversion, UnwrapsACounterWithFewValidBits) {
  GpuCalibration c;
  c.valid_bits = 36;
  c.gpu_ticks = (std::uint64_t{1} << 36) - 10;  // just before the wrap
  c.cpu_ns = 1'000;
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, 5), 1'015);  // 15 ticks later, after the wrap
  // High garbage bits above the valid ones are ignored.
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, (std::uint64_t{7} << 40) | 5), 1'015);
  c.gpu_ticks = 5;
  EXPECT_EQ(gpu_ticks_to_cpu_ns(c, (std::uint64_t{1} << 36) - 10), 985);  // before, across the wrap
}

TEST(ClockConversion, MicrosecondsSinceTheGate) {
  EXPECT_DOUBLE_EQ(ns_to_us_since(1'002'500, 1'000'000), 2.5);
  EXPECT_DOUBLE_EQ(ns_to_us_since(999'000, 1'000'000), -1.0);
}

TEST(Statistics, PercentilesInterpolateLikeNumpy) {
  EXPECT_FALSE(percentile({}, 50).has_value());
  EXPECT_DOUBLE_EQ(*percentile({7}, 95), 7.0);
  EXPECT_DOUBLE_EQ(*percentile({4, 1, 3, 2}, 50), 2.5);
  // numpy.percentile([1..10], 5) == 1.45, 95 -> 9.55
  std::vector<double> ten = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_NEAR(*percentile(ten, 5), 1.45, 1e-12);
  EXPECT_NEAR(*percentile(ten, 95), 9.55, 1e-12);
  EXPECT_DOUBLE_EQ(*percentile(ten, 0), 1.0);
  EXPECT_DOUBLE_EQ(*percentile(ten, 100), 10.0);
}

}  // namespace
}  // namespace gpuoverlap
