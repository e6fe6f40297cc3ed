// The background threads' scheduling policies (core/thread_policy.h): each policy this OS has
// is applied by a thread to itself and read back from the OS as asked; a policy of the other
// OS is refused, naming what this one has.
#include "core/thread_policy.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <thread>

#include "core/host_info.h"

namespace gpuoverlap {
namespace {

// Applied on a thread of its own: a policy cannot be undone without a privilege.
std::pair<Status, ThreadScheduling> applied_on_a_new_thread(ThreadPolicy policy) {
  Status status = ok_status();
  ThreadScheduling seen;
  std::thread([&] {
    status = apply_to_this_thread(policy);
    seen = this_thread_scheduling();
  }).join();
  return {status, seen};
}

TEST(ThreadPolicy, EveryPolicyOfThisOsIsAppliedAndReadBack) {
  const ThreadScheduling creator = this_thread_scheduling();
  for (ThreadPolicy policy : thread_policies_here()) {
    SCOPED_TRACE(std::string(to_string(policy)));
    EXPECT_TRUE(available_here(policy));
    const auto [status, seen] = applied_on_a_new_thread(policy);
#if defined(_WIN32)
    // Background mode and EcoQoS are newer than what Wine implements: where the OS refuses
    // them, the refusal names the call (the run records it), and nothing else is asserted.
    if (!status && (policy == ThreadPolicy::background || policy == ThreadPolicy::eco)) {
      EXPECT_NE(status.error().message.find("SetThread"), std::string::npos)
          << status.error().message;
      continue;
    }
#endif
    ASSERT_TRUE(status) << status.error().message;
    switch (policy) {
#if defined(_WIN32)
      case ThreadPolicy::idle:
        EXPECT_EQ(seen.policy, "THREAD_PRIORITY_IDLE");
        break;
      case ThreadPolicy::background:  // what background mode reads back varies by version
      case ThreadPolicy::eco:         // a power state, not a priority
        EXPECT_FALSE(seen.policy.empty());
        break;
#else
      case ThreadPolicy::idle:
        EXPECT_EQ(seen.policy, "SCHED_IDLE");
        break;
      case ThreadPolicy::batch_nice19:
        EXPECT_EQ(seen.policy, "SCHED_BATCH");
        EXPECT_EQ(seen.level, 19);
        break;
      case ThreadPolicy::nice19:
        EXPECT_EQ(seen.policy, "SCHED_OTHER");
        EXPECT_EQ(seen.level, 19);
        break;
#endif
      case ThreadPolicy::normal:
        EXPECT_EQ(seen, creator) << describe(seen) << " against " << describe(creator);
        break;
      default:
        ADD_FAILURE() << "a policy of the other OS is listed here";
    }
  }
}

TEST(ThreadPolicy, APolicyOfTheOtherOsIsRefusedNamingThisOnesPolicies) {
#if defined(_WIN32)
  const ThreadPolicy other = ThreadPolicy::batch_nice19;
#else
  const ThreadPolicy other = ThreadPolicy::eco;
#endif
  EXPECT_FALSE(available_here(other));
  const auto [status, seen] = applied_on_a_new_thread(other);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().category, ErrorCategory::unsupported);
  EXPECT_NE(status.error().message.find("does not exist on"), std::string::npos);
  EXPECT_NE(status.error().message.find("idle"), std::string::npos) << status.error().message;
}

TEST(ThreadPolicy, NamesReadBothWays) {
  for (ThreadPolicy policy : {ThreadPolicy::idle, ThreadPolicy::batch_nice19, ThreadPolicy::nice19,
                              ThreadPolicy::background, ThreadPolicy::eco, ThreadPolicy::normal})
    EXPECT_EQ(parse_thread_policy(to_string(policy)), policy);
  EXPECT_FALSE(parse_thread_policy("fast"));
  EXPECT_EQ(to_string(ThreadPolicy::batch_nice19), "batch-nice19");
}

TEST(CustomSlice, AFairThreadsSliceReadsBackWhereTheKernelKeepsOneAndIsRefusedWhereNot) {
  const std::string& why = custom_slice_unsupported_reason();
  std::optional<std::uint64_t> before, set_to, after;
  std::string refused;
  std::thread t([&] {
    before = this_thread_slice_ns();
    const auto set = set_this_thread_slice_ns(500'000);
    if (set)
      set_to = *set;
    else
      refused = set.error().message;
    (void)set_this_thread_slice_ns(0);
    after = this_thread_slice_ns();
  });
  t.join();
  if (why.empty()) {
    // This kernel keeps a custom slice (EEVDF, Linux 6.12+): it reads back, and 0 restores the
    // default the thread had.
    EXPECT_EQ(set_to, 500'000u) << refused;
    EXPECT_EQ(after, before);
  } else {
    EXPECT_FALSE(set_to);
    EXPECT_FALSE(refused.empty());
  }
  // An idle-priority thread has no slice of its own to ask for.
  std::thread idle([&] {
    sched_param param{};
    ASSERT_EQ(pthread_setschedparam(pthread_self(), SCHED_IDLE, &param), 0);
    const auto set = set_this_thread_slice_ns(500'000);
    ASSERT_FALSE(set.ok());
    EXPECT_NE(set.error().message.find("fair thread"), std::string::npos) << set.error().message;
  });
  idle.join();
}

}  // namespace
}  // namespace gpuoverlap
