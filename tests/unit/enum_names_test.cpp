// The enum-name tables of the model (core/enum_names.h): every value is named once, names are
// distinct, and each name parses back to its value through the model's own functions.
#include "core/enum_names.h"

#include <gtest/gtest.h>

#include <set>

#include "analysis/decision.h"
#include "analysis/results.h"
#include "background/background_processor.h"
#include "background/background_spec.h"
#include "barriers/barrier_model.h"
#include "queues/queue_model.h"
#include "scenarios/preemption_spec.h"
#include "schedtrace/thread_waits.h"
#include "timeline/records.h"
#include "workloads/workload.h"

namespace gpuoverlap {
namespace {

// `last` is the enum's last value: with values 0..last, the table must have last + 1 entries.
template <typename Enum, std::size_t N>
void expect_complete_and_distinct(const EnumNames<Enum, N>& table, Enum last) {
  EXPECT_EQ(N, static_cast<std::size_t>(last) + 1);
  std::set<int> values;
  std::set<std::string_view> names;
  for (const auto& entry : table) {
    values.insert(static_cast<int>(entry.value));
    names.insert(entry.name);
    EXPECT_FALSE(entry.name.empty());
    EXPECT_EQ(value_of(table, entry.name), entry.value) << entry.name;
    EXPECT_EQ(name_of(table, entry.value), entry.name);
  }
  EXPECT_EQ(values.size(), N);
  EXPECT_EQ(names.size(), N);
  EXPECT_FALSE(value_of(table, "no-such-name").has_value());
}

TEST(EnumNames, EveryTableOfTheModelIsCompleteAndDistinct) {
  expect_complete_and_distinct(kWorkloadKindNames, WorkloadKind::copy);
  expect_complete_and_distinct(kQueueTypeNames, QueueType::compute);
  expect_complete_and_distinct(kQueuePriorityNames, QueuePriority::realtime);
  expect_complete_and_distinct(kBarrierKindNames, BarrierKind::enhanced_split);
  expect_complete_and_distinct(kSplitPolicyNames, SplitPolicy::collapsed);
  expect_complete_and_distinct(preemption::kLoadKindNames,
                               preemption::LoadKind::graphics_and_compute);
  expect_complete_and_distinct(preemption::kProcessModeNames, preemption::ProcessMode::separate);
  expect_complete_and_distinct(background::kWorkflowNames,
                               background::Workflow::single_frame_analysis);
  expect_complete_and_distinct(background::kProcessingModeNames,
                               background::ProcessingMode::disable_profiling_by_system);
  expect_complete_and_distinct(background::kMeasurementsActionNames,
                               background::MeasurementsAction::discard_previous);
  expect_complete_and_distinct(kRecordStatusNames, RecordStatus::gpu_error);
  expect_complete_and_distinct(kClockNames, Clock::clk);
  expect_complete_and_distinct(kDecisionNames, Decision::diagnostic_unclear);
  expect_complete_and_distinct(kThreadKindNames, ThreadKind::idle);
  expect_complete_and_distinct(kLostByNames, LostBy::blocked);
  expect_complete_and_distinct(kGivenBackByNames, GivenBackBy::woke_preempting);
}

TEST(EnumNames, TheModelsFunctionsReadTheTables) {
  EXPECT_EQ(to_string(BarrierKind::enhanced_split), "enhanced-split");
  EXPECT_EQ(parse_barrier_kind("enhanced-split"), BarrierKind::enhanced_split);
  EXPECT_EQ(preemption::parse_load_kind("many-draws"), preemption::LoadKind::many_draws);
  EXPECT_EQ(to_string(RecordStatus::device_lost), "device_lost");
  EXPECT_EQ(names_list(kQueuePriorityNames), "normal | high | realtime");
}

// The one loader of a verdict's decisions: the files' text in, a Decision out, and nothing else
// taken for one (a reader never matches the words itself).
TEST(EnumNames, DecisionsAreReadFromTheFilesTextOnce) {
  for (const auto& [decision, text] : kDecisionNames) {
    EXPECT_EQ(parse_decision(text), decision) << text;
    EXPECT_EQ(to_string(decision), text);
  }
  EXPECT_EQ(parse_decision("inconclusive (no power)"), Decision::no_power);
  EXPECT_FALSE(parse_decision("Intrusive"));
  EXPECT_FALSE(parse_decision("inconclusive (something new)")) << "no prefix matching";
  EXPECT_FALSE(parse_decision(""));
  EXPECT_EQ(decision_of(nlohmann::json{{"verdict", "non-intrusive"}}), Decision::non_intrusive);
  EXPECT_FALSE(decision_of(nlohmann::json{{"verdict", 2}}));
  EXPECT_FALSE(decision_of(nlohmann::json::array({"intrusive"})));
  EXPECT_FALSE(decision_of(nlohmann::json{{"condition", "managed"}}));
  EXPECT_TRUE(is_inconclusive(Decision::no_power));
  EXPECT_FALSE(is_primary_decision(Decision::diagnostic_worse));
}

}  // namespace
}  // namespace gpuoverlap
