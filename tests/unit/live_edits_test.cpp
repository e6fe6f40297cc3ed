// The edits of a live session between the window and the run (viewer/live_edits.h), and the
// script that makes them (viewer/live_script.h). No window, no GPU.
#include "live/live_edits.h"

#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <thread>

#include "live/live_script.h"
#include "scenarios/presets.h"

namespace gpuoverlap::live {
namespace {

Scenario started_default() {
  auto s = resolve_scenario("default");
  EXPECT_TRUE(s);
  s->live = Scenario::LiveVersion{};
  return *s;
}

Edit edit(const char* words) {
  auto e = parse_edit(words);
  EXPECT_TRUE(e) << words;
  return *e;
}

TEST(LiveEdits, EditsMadeBeforeTheRunTakesThemBecomeOneVersion) {
  LiveEdits edits;
  EXPECT_FALSE(edits.submit(edit("iterations \"Compute B\" 2"))) << "not started";
  edits.start(started_default());
  EXPECT_FALSE(edits.pending());
  ASSERT_TRUE(edits.submit(edit("iterations \"Compute B\" 2")));
  ASSERT_TRUE(edits.submit(edit("groups \"Compute A\" 3")));
  // Refused: nothing of it is kept, the accepted ones still wait.
  const Status refused = edits.submit(edit("depend \"Compute A\" \"Compute B\""));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("dependency cycle"), std::string::npos);
  EXPECT_TRUE(edits.pending());

  auto second = edits.take_next_or_close(7);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->name, "default-edit-1");
  ASSERT_TRUE(second->live);
  EXPECT_EQ(second->live->version, 2u);
  EXPECT_EQ(second->live->previous, "default");
  EXPECT_EQ(second->live->first_session_frame, 7u);
  EXPECT_EQ(second->live->changes,
            (std::vector<std::string>{"iterations \"Compute B\" 2", "groups \"Compute A\" 3"}));
  EXPECT_EQ(second->workloads[1].iterations, 2u);
  EXPECT_EQ(second->workloads[0].groups, 3u);
  EXPECT_EQ(edits.newest_version_name(), "default-edit-1");
  EXPECT_FALSE(edits.pending());

  // The next builds on it.
  ASSERT_TRUE(edits.submit(edit("disable \"Compute Queue C\"")));
  auto third = edits.take_next_or_close(12);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->name, "default-edit-2");
  EXPECT_EQ(third->live->previous, "default-edit-1");
  EXPECT_EQ(third->workloads.size(), 7u);
  EXPECT_EQ(third->workloads[1].iterations, 2u);

  // Nothing pending: the session is over, and later edits say so.
  EXPECT_FALSE(edits.take_next_or_close(20));
  const Status late = edits.submit(edit("iterations \"Compute B\" 3"));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().message, "the run has ended");
}

TEST(LiveEdits, EndingTheRunEndsTheVersionAndStartsNone) {
  LiveEdits edits;
  edits.start(started_default());
  ASSERT_TRUE(edits.submit(edit("timestamps off")));
  edits.end_session();
  EXPECT_TRUE(edits.pending()) << "the version running ends at the next frame boundary";
  EXPECT_FALSE(edits.take_next_or_close(5)) << "and none follows, not even the edit";
  edits.close("the run has ended");
  EXPECT_FALSE(edits.pending());
  EXPECT_EQ(edits.why_not(), "the run has ended");
}

TEST(LiveEdits, SaveWritesAFileThatReadsBackAsTheLatestVersion) {
  LiveEdits edits;
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("gpuoverlap-live-edits-" + std::to_string(getpid()) + ".toml");
  EXPECT_FALSE(edits.save_toml(file)) << "nothing to save before the run starts";
  edits.start(started_default());
  ASSERT_TRUE(edits.submit(edit("barrier \"Compute B\" \"Compute A\" split")));
  ASSERT_TRUE(edits.submit(edit("priority compute high")));
  ASSERT_TRUE(edits.save_toml(file));
  auto saved = load_scenario_file(file.string());
  ASSERT_TRUE(saved) << saved.error().message;
  EXPECT_EQ(saved->name, "default-edit-1");
  EXPECT_EQ(saved->workloads[1].depends_on[0].barrier.kind, BarrierKind::split);
  EXPECT_EQ(saved->queues[1].priority, QueuePriority::high);
  std::filesystem::remove(file);
}

TEST(LiveEdits, ARunThatCannotBeEditedSaysWhy) {
  LiveEdits edits;
  edits.refuse_all("the experiment can be edited when the run is one frame scenario");
  EXPECT_FALSE(edits.latest());
  const Status refused = edits.submit(edit("timestamps off"));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("one frame scenario"), std::string::npos);
  edits.close("the run has ended");
  EXPECT_NE(edits.why_not().find("one frame scenario"), std::string::npos);
  EXPECT_FALSE(edits.take_next_or_close(0));
}

