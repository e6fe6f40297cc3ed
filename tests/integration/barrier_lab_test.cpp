// The barrier lab under the validation layer's synchronization checks (lavapipe on CI): a
// deliberately missing barrier is caught, and barriers on subresource ranges, between writes of
// one texture, across a heap's textures and on independent subresources are clean and order
// their work; `validate --explain` names each barrier. Only orderings are asserted, never
// timings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "analysis/csv_table.h"
#include "results_tools.h"
#include "run_binary.h"
#include "run_checks.h"
#include "timeline/export.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

// The validation layer is really checking synchronization: a deliberately missing barrier is
// caught and fails the run, and the same scenario with its barrier is clean.
TEST(SyncValidation, CatchesTheDeliberatelyMissingBarrier) {
  const fs::path dir = fresh_path(temp_path("race"));
  fs::create_directories(dir);
  const fs::path racy = test_data("missing-barrier.toml");
  const auto caught = run_gpuoverlap("run " + racy.string() + " --sync-validation --out " +
                                     (dir / "racy").string());
  EXPECT_EQ(caught.exit_code, 1) << caught.output;
  EXPECT_NE(caught.output.find("SYNC-HAZARD-READ-AFTER-WRITE"), std::string::npos) << caught.output;
  EXPECT_NE(caught.output.find("[none-race]"), std::string::npos) << caught.output;
  const auto meta = read_json_file(dir / "racy" / "missing-barrier" / "meta.json");
  EXPECT_GT(meta["validation"]["sync_hazards"].get<int>(), 0);

  std::string text = read_text_file(racy);
  const std::string race = R"(barrier = "none", reads_output = true)";
  text.replace(text.find(race), race.size(), R"(barrier = "legacy")");
  std::ofstream(dir / "fixed.toml") << text;
  const auto clean = run_gpuoverlap("run " + (dir / "fixed.toml").string() +
                                    " --sync-validation --out " + (dir / "fixed").string());
  EXPECT_EQ(clean.exit_code, 0) << clean.output;
  EXPECT_EQ(clean.output.find("SYNC-HAZARD"), std::string::npos) << clean.output;
  EXPECT_EQ(
      read_json_file(dir / "fixed" / "missing-barrier" / "meta.json")["validation"]["sync_hazards"],
      0);
  fs::remove_all(dir);
}

// Barriers on a subresource range, one per barrier kind: validated clean by the layer, dependent
// workloads never overlap, and `validate --explain` names the range on both sides.
TEST(SyncValidation, BarriersOnASubresourceRangeAreCleanAndOrderTheirWork) {
  const fs::path dir = fresh_path(temp_path("ranges"));
  const std::string file = test_data("subresource-ranges.toml");
  const auto r = run_gpuoverlap("run " + file + " --sync-validation --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("SYNC-HAZARD"), std::string::npos) << r.output;
  const auto meta = read_json_file(dir / "subresource-ranges" / "meta.json");
  EXPECT_EQ(meta["validation"]["errors"], 0);
  EXPECT_EQ(meta["validation"]["sync_hazards"], 0);
  const auto table =
      read_csv((dir / "subresource-ranges" / "records.csv.gz").string(), kRecordColumns);
  std::map<std::pair<std::string, std::string>, std::size_t> row_of;  // (frame, workload)
  for (std::size_t r = 0; r < table.rows.size(); ++r)
    row_of[{table.at(r, "frame"), table.at(r, "workload")}] = r;
  std::size_t ordered = 0;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::string consumer = table.at(r, "workload");
    if (consumer[0] != 'C') continue;
    const std::size_t producer = row_of.at({table.at(r, "frame"), "G" + consumer.substr(1)});
    for (const char* clock : {"poll", "ts"}) {
      const auto start = table.number(r, std::string(clock) + "_start_us");
      const auto end = table.number(producer, std::string(clock) + "_end_us");
      ASSERT_TRUE(start && end) << consumer << " " << clock;
      EXPECT_GE(*start, *end) << consumer << " started before its draw ended (" << clock << ")";
      ++ordered;
    }
  }
  EXPECT_EQ(ordered, 2u * 4u * 2u);  // frames x consumers x clocks
  ASSERT_NO_FATAL_FAILURE(expect_explains(
      file, {"TRANSITION render_target -> non_pixel_shader_resource subresource 0",
             "TRANSITION(BEGIN_ONLY) render_target -> non_pixel_shader_resource subresource 0",
             "layout render_target -> shader_resource mips 0+1 slices 0+1",
             "vkCmdWaitEvents2, image barrier", "mips 0+1 layers 0+1"}));
  fs::remove_all(dir);
}

