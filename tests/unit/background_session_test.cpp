// The task source and its session (background/background_session.h), with real shaderc
// compiles and a fake pipeline builder: no GPU. Waits have 20 s deadlines; nothing asserts a
// duration. Only the first test runs its compiles at SCHED_IDLE, as the runtime does: the
// others test the session's logic at normal priority (kLogicOnly), because while other tests
// keep both cores of a CI machine busy an idle thread can get no CPU for a minute.
#include "background/background_session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace gpuoverlap::background {
namespace {

constexpr bool kLogicOnly = false;  // BackgroundSession's idle_priority

constexpr auto kDeadline = std::chrono::seconds(20);

// Counts builds and disposals; handles are 1, 2, 3, ...
struct FakeBuilder {
  std::atomic<std::uint64_t> built{0};
  std::mutex mutex;
  std::vector<PipelineHandle> disposed;
  PipelineBuilder builder() {
    return {[this](const std::vector<std::uint32_t>& spirv) -> Result<PipelineHandle> {
              if (spirv.empty()) return make_error("empty SPIR-V");
              return built.fetch_add(1) + 1;
            },
            [this](PipelineHandle h) {
              std::lock_guard lock(mutex);
              disposed.push_back(h);
            }};
  }
};

// Polls `done` until it holds or the deadline passes.
template <typename Predicate>
bool eventually(Predicate done) {
  const auto end = std::chrono::steady_clock::now() + kDeadline;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

std::size_t count_outcome(const std::vector<BackgroundTaskRecord>& records,
                          const std::string& outcome) {
  std::size_t n = 0;
  for (const auto& r : records) n += r.outcome == outcome ? 1 : 0;
  return n;
}

// Drives a workflow as the frame loop does; the training frames rendered (0 on a failure).
std::uint32_t render_training_frames(BackgroundSession& session) {
  if (!session.begin_workflow().ok()) {
    ADD_FAILURE() << "begin_workflow";
    return 0;
  }
  for (std::uint32_t frames = 1; frames < 100; ++frames) {
    auto more = session.workflow_frame_rendered();
    if (!more.ok()) {
      ADD_FAILURE() << more.error().message;
      return 0;
    }
    if (!*more) return frames;
  }
  ADD_FAILURE() << "the workflow did not end within 100 frames";
  return 0;
}

BackgroundSpec one_shot(std::uint32_t tasks) {
  BackgroundSpec spec;
  spec.tasks = tasks;
  spec.continuous = false;
  return spec;
}

TEST(BackgroundSession, FirstSightCompilesVariantsOfEveryWatchedPipelineAndDeliversThem) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSession session(one_shot(4), fake.builder());
  session.watch("A", 64, slot.back_pointer());
  session.watch("B", 128, slot.back_pointer());
  session.start();
  ASSERT_TRUE(eventually([&] { return fake.built.load() == 4; }));
  session.stop();
  const auto records = session.records();
  ASSERT_EQ(records.size(), 4u);
  std::set<std::string> labels;
  for (const auto& r : records) {
    EXPECT_TRUE(r.managed);
    EXPECT_EQ(r.outcome, "delivered") << r.label;
    EXPECT_GT(r.start_ns, 0);
    EXPECT_GE(r.finish_ns, r.start_ns);
    EXPECT_GT(r.compile_ms, 0.0);
    EXPECT_TRUE(r.idle_priority) << "the default processor runs compiles at SCHED_IDLE";
    labels.insert(r.label);
  }
  // Round robin over the watched pipelines, each variant folding its pipeline's own count
  // (a salt, the compile's number, keeps the modules distinct: ShaderVariants tests).
  EXPECT_EQ(labels.count("compile #1 A (iterations 64)"), 1u);
  EXPECT_EQ(labels.count("compile #2 B (iterations 128)"), 1u);
  EXPECT_EQ(labels.count("compile #3 A (iterations 64)"), 1u);
  EXPECT_EQ(slot.take().size(), 4u);
  EXPECT_TRUE(fake.disposed.empty());
}

// A copy is watched (one entry per workload, for the committed set) but has no shader: the
// round robin skips it, and a session that watches only copies compiles nothing.
TEST(BackgroundSession, WorkloadsWithoutAShaderAreNeverCompiled) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSession session(one_shot(3), fake.builder(), kLogicOnly);
  session.watch("Upload", 0, slot.back_pointer(), false);
  session.watch("A", 64, slot.back_pointer());
  session.watch("Copy", 0, slot.back_pointer(), false);
  session.watch("B", 128, slot.back_pointer());
  session.start();
  ASSERT_TRUE(eventually([&] { return fake.built.load() == 3; }));
  session.stop();
  std::set<std::string> labels;
  for (const auto& r : session.records()) labels.insert(r.label);
  EXPECT_EQ(labels,
            (std::set<std::string>{"compile #1 A (iterations 64)", "compile #2 B (iterations 128)",
                                   "compile #3 A (iterations 64)"}));
  FakeBuilder none;
  BackgroundSession copies_only(one_shot(2), none.builder());
  copies_only.watch("Upload", 0, slot.back_pointer(), false);
  copies_only.start();
  copies_only.stop();
  EXPECT_TRUE(copies_only.records().empty());
  EXPECT_EQ(none.built.load(), 0);
}