// The window submits while the run's thread polls and takes versions (run under TSan).
TEST(LiveEdits, TheWindowAndTheRunShareItSafely) {
  LiveEdits edits;
  edits.start(started_default());
  std::atomic<bool> done{false};
  std::uint32_t taken = 0;
  std::thread run([&] {
    std::uint64_t frames = 0;
    while (!done.load()) {
      ++frames;
      if (edits.pending())
        if (auto next = edits.take_next_or_close(frames)) ++taken;
    }
  });
  for (std::uint32_t i = 1; i <= 200; ++i) {
    const std::string words = "iterations \"Compute B\" " + std::to_string(i);
    ASSERT_TRUE(edits.submit(edit(words.c_str())));
  }
  while (edits.pending()) std::this_thread::yield();
  done = true;
  run.join();
  EXPECT_GE(taken, 1u);
  EXPECT_LE(taken, 200u);
  EXPECT_EQ(edits.versions_started(), taken + 1);
  EXPECT_EQ(edits.latest()->scenario.workloads[1].iterations, 200u);
}

TEST(LiveScript, EveryStepIsCheckedBeforeAnythingRuns) {
  auto steps = parse_script(
      "# comment\n\nwait 3\n  iterations \"Compute B\" 2  \nsave /tmp/x.toml\nend\n", "s.txt");
  ASSERT_TRUE(steps) << steps.error().message;
  ASSERT_EQ(steps->size(), 4u);
  EXPECT_EQ((*steps)[0].kind, ScriptStep::Kind::wait);
  EXPECT_EQ((*steps)[0].frames, 3u);
  EXPECT_EQ((*steps)[0].line, 3u);
  EXPECT_EQ((*steps)[1].kind, ScriptStep::Kind::edit);
  EXPECT_EQ((*steps)[1].text, "iterations \"Compute B\" 2");
  EXPECT_EQ((*steps)[2].kind, ScriptStep::Kind::save);
  EXPECT_EQ((*steps)[2].text, "/tmp/x.toml");
  EXPECT_EQ((*steps)[3].kind, ScriptStep::Kind::end);
  struct Bad {
    const char* text;
    const char* message;
  };
  for (const Bad& bad :
       {Bad{"wait\n", "s.txt:1: 'wait' takes"}, Bad{"wait 0\n", "s.txt:1: 'wait' takes"},
        Bad{"\nwait soon\n", "s.txt:2: 'wait' takes"}, Bad{"save\n", "s.txt:1: 'save' takes"},
        Bad{"end now\n", "s.txt:1: 'end' takes nothing"},
        Bad{"click the button\n", "s.txt:1: unknown edit 'click'"},
        Bad{"groups B\n", "s.txt:1: 'groups' takes"}}) {
    auto parsed = parse_script(bad.text, "s.txt");
    ASSERT_FALSE(parsed) << bad.text;
    EXPECT_EQ(parsed.error().message.rfind(bad.message, 0), 0u) << parsed.error().message;
  }
}

// The runner on the run's thread: `wait N` is exactly N frames of the scenario as the edits
// left it, so each version here measures exactly what the script asks.
TEST(LiveScript, AWaitCountsTheFramesOfTheVersionTheEditsBeforeItMade) {
  auto steps = parse_script(
      "wait 2\niterations \"Compute B\" 2\ngroups Nobody 1\nwait 3\nend\nwait 1\n", "s.txt");
  ASSERT_TRUE(steps);
  LiveEdits edits;
  std::ostringstream log;
  ScriptRunner runner(std::move(*steps), edits, log);
  edits.start(started_default());
  runner.start();
  EXPECT_FALSE(edits.pending());
  runner.frame_measured("default");
  EXPECT_FALSE(edits.pending());
  runner.frame_measured("default");  // the second: the edit is made
  EXPECT_TRUE(edits.pending());
  EXPECT_EQ(log.str(),
            "script line 2: iterations \"Compute B\" 2: accepted\n"
            "script line 3: groups Nobody 1: refused: no workload 'Nobody' in the scenario\n");
  // A frame of the version the edit is ending does not count.
  runner.frame_measured("default");
  auto next = edits.take_next_or_close(3);
  ASSERT_TRUE(next);
  runner.frame_measured("default-edit-1");
  runner.frame_measured("default-edit-1");
  EXPECT_FALSE(edits.pending());
  runner.frame_measured("default-edit-1");  // the third: end
  EXPECT_TRUE(edits.pending());
  EXPECT_FALSE(runner.done());
  EXPECT_FALSE(edits.take_next_or_close(6));
  edits.close("the run has ended");
  runner.run_ended();
  EXPECT_TRUE(runner.done());
  EXPECT_NE(
      log.str().find("script line 5: end\nscript line 6: the run ended before 1 more frames\n"),
      std::string::npos)
      << log.str();
}

TEST(LiveScript, ItsLinesAreEscapedAndItsEditsAfterTheEndRefused) {
  auto steps = parse_script("groups \"Comp\x1b[31mute\" 2\n", "s.txt");
  ASSERT_TRUE(steps);
  LiveEdits edits;
  std::ostringstream log;
  ScriptRunner runner(std::move(*steps), edits, log);
  edits.start(started_default());
  edits.close("the run has ended");
  runner.run_ended();
  EXPECT_EQ(log.str().find('\x1b'), std::string::npos) << "a terminal escape from the file";
  EXPECT_NE(log.str().find("refused: the run has ended"), std::string::npos) << log.str();
}

}  // namespace
}  // namespace gpuoverlap::live
