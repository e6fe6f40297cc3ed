// Where the runtime's compile threads run and what they keep: CPU lists, placements resolved
// against a frame's CPUs and the machine's SMT groups, glibc's kept memory, the idle cgroup.
#include <gtest/gtest.h>

#include <thread>

#include "background/background_spec.h"
#include "core/cgroup_idle.h"
#include "core/cpu_affinity.h"
#include "core/kept_memory.h"

namespace gpuoverlap::background {
namespace {

TEST(CpuList, ReadsRangesAndRefusesWhatIsNotIncreasingOrWellFormed) {
  EXPECT_EQ(parse_cpus("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpus("5"), std::vector<int>{5});
  EXPECT_EQ(describe_cpus(*parse_cpus("0-3,8,10-11")), "0-3,8,10-11");
  for (const char* bad : {"", "3-1", "1,1", "2,1", "0-", "-1", "1,", ",1", "a", "1 ,2", "4096"})
    EXPECT_FALSE(parse_cpus(bad).has_value()) << "'" << bad << "'";
}

TEST(CpuPlacement, ReservedTakesTheFramesLastCpusAndLeavesItTwo) {
  const std::vector<int> frame = {1, 2, 3, 4, 5};
  CpuPlacement two{CpuPlacementKind::reserved, 2, {}};
  auto placed = resolve_placement(two, frame, {});
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  EXPECT_EQ(placed->background_cpus, (std::vector<int>{4, 5}));
  EXPECT_EQ(placed->foreground_off, (std::vector<int>{4, 5}));
  CpuPlacement four{CpuPlacementKind::reserved, 4, {}};
  auto refused = resolve_placement(four, frame, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("needs at least 6 CPUs"), std::string::npos)
      << refused.error().message;
}

TEST(CpuPlacement, SiblingsGiveTheSecondThreadOfEachCoreAndNeedSmt) {
  const std::vector<int> frame = {1, 2, 3, 9, 10, 11};
  // Cores {1,9}, {2,10}, {3,11}; and {0,8}, whose first thread the frame may not use.
  const std::vector<std::vector<int>> smt = {{0, 8}, {1, 9}, {2, 10}, {3, 11}};
  auto placed = resolve_placement({CpuPlacementKind::siblings, 0, {}}, frame, smt);
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  EXPECT_EQ(placed->background_cpus, (std::vector<int>{9, 10, 11}));
  EXPECT_EQ(placed->foreground_off, placed->background_cpus);
  auto alone = resolve_placement({CpuPlacementKind::siblings, 0, {}}, frame,
                                 {{1}, {2}, {3}, {9}, {10}, {11}});
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.error().message.find("shows a second hardware thread"), std::string::npos);
}

TEST(CpuPlacement, AListIsTheBackgroundsAndTheForegroundKeepsItsOwn) {
  auto placed = resolve_placement({CpuPlacementKind::list, 0, {0, 1}}, {0, 1, 2, 3}, {});
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(placed->background_cpus, (std::vector<int>{0, 1}));
  EXPECT_TRUE(placed->foreground_off.empty());
  auto any = resolve_placement({}, {0, 1, 2, 3}, {});
  ASSERT_TRUE(any.ok());
  EXPECT_TRUE(any->background_cpus.empty());
  EXPECT_TRUE(any->foreground_off.empty());
}

// Every usable CPU is in exactly one SMT group, or the platform said nothing.
TEST(CpuPlacement, SmtGroupsCoverEveryUsableCpuOnce) {
  const std::vector<int> usable = usable_cpu_ids();
  const auto groups = smt_groups(usable);
#if defined(_WIN32)
  EXPECT_TRUE(groups.empty());
#else
  ASSERT_FALSE(groups.empty()) << smt_groups_source();
  std::vector<int> seen;
  for (const auto& g : groups) seen.insert(seen.end(), g.begin(), g.end());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, usable);
#endif
}

TEST(KeptMemory, HoldsNestAndTheLastGivesTheThresholdsBack) {
  if (const std::string why = kept_memory_unsupported_reason(); !why.empty()) {
    // Not glibc's malloc (Windows, a sanitizer's runtime): refused, saying why, and a study
    // reports the condition as not run.
    auto refused = KeptMemory::hold();
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find(why), std::string::npos) << refused.error().message;
    EXPECT_EQ(kept_memory_state(), "not glibc's malloc");
    BackgroundSpec spec;
    spec.allocator = Allocator::keep;
    const auto not_here = why_not_here(spec);
    ASSERT_TRUE(not_here.has_value());
    EXPECT_NE(not_here->find(why), std::string::npos) << *not_here;
    return;
  }
  {
    auto outer = KeptMemory::hold();
    ASSERT_TRUE(outer.ok()) << outer.error().message;
    auto inner = KeptMemory::hold();
    ASSERT_TRUE(inner.ok());
    EXPECT_EQ(kept_memory_state(), "kept (mmap 32 MiB, trim 1 GiB)");
    inner->reset();
    EXPECT_EQ(kept_memory_state(), "kept (mmap 32 MiB, trim 1 GiB)") << "the outer still holds";
  }
  EXPECT_EQ(kept_memory_state(), "glibc defaults, fixed (mmap 128 KiB, trim 128 KiB)");
}

// Where this process may create an idle cgroup, a thread joins it and reads its path back;
// where it may not (no cgroup v2 cpu controller, no delegation, Windows), the refusal names the
// step, and why_not_here reports it so a study leaves the condition out.
TEST(IdleCgroup, AThreadJoinsAndReadsItBackOrTheRefusalSaysWhy) {
  auto group = IdleCgroup::create();
  BackgroundSpec spec;
  spec.cgroup_idle = true;
  if (!group) {
    const std::string why = group.error().message;
    EXPECT_FALSE(why.empty());
    const auto not_here = why_not_here(spec);
    ASSERT_TRUE(not_here.has_value());
    EXPECT_NE(not_here->find("cgroup_idle: "), std::string::npos) << *not_here;
    GTEST_LOG_(INFO) << "no idle cgroup on this host: " << why;
    return;
  }
  std::optional<std::string> read_back;
  Status joined = ok_status();
  std::thread t([&] {
    joined = (*group)->join_this_thread();
    read_back = this_thread_cgroup();
  });
  t.join();
  ASSERT_TRUE(joined.ok()) << joined.error().message;
  ASSERT_TRUE(read_back.has_value());
  EXPECT_EQ(*read_back, (*group)->relative_path());
  EXPECT_NE(this_thread_cgroup(), read_back) << "only the thread that joined moved";
}

}  // namespace
}  // namespace gpuoverlap::background
