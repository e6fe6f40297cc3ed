// The before/after comparison of a bound variant (analysis/variant_swap.h), on made-up frames.
#include "analysis/variant_swap.h"

#include <gtest/gtest.h>

namespace gpuoverlap {
namespace {

// `before` frames at `before_us`, then `after` frames running variant 9 at `after_us`; frames
// wobble by a few tenths of a percent, in runs of ten, so block medians have a spread.
std::vector<SwapSample> frames(std::uint32_t before, double before_us, std::uint32_t after,
                               double after_us) {
  std::vector<SwapSample> out;
  for (std::uint32_t f = 0; f < before + after; ++f) {
    const double wobble = 1.0 + 0.002 * static_cast<double>(static_cast<int>(f / 10 % 3) - 1) +
                          0.001 * static_cast<double>(static_cast<int>(f % 5) - 2);
    out.push_back({f, f < before ? 0u : 9u, (f < before ? before_us : after_us) * wobble});
  }
  return out;
}

TEST(VariantSwap, AFasterVariantIsCalledFasterWithAnIntervalAroundItsRatio) {
  const auto swap = judge_swap("A", Clock::ts, frames(60, 100.0, 60, 97.0));
  ASSERT_TRUE(swap.has_value());
  EXPECT_EQ(swap->variant, 9u);
  EXPECT_EQ(swap->before_frames, 60u);
  EXPECT_EQ(swap->after_frames, 60u);
  EXPECT_NEAR(swap->ratio, 0.97, 0.002);
  ASSERT_TRUE(swap->ratio_low && swap->ratio_high);
  EXPECT_LE(*swap->ratio_low, swap->ratio);
  EXPECT_GE(*swap->ratio_high, swap->ratio);
  EXPECT_LT(*swap->ratio_high, 1.0);
  EXPECT_EQ(swap->call, SwapCall::faster);
  EXPECT_EQ(judge_swap("A", Clock::ts, frames(60, 100.0, 60, 104.0))->call, SwapCall::slower);
}

TEST(VariantSwap, TheSameDurationsOnBothSidesAreNoDifference) {
  // Block medians that alternate, so the interval has width and straddles 1.
  std::vector<SwapSample> samples;
  for (std::uint32_t f = 0; f < 120; ++f)
    samples.push_back({f, f < 60 ? 0u : 9u, (f / 10) % 2 ? 101.0 : 99.0});
  const auto swap = judge_swap("A", Clock::poll, samples);
  ASSERT_TRUE(swap.has_value());
  ASSERT_TRUE(swap->ratio_low.has_value());
  EXPECT_LT(*swap->ratio_low, 1.0);
  EXPECT_GT(*swap->ratio_high, 1.0);
  EXPECT_EQ(swap->call, SwapCall::no_difference);
}

TEST(VariantSwap, NoSwapNoSideOrTooFewFramesAreSaidNotGuessed) {
  EXPECT_FALSE(judge_swap("A", Clock::ts, frames(10, 100.0, 0, 0.0)).has_value());  // never swapped
  EXPECT_FALSE(judge_swap("A", Clock::ts, frames(0, 0.0, 10, 90.0)).has_value());   // no before
  const auto few = judge_swap("A", Clock::ts, frames(3, 100.0, 3, 90.0));
  ASSERT_TRUE(few.has_value());
  EXPECT_FALSE(few->ratio_low.has_value());
  EXPECT_EQ(few->call, SwapCall::too_few_frames);
  EXPECT_NEAR(few->ratio, 0.9, 0.01);
}

TEST(VariantSwap, AfterMeansTheLastVariantBoundAndBeforeTheFramesAheadOfTheFirstSwap) {
  // Build-time, then variant 4 for a while, then variant 9: the after side is variant 9 only.
  std::vector<SwapSample> samples;
  for (std::uint32_t f = 0; f < 30; ++f)
    samples.push_back({f, f < 10 ? 0u : f < 20 ? 4u : 9u, f < 10 ? 100.0 : f < 20 ? 50.0 : 80.0});
  const auto swap = judge_swap("A", Clock::ts, samples);
  ASSERT_TRUE(swap.has_value());
  EXPECT_EQ(swap->variant, 9u);
  EXPECT_EQ(swap->before_frames, 10u);
  EXPECT_EQ(swap->after_frames, 10u);
  EXPECT_DOUBLE_EQ(swap->ratio, 0.8);
}

}  // namespace
}  // namespace gpuoverlap