TEST(BackgroundSession, ContinuousKeepsCompilingUntilStoppedAndNothingRunsAfterStop) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec;
  spec.tasks = 1;
  spec.continuous = true;
  BackgroundSession session(spec, fake.builder(), kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  ASSERT_TRUE(eventually([&] { return fake.built.load() >= 3; }))
      << "each finished compile queues the next";
  session.stop();
  const std::uint64_t built_at_stop = fake.built.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(fake.built.load(), built_at_stop);
  const BackgroundActivity after = session.activity();
  EXPECT_EQ(after.managed_running, 0u);
  EXPECT_EQ(after.managed_queued, 0u);
  EXPECT_EQ(count_outcome(session.records(), "delivered"), built_at_stop);
}

TEST(BackgroundSession, APipelineDestroyedMidCompileGetsNoResultAndTheResultIsDisposed) {
  std::mutex mutex;
  std::condition_variable cv;
  bool building = false, release = false;
  std::vector<PipelineHandle> disposed;
  PipelineBuilder builder{[&](const std::vector<std::uint32_t>&) -> Result<PipelineHandle> {
                            std::unique_lock lock(mutex);
                            building = true;
                            cv.notify_all();
                            cv.wait_for(lock, kDeadline, [&] { return release; });
                            return PipelineHandle{42};
                          },
                          [&](PipelineHandle h) {
                            std::lock_guard lock(mutex);
                            disposed.push_back(h);
                          }};
  BackgroundSession session(one_shot(1), builder, kLogicOnly);
  auto slot = std::make_unique<VariantSlot<PipelineHandle>>();
  session.watch("A", 64, slot->back_pointer());
  session.start();
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(cv.wait_for(lock, kDeadline, [&] { return building; }));
  }
  slot.reset();  // the application destroys the pipeline while its variant is being built
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  cv.notify_all();
  session.stop();
  EXPECT_EQ(disposed, std::vector<PipelineHandle>{42});
  const auto records = session.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].outcome, "dropped (pipeline destroyed)");
}