// Two render targets in one heap: clean under the layer (sync validation sees the shared
// memory, so a hand-over that did not order the bloom draw after the shadow map's reader, or a
// layout the memory is not in, would be a hazard or an error), and every use of the bloom
// target after every use of the shadow map in the frame, on the poll and timestamp clocks.
TEST(SyncValidation, TheAliasingHandoverPresetsAreCleanAndUseTheHeapInTurn) {
  for_legacy_and_enhanced("aliasing-handover", [](const std::string& name, const CleanRun& run) {
    EXPECT_EQ(run.meta["scenario"]["textures"][0]["heap"], "transient");
    EXPECT_EQ(run.meta["scenario"]["textures"][1]["heap"], "transient");
    EXPECT_EQ(run.count_pairs({{"Draw Bloom", "Read Shadow"}, {"Draw Bloom", "Draw Shadow"}},
                              {"poll", "ts"}),
              4u * 2u * 2u);  // frames x clocks x uses of the shadow map
    expect_reported_and_explained(
        run, name,
        {"'shadow' leaves heap 'transient': TEXTURE "
         "compute_shading/shader_resource -> none/no_access",
         "heap 'transient' from 'shadow' to 'bloom': TEXTURE compute_shading/no_access -> "
         "render_target/render_target layout undefined -> render_target DISCARD",
         "heap 'transient' from 'bloom' (held since the frame before) to 'shadow'"},
        {"'shadow' leaves heap 'transient': TRANSITION "
         "non_pixel_shader_resource -> render_target",
         "heap 'transient' from 'shadow' to 'bloom': ALIASING",
         "image barrier: ALL_COMMANDS / MEMORY_WRITE", "D3D12 then DiscardResource('bloom')"});
  });
}

// Two writes of one texture subresource with a write of another mip between them: clean under
// the layer (a UAV barrier, or an enhanced TEXTURE barrier on mip 0 alone, orders the second
// write of mip 0 after the first), the rewrite after the first write and the reader after both
// writers on the poll clock (the files turn timestamp queries off).
TEST(SyncValidation, TheTextureRewritePresetsAreCleanAndOrderTheirWrites) {
  for_legacy_and_enhanced("texture-rewrite", [](const std::string& name, const CleanRun& run) {
    EXPECT_EQ(run.count_pairs({{"Rewrite mip 0", "Write mip 0"},
                               {"Read both", "Rewrite mip 0"},
                               {"Read both", "Write mip 1"}},
                              {"poll"}),
              4u * 3u);  // frames x pairs
    expect_explains_either(
        name,
        {"TEXTURE compute_shading/unordered_access -> compute_shading/unordered_access "
         "layout unordered_access -> unordered_access mips 0+1 slices 0+1"},
        {"D3D12 before consumer: UAV"});
  });
}

// Three dispatch-only textures in one heap on a compute queue, the last written and never read
// (tests/data/heap-on-compute.toml), with enhanced and with legacy barriers: clean under the
// layer, and each texture's first write after the last use of the one before it.
TEST(SyncValidation, AHeapOnAComputeQueueIsCleanAfterAWriteAsAfterARead) {
  const std::string file = test_data("heap-on-compute.toml");
  const std::string enhanced = read_text_file(file);
  const fs::path legacy_file = temp_path("heap-on-compute-legacy.toml");
  {
    std::string legacy = enhanced;
    legacy.replace(legacy.find("barrier = \"enhanced\""), 20, "barrier = \"legacy\"");
    std::ofstream(legacy_file) << legacy;
  }
  for (const std::string& path : {file, legacy_file.string()}) {
    SCOPED_TRACE(path);
    const auto run = run_clean(path, "heap-on-compute");
    ASSERT_TRUE(run);
    EXPECT_EQ(run->count_pairs({{"Write b", "Read a"}, {"Write c", "Read b"}}, {"poll", "ts"}),
              4u * 2u * 2u);  // frames x clocks x hand-overs inside the frame
    fs::remove_all(run->dir);
  }
  fs::remove(legacy_file);
}

// Two dispatches into independent mips of one texture, then a draw that reads both: clean under
// the layer (each dispatch writes its own subresource, each barrier covers one mip), no
// target transition (only dispatches write the texture, so it starts the frame in
// UNORDERED_ACCESS), and the reader after both writers on the poll clock (the file turns
// timestamp queries off). Whether the two writers overlap is the GPU's to say, not asserted.
TEST(SyncValidation, IndependentSubresourcesAreCleanAndTheirReaderWaitsForBoth) {
  const std::string file = test_data("independent-subresources.toml");
  const auto run = run_clean(file, "independent-subresources");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->count_pairs({{"Read both", "Dispatch mip 0"}, {"Read both", "Dispatch mip 1"}},
                             {"poll"}),
            4u * 2u);  // frames x writers
  const auto explained = run_gpuoverlap("validate " + file + " --explain");
  ASSERT_EQ(explained.exit_code, 0) << explained.output;
  EXPECT_EQ(explained.output.find("target transition"), std::string::npos) << explained.output;
  EXPECT_NE(explained.output.find("layout unordered_access -> shader_resource mips 1+1"),
            std::string::npos)
      << explained.output;
  fs::remove_all(run->dir);
}

}  // namespace
}  // namespace gpuoverlap
