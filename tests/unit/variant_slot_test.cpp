// The lifetime pattern of background compile results (background/variant_slot.h).
#include "background/variant_slot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "background/background_processor.h"

namespace gpuoverlap::background {
namespace {

TEST(VariantSlot, DeliversWhileAliveAndHandsResultsBackAfterDestruction) {
  std::shared_ptr<BackPointer<int>> back;
  {
    VariantSlot<int> slot;
    back = slot.back_pointer();
    EXPECT_TRUE(back->alive());
    EXPECT_FALSE(back->deliver(7).has_value());
    EXPECT_EQ(slot.take(), std::vector<int>{7});
    EXPECT_TRUE(slot.take().empty());
  }
  EXPECT_FALSE(back->alive());
  const auto returned = back->deliver(8);
  ASSERT_TRUE(returned.has_value()) << "the result comes back to be disposed of";
  EXPECT_EQ(*returned, 8);
}

// Compile tasks on the processor's threads finish while their pipelines are destroyed on
// other threads: every result is either attached to a live pipeline or handed back, never
// lost and never delivered twice (TSan checks the pattern has no race).
TEST(VariantSlot, PipelinesDestroyedMidCompileDropResultsSafely) {
  constexpr int kPipelines = 64;
  constexpr int kTasksPerPipeline = 8;
  std::atomic<int> attached{0}, handed_back{0}, cancelled{0};
  ProcessorSettings settings;
  settings.max_concurrent = 4;
  settings.high_priority_threads = 2;
  BackgroundProcessor processor(settings);
  std::vector<std::unique_ptr<VariantSlot<int>>> pipelines(kPipelines);
  for (auto& p : pipelines) p = std::make_unique<VariantSlot<int>>();
  for (int p = 0; p < kPipelines; ++p)
    for (int t = 0; t < kTasksPerPipeline; ++t) {
      auto back = pipelines[p]->back_pointer();  // the task's only link to its pipeline
      processor.queue({"compile",
                       [back, &handed_back, t] {
                         std::this_thread::yield();
                         if (back->deliver(t)) ++handed_back;
                       },
                       [&cancelled] { ++cancelled; }});
    }
  // Destroy every other pipeline while the tasks run, taking what was delivered first.
  for (int p = 0; p < kPipelines; p += 2) {
    attached += static_cast<int>(pipelines[p]->take().size());
    pipelines[p].reset();
  }
  ASSERT_TRUE(processor.wait_idle_ms(20'000));
  for (auto& p : pipelines)
    if (p) attached += static_cast<int>(p->take().size());
  EXPECT_EQ(attached + handed_back + cancelled, kPipelines * kTasksPerPipeline);
  EXPECT_EQ(cancelled, 0);
}

}  // namespace
}  // namespace gpuoverlap::background
