// The queue priority policy (queues/priority_policy.h): strict by default, every priority not
// granted as asked a note under --priority-fallback, and a driver's refusal lowered one step
// at a time.
#include "queues/priority_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuoverlap {
namespace {

constexpr auto normal = QueuePriority::normal;
constexpr auto high = QueuePriority::high;
constexpr auto realtime = QueuePriority::realtime;

// DIRECT on family 0, COMPUTE on family 1 (an H100's layout): each queue has its own family.
const std::vector<MappedQueue> kOwnFamilies = {{0, 0, -1}, {1, 0, -1}};

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(PriorityPolicy, EachFamilyGetsWhatItsQueueAsksFor) {
  auto plan =
      plan_priorities({{"direct", normal}, {"compute", high}}, kOwnFamilies, 3, true, "", false);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->family_priority, (std::vector<QueuePriority>{normal, high, normal}));
  EXPECT_TRUE(plan->requests_priority());
  EXPECT_EQ(plan->granted(kOwnFamilies), (std::vector<QueuePriority>{normal, high}));
  EXPECT_TRUE(plan->notes.empty());
}

TEST(PriorityPolicy, NothingAboveNormalRequestsNothing) {
  auto plan = plan_priorities({{"direct", normal}, {"compute", normal}}, kOwnFamilies, 2, false,
                              "no extension", false);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->requests_priority());
  EXPECT_TRUE(plan->notes.empty());
}

TEST(PriorityPolicy, ADeviceWithoutPrioritiesFailsStrictlyAndRunsAtNormalWithFallback) {
  const std::vector<PriorityAsk> asks = {{"direct", normal}, {"compute", realtime}};
  auto strict =
      plan_priorities(asks, kOwnFamilies, 2, false, "device 'x' has no priorities", false);
  ASSERT_FALSE(strict);
  EXPECT_TRUE(mentions(strict.error().message, "device 'x' has no priorities"));
  EXPECT_TRUE(mentions(strict.error().message, "--priority-fallback"));

  auto lenient =
      plan_priorities(asks, kOwnFamilies, 2, false, "device 'x' has no priorities", true);
  ASSERT_TRUE(lenient);
  EXPECT_FALSE(lenient->requests_priority());
  EXPECT_EQ(lenient->granted(kOwnFamilies), (std::vector<QueuePriority>{normal, normal}));
  ASSERT_EQ(lenient->notes.size(), 1u);  // one note for the device, none per queue
  EXPECT_TRUE(mentions(lenient->notes[0], "ran at normal"));
}

TEST(PriorityPolicy, TwoQueuesOfOneFamilyShareItsPriority) {
  // Two COMPUTE queues in family 1: one asks for high, the other for normal.
  const std::vector<MappedQueue> mapping = {{0, 0, -1}, {1, 0, -1}, {1, 1, -1}};
  const std::vector<PriorityAsk> asks = {{"direct", normal}, {"urgent", high}, {"bulk", normal}};
  auto strict = plan_priorities(asks, mapping, 2, true, "", false);
  ASSERT_FALSE(strict);
  EXPECT_TRUE(mentions(strict.error().message, "queue 'bulk' asked for normal"));
  EXPECT_TRUE(mentions(strict.error().message, "one global priority per family"));

  auto lenient = plan_priorities(asks, mapping, 2, true, "", true);
  ASSERT_TRUE(lenient);
  EXPECT_EQ(lenient->granted(mapping), (std::vector<QueuePriority>{normal, high, high}));
  ASSERT_EQ(lenient->notes.size(), 1u);
  EXPECT_TRUE(mentions(lenient->notes[0], "'bulk'"));
}

TEST(PriorityPolicy, AQueueSharingAnotherDeviceQueueHasNoSay) {
  // Too few queues: COMPUTE runs on DIRECT's device queue (lavapipe has one queue).
  const std::vector<MappedQueue> mapping = {{0, 0, -1}, {0, 0, 0}};
  const std::vector<PriorityAsk> asks = {{"direct", normal}, {"compute", high}};
  auto strict = plan_priorities(asks, mapping, 1, true, "", false);
  ASSERT_FALSE(strict);
  EXPECT_TRUE(mentions(strict.error().message, "has to share the device queue of 'direct'"));

  auto lenient = plan_priorities(asks, mapping, 1, true, "", true);
  ASSERT_TRUE(lenient);
  EXPECT_FALSE(lenient->requests_priority());  // the owner asked for normal
  EXPECT_EQ(lenient->granted(mapping), (std::vector<QueuePriority>{normal, normal}));
  ASSERT_EQ(lenient->notes.size(), 1u);
  EXPECT_TRUE(mentions(lenient->notes[0], "which runs at normal"));
}

TEST(PriorityPolicy, ARefusalIsLoweredOneStepAtATimeOnlyWithFallback) {
  const Error refusal{"needs CAP_SYS_NICE", -1000174001, "VK_ERROR_NOT_PERMITTED_KHR"};
  auto plan =
      plan_priorities({{"direct", normal}, {"compute", realtime}}, kOwnFamilies, 2, true, "", true);
  ASSERT_TRUE(plan);

  PriorityPlan strict = *plan;
  Status refused = lower_after_refusal(strict, refusal, false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().api_code_name, "VK_ERROR_NOT_PERMITTED_KHR");
  EXPECT_TRUE(mentions(refused.error().message, "refused queue priority realtime"));
  EXPECT_TRUE(mentions(refused.error().message, "needs CAP_SYS_NICE"));

  ASSERT_TRUE(lower_after_refusal(*plan, refusal, true));
  EXPECT_EQ(plan->granted(kOwnFamilies), (std::vector<QueuePriority>{normal, high}));
  ASSERT_TRUE(lower_after_refusal(*plan, refusal, true));
  EXPECT_EQ(plan->granted(kOwnFamilies), (std::vector<QueuePriority>{normal, normal}));
  EXPECT_EQ(plan->notes.size(), 2u);
  // Refused at normal: nothing is left to try, and the driver's code is kept.
  Status exhausted = lower_after_refusal(*plan, refusal, true);
  ASSERT_FALSE(exhausted);
  EXPECT_EQ(exhausted.error().api_code, -1000174001);
}

TEST(PriorityPolicy, AMappingThatDoesNotFitIsAnError) {
  EXPECT_FALSE(plan_priorities({{"direct", normal}}, kOwnFamilies, 2, true, "", false));
  EXPECT_FALSE(plan_priorities({{"direct", normal}}, {{5, 0, -1}}, 2, true, "", false));
}

}  // namespace
}  // namespace gpuoverlap