TEST(BackgroundSession, ABuildFailureIsRecordedNotThrown) {
  PipelineBuilder builder{[](const std::vector<std::uint32_t>&) -> Result<PipelineHandle> {
                            return make_error("out of pipelines");
                          },
                          [](PipelineHandle) {}};
  VariantSlot<PipelineHandle> slot;
  BackgroundSession session(one_shot(1), builder, kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  EXPECT_TRUE(eventually(
      [&] { return count_outcome(session.records(), "failed: out of pipelines") == 1; }));
  session.stop();
  EXPECT_EQ(session.records().size(), 1u);
}

TEST(BackgroundSession, EachCommitPassQueuesMoreUntilTheSteadyState) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec = one_shot(2);
  spec.converge_after_passes = 2;
  spec.mode = ProcessingMode::allowed;
  spec.action = MeasurementsAction::commit_results;
  BackgroundSession session(spec, fake.builder(), kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();  // 2 compiles on first sight
  // Built before the first pass: a pass applied while they are still queued found nothing new
  // to queue on a loaded machine (1 run in 15), and the count below stayed at 2.
  ASSERT_TRUE(eventually([&] { return fake.built.load() == 2; }));
  auto further = session.apply_measurement_mode();
  ASSERT_TRUE(further.ok()) << further.error().message;
  EXPECT_TRUE(*further) << "one of two passes done";
  further = session.apply_measurement_mode();
  ASSERT_TRUE(further.ok());
  EXPECT_FALSE(*further) << "steady state after two passes";
  further = session.apply_measurement_mode();
  ASSERT_TRUE(further.ok());
  EXPECT_FALSE(*further);
  ASSERT_TRUE(eventually([&] { return fake.built.load() == 6; }))
      << "built " << fake.built.load()
      << "; first sight (2) + two passes (2 each); the third commit finds nothing new";
  session.stop();
  EXPECT_EQ(session.records().size(), 6u);
}

TEST(BackgroundSession, DisablingStopsContinuousRefillButQueuedWorkStillRuns) {
  // Builds wait until the disable is in place, so no compile can finish (and refill) first.
  std::atomic<bool> disabled{false};
  std::atomic<std::uint64_t> built{0};
  PipelineBuilder builder{[&](const std::vector<std::uint32_t>&) -> Result<PipelineHandle> {
                            eventually([&] { return disabled.load(); });
                            return built.fetch_add(1) + 1;
                          },
                          [](PipelineHandle) {}};
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec;
  spec.tasks = 3;
  spec.continuous = true;
  spec.max_concurrent = 1;
  spec.developer_mode = true;
  spec.mode = ProcessingMode::disable_background_work;
  BackgroundSession session(spec, builder, kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();  // 3 compiles queued while ALLOWED
  ASSERT_TRUE(session.apply_measurement_mode().ok());
  disabled = true;
  // The spec: work submitted before the disable runs to completion; the refill it would
  // queue is not generated (the source sees the disabled mode).
  ASSERT_TRUE(eventually([&] { return built.load() >= 3; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  session.stop();
  EXPECT_EQ(built.load(), 3u);
  EXPECT_EQ(count_outcome(session.records(), "delivered"), 3u);
}

TEST(BackgroundSession, BenchmarkPrimingWorkflowCommitsUntilFurtherMeasurementsIsFalse) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec = one_shot(2);
  spec.workflow = Workflow::benchmark_priming;
  spec.training_frames = 3;
  spec.converge_after_passes = 2;
  BackgroundSession session(spec, fake.builder(), kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  const std::uint32_t frames = render_training_frames(session);
  const WorkflowOutcome& outcome = session.workflow_outcome();
  EXPECT_EQ(outcome.passes, 2u);
  EXPECT_EQ(outcome.frames_rendered, 6u);
  EXPECT_EQ(frames, 6u);
  EXPECT_TRUE(outcome.converged);
  EXPECT_EQ(outcome.commit_wait_ms.size(), 2u);
  // Each commit waited for its set: every compile queued so far is done.
  EXPECT_EQ(fake.built.load(), 6u);
  ASSERT_TRUE(session.apply_measurement_mode().ok());  // ALLOWED + KEEP_ALL afterwards
  session.stop();
}

TEST(BackgroundSession, ACompletedCommitHandsTheNewestVariantOfEachPipelineToTheFrameLoopOnce) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec = one_shot(4);  // first sight: compiles 1-4, alternating A and B
  spec.workflow = Workflow::benchmark_priming;
  spec.training_frames = 1;
  spec.converge_after_passes = 1;
  spec.bind_committed = true;
  BackgroundSession session(spec, fake.builder(), kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.watch("B", 32, slot.back_pointer());
  session.start();
  EXPECT_FALSE(session.take_committed().has_value());  // nothing committed yet
  ASSERT_TRUE(eventually([&] { return fake.built.load() == 4; }));
  // The workflow discards what first sight delivered, then its one pass compiles 5-8.
  EXPECT_EQ(render_training_frames(session), 1u);
  const auto committed = session.take_committed();
  ASSERT_TRUE(committed.has_value());
  ASSERT_EQ(committed->size(), 2u);
  ASSERT_TRUE((*committed)[0].has_value() && (*committed)[1].has_value());
  EXPECT_EQ((*committed)[0]->compile, 7u);  // the newest of A's: 5 and 7
  EXPECT_EQ((*committed)[1]->compile, 8u);
  EXPECT_NE((*committed)[0]->pipeline, (*committed)[1]->pipeline);
  EXPECT_FALSE(session.take_committed().has_value());  // handed over once
  session.stop();
}

TEST(BackgroundSession, ACommitOfTheMeasurementModeIsWaitedForAndReadyForTheNextFrame) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec = one_shot(1);
  spec.action = MeasurementsAction::commit_results;
  spec.bind_committed = true;
  BackgroundSession session(spec, fake.builder(), kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  ASSERT_TRUE(session.apply_measurement_mode().ok());
  // The first-sight compile and the commit's own pass belonged to the commit: both are done.
  EXPECT_EQ(fake.built.load(), 2u);
  const auto committed = session.take_committed();
  ASSERT_TRUE(committed.has_value());
  ASSERT_EQ(committed->size(), 1u);
  ASSERT_TRUE((*committed)[0].has_value());
  EXPECT_EQ((*committed)[0]->compile, 2u);  // the newest
  session.stop();
}

// commit_at_frame: the request returns at once and the event comes when every compile it
// covers is done: the first sight's and the pass the commit itself queues.
TEST(BackgroundSession, ACommitAskedForMidRunIsTimedFromTheRequestToItsEvent) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec = one_shot(2);
  spec.commit_at_frame = 5;
  BackgroundSession session(spec, fake.builder(), kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  ASSERT_TRUE(session.request_commit(5u).ok());
  ASSERT_TRUE(session.request_commit(6u).ok()) << "a second request changes nothing";
  auto waited = session.finish_commit_wait();
  ASSERT_TRUE(waited.ok()) << waited.error().message;
  ASSERT_TRUE(waited->has_value());
  const CommitWait& wait = **waited;
  EXPECT_EQ(wait.requested_before_frame, 5u);
  EXPECT_LE(wait.pending_at_request, 2u);
  ASSERT_TRUE(wait.signalled_ns.has_value());
  EXPECT_GE(*wait.signalled_ns, wait.requested_ns);
  EXPECT_TRUE(wait.to_event_ms().has_value());
  // The event came after the commit's own compiles: 2 at first sight, 2 for the pass.
  EXPECT_EQ(fake.built.load(), 4u);
  session.stop();
  std::size_t finished_after_request = 0;
  for (const auto& r : session.records())
    if (r.finish_ns >= wait.requested_ns && r.finish_ns <= *wait.signalled_ns)
      ++finished_after_request;
  EXPECT_GE(finished_after_request, 2u) << "the commit's own pass finished before its event";
}

// Measured frames that end before commit_at_frame: the request is made at the end, and the
// wait blocks on it.
TEST(BackgroundSession, ACommitNotYetAskedForIsAskedForAtTheEndAndWaitedOn) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec = one_shot(1);
  spec.commit_at_frame = 1000;
  BackgroundSession session(spec, fake.builder(), kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  auto waited = session.finish_commit_wait();
  ASSERT_TRUE(waited.ok());
  ASSERT_TRUE(waited->has_value());
  EXPECT_FALSE((*waited)->requested_before_frame.has_value());
  EXPECT_TRUE((*waited)->signalled_ns.has_value());
  EXPECT_EQ(fake.built.load(), 2u);
  session.stop();
}

// A commit whose compiles cannot finish (the builder holds them) is waited for up to
// commit_timeout_ms and recorded as never signalled: a result, not an error or a hang.
TEST(BackgroundSession, ACommitThatNeverCompletesIsRecordedAsNotSignalledAtItsDeadline) {
  std::mutex mutex;
  std::condition_variable cv;
  bool release = false;
  PipelineBuilder held;
  held.build = [&](const std::vector<std::uint32_t>&) -> Result<PipelineHandle> {
    std::unique_lock lock(mutex);
    // Bounded: the test releases it; the deadline only guards a broken test.
    cv.wait_for(lock, kDeadline, [&] { return release; });
    return PipelineHandle{1};
  };
  held.dispose = [](PipelineHandle) {};
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec = one_shot(1);
  spec.commit_at_frame = 0;
  spec.commit_timeout_ms = 50;
  BackgroundSession session(spec, held, kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  ASSERT_TRUE(session.request_commit(0u).ok());
  auto waited = session.finish_commit_wait();
  ASSERT_TRUE(waited.ok()) << waited.error().message;
  ASSERT_TRUE(waited->has_value());
  EXPECT_FALSE((*waited)->signalled_ns.has_value());
  EXPECT_FALSE((*waited)->to_event_ms().has_value());
  EXPECT_GE((*waited)->blocked_ms, 49.0) << "it waited out its deadline";
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  cv.notify_all();
  session.stop();
}

TEST(BackgroundSession, WithoutCommitAtFrameNothingIsAskedOrWaitedFor) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSession session(one_shot(1), fake.builder(), kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  ASSERT_TRUE(session.request_commit(0u).ok());
  auto waited = session.finish_commit_wait();
  ASSERT_TRUE(waited.ok());
  EXPECT_FALSE(waited->has_value());
  ASSERT_TRUE(eventually([&] { return fake.built.load() == 1; }));
  session.stop();
  EXPECT_EQ(fake.built.load(), 1u) << "no commit pass was asked for";
}

TEST(BackgroundSession, WithoutBindCommittedNothingIsHandedToTheFrameLoop) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec = one_shot(2);
  spec.workflow = Workflow::benchmark_priming;
  spec.training_frames = 1;
  spec.converge_after_passes = 1;
  BackgroundSession session(spec, fake.builder(), kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  EXPECT_EQ(render_training_frames(session), 1u);
  EXPECT_FALSE(session.take_committed().has_value());
  session.stop();
}

TEST(BackgroundSession, TheDriverIsToldEveryModeTheRuntimeIsGivenAndItsAnswersAreCounted) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  PipelineBuilder builder = fake.builder();
  std::vector<std::pair<ProcessingMode, MeasurementsAction>> told;
  builder.driver_mode_api = "ID3D12Device6::SetBackgroundProcessingMode";
  builder.driver_mode = [&](ProcessingMode mode, MeasurementsAction action) {
    told.emplace_back(mode, action);
    // A runtime that implements only the first call.
    return told.size() == 1 ? DriverModeResult{"S_OK", true}
                            : DriverModeResult{"unsupported by this runtime (E_NOTIMPL)", {}};
  };
  BackgroundSpec spec = one_shot(2);
  spec.workflow = Workflow::benchmark_priming;
  spec.training_frames = 1;
  spec.converge_after_passes = 1;
  BackgroundSession session(spec, builder, kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  EXPECT_EQ(render_training_frames(session), 1u);
  ASSERT_TRUE(session.apply_measurement_mode().ok());
  session.stop();
  // begin_workflow, one commit pass, the measurement's mode: in order, as the runtime got them.
  const std::vector<std::pair<ProcessingMode, MeasurementsAction>> expected = {
      {ProcessingMode::allow_intrusive_measurements, MeasurementsAction::discard_previous},
      {ProcessingMode::allowed, MeasurementsAction::commit_results},
      {ProcessingMode::allowed, MeasurementsAction::keep_all}};
  EXPECT_EQ(told, expected);
  const DriverModeCalls& calls = session.driver_mode_calls();
  EXPECT_EQ(calls.api, "ID3D12Device6::SetBackgroundProcessingMode");
  EXPECT_EQ(calls.calls, 3u);
  EXPECT_EQ(calls.results.at("S_OK"), 1u);
  EXPECT_EQ(calls.results.at("unsupported by this runtime (E_NOTIMPL)"), 2u);
  EXPECT_EQ(calls.last_further_measurements_desired, std::optional<bool>(true));
  // Without a driver hook (Vulkan) nothing is counted.
  BackgroundSession plain(one_shot(1), fake.builder());
  ASSERT_TRUE(plain.apply_measurement_mode().ok());
  EXPECT_EQ(plain.driver_mode_calls().calls, 0u);
  plain.stop();
}

TEST(BackgroundSession, SingleFrameAnalysisIsBoundedByMaxPassesAndBoostsItsCompiles) {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec = one_shot(2);
  spec.workflow = Workflow::single_frame_analysis;
  spec.developer_mode = true;
  spec.training_frames = 1;
  spec.converge_after_passes = 10;  // a driver that never converges within the bound
  spec.max_passes = 3;
  BackgroundSession session(spec, fake.builder(), kLogicOnly);
  session.watch("A", 64, slot.back_pointer());
  session.start();
  EXPECT_EQ(render_training_frames(session), 3u) << "one frame per pass, three passes";
  EXPECT_EQ(session.workflow_outcome().passes, 3u);
  EXPECT_FALSE(session.workflow_outcome().converged);
  ASSERT_TRUE(session.apply_measurement_mode().ok());  // DISABLE_PROFILING_BY_SYSTEM
  session.stop();
  std::size_t boosted = 0;
  for (const auto& r : session.records()) boosted += r.boosted ? 1 : 0;
  EXPECT_GT(boosted, 0u) << "COMMIT_RESULTS_HIGH_PRIORITY runs the commit set on boost threads";
}

// How an unmanaged compile may end around a stop: delivered before it; or, once stopping, with
// its compile kept but no pipeline built; or not started at all (a thread that had passed its
// loop check just before the request sees it at the start of the compile).
bool ends_as_a_stop_allows(const std::string& outcome) {
  return outcome == "delivered" || outcome == "compiled; pipeline skipped (stopping)" ||
         outcome == "skipped (stopping)";
}

// The unmanaged positive control with two threads, compiling from construction on.
struct TwoUnmanagedThreads {
  FakeBuilder fake;
  VariantSlot<PipelineHandle> slot;
  BackgroundSpec spec = [] {
    BackgroundSpec two;
    two.unmanaged_threads = 2;
    return two;
  }();
  BackgroundSession session{spec, fake.builder()};
  TwoUnmanagedThreads() {
    session.watch("A", 64, slot.back_pointer());
    session.start();
  }
};

TEST(BackgroundSession, UnmanagedControlRunsOutsideTheProcessorAtNormalPriority) {
  TwoUnmanagedThreads control;
  BackgroundSession& session = control.session;
  FakeBuilder& fake = control.fake;
  ASSERT_TRUE(eventually([&] { return session.activity().unmanaged_running > 0; }));
  ASSERT_TRUE(eventually([&] { return fake.built.load() >= 2; }));
  EXPECT_FALSE(*session.apply_measurement_mode()) << "no processor work to set a mode for";
  session.stop();
  EXPECT_EQ(session.activity().unmanaged_running, 0u);
  const auto records = session.records();
  ASSERT_GE(records.size(), 2u);
  std::set<int> workers;
  for (const auto& r : records) {
    EXPECT_FALSE(r.managed);
    EXPECT_FALSE(r.idle_priority);
    EXPECT_TRUE(ends_as_a_stop_allows(r.outcome)) << r.outcome;
    workers.insert(r.worker);
  }
  EXPECT_LE(workers.size(), 2u);
}

// After a stop request (a missed frame deadline, an interrupt) no thread starts
// another compile; each finishes at most the one it was in. Unmanaged threads used to compile
// on until they were joined, long after the frames had ended.
TEST(BackgroundSession, AfterAStopRequestEachThreadFinishesAtMostItsCompileInFlight) {
  TwoUnmanagedThreads control;
  BackgroundSession& session = control.session;
  ASSERT_TRUE(eventually([&] { return session.records().size() >= 2; }));
  session.request_stop();
  const std::size_t finished_at_request = session.records().size();
  session.stop();
  EXPECT_EQ(session.activity().unmanaged_running, 0u);
  EXPECT_LE(session.records().size(), finished_at_request + control.spec.unmanaged_threads);
  for (const auto& r : session.records())
    EXPECT_TRUE(ends_as_a_stop_allows(r.outcome)) << r.outcome;
}

}  // namespace
}  // namespace gpuoverlap::background
