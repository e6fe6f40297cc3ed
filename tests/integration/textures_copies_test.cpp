// The texture and copy presets, each with its -legacy twin, under the validation layer's
// synchronization checks (lavapipe on CI): mip chains, render-target discards, depth pre-passes,
// readbacks, textures read after a render, uploads into buffers and textures. Each is clean,
// orders its work on the poll and timestamp clocks, and `validate --explain` names its
// barriers.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "results_tools.h"
#include "run_binary.h"
#include "run_checks.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

// The mip-chain presets, enhanced and legacy, drawn into a declared texture: clean under the
// layer, each level's draw starts after the one before ended, meta.json names the texture and
// each draw's mip with its pixels, and the barriers name the mip each producer drew.
TEST(SyncValidation, TheMipChainPresetsAreCleanAndOrdered) {
  for_legacy_and_enhanced("mip-chain", [](const std::string& name, const CleanRun& run) {
    const fs::path& dir = run.dir;
    const auto& meta = run.meta;
    ASSERT_EQ(meta["scenario"]["textures"].size(), 1u);
    EXPECT_EQ(meta["scenario"]["textures"][0]["mips"], 4);
    const auto& workloads = meta["scenario"]["workloads"];
    for (std::uint32_t mip = 0; mip < 4; ++mip) {
      EXPECT_EQ(workloads[mip]["target"]["mip"], mip);
      EXPECT_EQ(workloads[mip]["threads"], (1024u >> mip) * (64u >> mip));  // the mip's pixels
    }
    const auto& table = run.records;
    // A draw into a texture covers its mip: no groups; the compute reader has its one.
    for (std::size_t row = 0; row < table.rows.size(); ++row)
      EXPECT_EQ(table.at(row, "groups"), table.at(row, "workload") == "Read" ? "1" : "");
    std::size_t ordered = run.count_after("Read", "Mip 3", {"poll", "ts"});
    for (int mip = 1; mip < 4; ++mip)
      ordered += run.count_after("Mip " + std::to_string(mip), "Mip " + std::to_string(mip - 1),
                                 {"poll", "ts"});
    EXPECT_EQ(ordered, 4u * 4u * 2u);  // frames x dependencies x clocks
    // Every tool reads it: report (its barrier table names each level), compare, plot.py.
    const auto report = run_gpuoverlap("report " + dir.string());
    ASSERT_EQ(report.exit_code, 0) << report.output;
    EXPECT_NE(read_text_file(dir / "report.md").find("| Mip 2 → Mip 3 |"), std::string::npos);
    const auto compared = run_gpuoverlap("compare " + dir.string() + " " + dir.string());
    EXPECT_EQ(compared.exit_code, 0) << compared.output;
    const auto plotted = run_plot(dir);
    EXPECT_EQ(plotted.exit_code, 0) << plotted.output;
    // The viewer: a bar per level and the reader, an arrow per dependency.
    const fs::path shot = dir / "view.png";
    const auto viewed = run_gpuoverlap_on_display("view " + dir.string() + " --scenario " + name +
                                                  " --screenshot " + shot.string());
    ASSERT_EQ(viewed.exit_code, 0) << viewed.output;
    const auto layout = read_json_file(shot.string() + ".layout.json");
    std::set<std::string> bars;
    for (const auto& bar : layout["bars"]) bars.insert(bar["workload"].get<std::string>());
    EXPECT_EQ(bars, (std::set<std::string>{"Mip 0", "Mip 1", "Mip 2", "Mip 3", "Read"}));
    EXPECT_EQ(layout["arrows"].size(), 4u);
    expect_explains_either(name, {"mips 2+1 layers 0+1", "mips 3+1 slices 0+1"},
                           {"mips 2+1 layers 0+1", "non_pixel_shader_resource subresource 3"});
  });
}

// The render-target-discard presets: a target drawn, read, then drawn again. Clean under the
// layer (the write after the read is ordered by the target transition), each workload after
// the one it depends on, and Draw B after Read A's end; --explain names the DISCARD (enhanced)
// or the full TRANSITION back (legacy) and the Vulkan barrier from UNDEFINED or from the
// shader-read layout.
TEST(SyncValidation, TheRenderTargetDiscardPresetsAreCleanAndOrdered) {
  for_legacy_and_enhanced(
      "render-target-discard", [](const std::string& name, const CleanRun& run) {
        EXPECT_EQ(run.meta["scenario"]["workloads"][2]["target"]["discard"],
                  name == "render-target-discard");
        EXPECT_EQ(run.count_pairs({{"Draw B", "Draw A"}, {"Draw B", "Read A"}}, {"poll", "ts"}),
                  4u * 2u * 2u);  // frames x clocks x earlier workloads
        expect_reported_and_explained(
            run, name,
            {"Draw B (draws into mip 0, slice 0 of 'target', discard)",
             "layout undefined -> render_target mips 0+1 slices 0+1 DISCARD",
             "layout UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL"},
            {"Draw B (draws into mip 0, slice 0 of 'target')",
             "TRANSITION non_pixel_shader_resource -> render_target subresource 0",
             "-> COLOR_ATTACHMENT_OPTIMAL"});
      });
}

// The depth-prepass presets: a d32 depth buffer drawn on the DIRECT queue, read by a dispatch on
// the COMPUTE queue and by a draw back on the DIRECT queue. Clean under the layer (which, at
// Debian 12's version, does not track a dynamic-rendering depth attachment's writes: the
// ordering below is what shows the barrier and fence held), both readers after the pre-pass on
// both clocks, and --explain names the depth layouts and the Vulkan ones.
TEST(SyncValidation, TheDepthPrepassPresetsAreCleanAndOrdered) {
  for_legacy_and_enhanced("depth-prepass", [](const std::string& name, const CleanRun& run) {
    EXPECT_EQ(run.meta["scenario"]["textures"][0]["format"], "d32");
    EXPECT_EQ(
        run.count_pairs(
            {{"SSAO", "Depth pre-pass"}, {"Lighting", "Depth pre-pass"}, {"Lighting", "SSAO"}},
            {"poll", "ts"}),
        4u * 2u * 3u);  // frames x clocks x dependencies
    expect_reported_and_explained(
        run, name,
        {"TEXTURE depth_stencil/depth_stencil_write -> all_shading/shader_resource layout "
         "depth_stencil_write -> shader_resource",
         "already visible to shader reads",
         "layout DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL"},
        {"TRANSITION depth_write -> all_shader_resource",
         "EARLY_FRAGMENT_TESTS|LATE_FRAGMENT_TESTS / "
         "DEPTH_STENCIL_ATTACHMENT_READ|DEPTH_STENCIL_ATTACHMENT_WRITE",
         "already all_shader_resource after an earlier barrier"});
  });
}

// The readback presets: a draw's texture read back on the DIRECT queue, a dispatch's buffer on
// the COMPUTE queue, each into a readback buffer. Clean under the layer, each copy after its
// source on both clocks, its bytes the source's, and --explain names the way into COPY_SOURCE
// (a TEXTURE and a BUFFER barrier, or two TRANSITIONs) and Vulkan's TRANSFER_SRC_OPTIMAL.
TEST(SyncValidation, TheReadbackPresetsAreCleanAndOrdered) {
  for_legacy_and_enhanced("readback", [](const std::string& name, const CleanRun& run) {
    const auto& workloads = run.meta["scenario"]["workloads"];
    EXPECT_EQ(workloads[1]["bytes"], 1024 * 512 * 4);  // the texture's r32f mip 0
    EXPECT_EQ(workloads[3]["bytes"], workloads[2]["threads"].get<int>() * 4);
    EXPECT_EQ(run.count_pairs({{"Read back frame", "Render"}, {"Read back simulation", "Simulate"}},
                              {"poll", "ts"}),
              4u * 2u * 2u);  // frames x clocks x readbacks
    expect_reported_and_explained(
        run, name,
        {"TEXTURE render_target/render_target -> copy/copy_source "
         "layout render_target -> copy_source",
         "BUFFER compute_shading/unordered_access -> copy/copy_source",
         "layout COLOR_ATTACHMENT_OPTIMAL -> TRANSFER_SRC_OPTIMAL"},
        {"TRANSITION render_target -> copy_source subresource 0",
         "TRANSITION unordered_access -> copy_source",
         "COMPUTE_SHADER / SHADER_READ|SHADER_WRITE -> COPY / TRANSFER_READ"});
  });
}

// A depth buffer's mip 0 drawn, read, drawn again with DISCARD, read again and read back, its
// mip 1 drawn and read in between (tests/data/depth-rewrite.toml): clean under the layer (the
// readback copies the depth aspect from GENERAL, the layout its barrier left), the second draw
// after the first read, each read after its draw, on both clocks.
TEST(SyncValidation, ADepthBufferDrawnAgainAfterItsReadIsOrdered) {
  const std::string file = test_data("depth-rewrite.toml");
  const auto run = run_clean(file, "depth-rewrite");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->count_pairs({{"Read A", "Depth A"},
                              {"Depth B", "Read A"},
                              {"Read B", "Depth B"},
                              {"Read mip 1", "Depth mip 1"},
                              {"Read back depth", "Read B"}},
                             {"poll", "ts"}),
            4u * 2u * 5u);  // frames x clocks x orderings
  // The readback moves the depth buffer's bytes: 64 x 64 x 4.
  EXPECT_EQ(run->meta["scenario"]["workloads"][6]["bytes"], 64 * 64 * 4);
  ASSERT_NO_FATAL_FAILURE(expect_explains(
      file, {"layout undefined -> depth_stencil_write mips 0+1 slices 0+1 DISCARD",
             "layout UNDEFINED -> DEPTH_STENCIL_ATTACHMENT_OPTIMAL",
             // A copy reads from the layout its barrier left, COMMON here (Vulkan GENERAL).
             "layout SHADER_READ_ONLY_OPTIMAL -> GENERAL"}));
  fs::remove_all(run->dir);
}

// The texture-read-after-render presets: one subresource drawn, read by a dispatch, written by
// a dispatch as an unordered-access texture, then read by a draw. Clean under the layer (the
// write after the read is ordered by its target transition, the draw's read by the barrier out
// of UNORDERED_ACCESS), and each workload after the one before on both clocks; --explain
// names the transition into UNORDERED_ACCESS (a TEXTURE barrier or a TRANSITION) and the
// Vulkan barrier into GENERAL.
TEST(SyncValidation, TheTextureReadAfterRenderPresetsAreCleanAndOrdered) {
  for_legacy_and_enhanced("texture-read-after-render", [](const std::string& name,
                                                          const CleanRun& run) {
    // The dispatch runs a thread per pixel of the mip it writes.
    EXPECT_EQ(run.meta["scenario"]["workloads"][2]["threads"], 1024 * 256);
    EXPECT_EQ(run.count_pairs({{"Read", "Render"}, {"Write", "Read"}, {"Present", "Write"}},
                              {"poll", "ts"}),
              4u * 2u * 3u);  // frames x clocks x dependent workloads
    expect_reported_and_explained(
        run, name,
        {"Write (writes mip 0, slice 0 of 'surface')", "layout shader_resource -> unordered_access",
         "layout unordered_access -> shader_resource",
         "layout SHADER_READ_ONLY_OPTIMAL -> GENERAL"},
        {"Write (writes mip 0, slice 0 of 'surface')",
         "TRANSITION non_pixel_shader_resource -> unordered_access "
         "subresource 0",
         "TRANSITION unordered_access -> pixel_shader_resource", "-> GENERAL"});
  });
}

// A copy on each queue type, then a dispatch that reads it: clean under the layer (the copy's
// stamp writes and the copy itself are ordered by their own barriers, the copy's output by the
// preset's), each reader after its copy on the poll and timestamp clocks, and a copy's record
// without a shader clock, groups or iterations.
TEST(SyncValidation, TheUploadCopyPresetsAreCleanAndOrdered) {
  for_legacy_and_enhanced("upload-copy", [](const std::string& name, const CleanRun& run) {
    const auto& upload = run.meta["scenario"]["workloads"][0];
    EXPECT_EQ(upload["kind"], "copy");
    EXPECT_EQ(upload["bytes"], 16u << 20);
    EXPECT_TRUE(upload["threads"].is_null());
    EXPECT_TRUE(upload["groups"].is_null());
    EXPECT_EQ(run.count_pairs({{"Read on direct", "Upload on direct"},
                               {"Read on compute", "Upload on compute"}},
                              {"poll", "ts"}),
              4u * 2u * 2u);  // frames x clocks x readers
    std::size_t copies = 0;
    for (const auto& [key, row] : run.row_of) {
      if (key.second.rfind("Upload", 0) != 0) continue;
      ++copies;
      EXPECT_EQ(run.records.at(row, "kind"), "copy");
      EXPECT_EQ(run.records.at(row, "status"), "ok");
      EXPECT_TRUE(run.records.at(row, "groups").empty());
      EXPECT_TRUE(run.records.at(row, "iterations").empty());
      EXPECT_TRUE(run.records.at(row, "clk_start_us").empty());
      EXPECT_LE(*run.records.number(row, "poll_start_us"), *run.records.number(row, "poll_end_us"));
    }
    EXPECT_EQ(copies, 4u * 2u);
    expect_reported_and_explained(run, name,
                                  {"BUFFER copy/copy_dest -> compute_shading/shader_resource"},
                                  {"TRANSITION copy_dest -> non_pixel_shader_resource"});
  });
}

// A copy into a texture's subresource on each queue, then a dispatch that samples it: clean
// under the layer (the copy writes in TRANSFER_DST_OPTIMAL, its reader's barrier leaves it),
// each reader after its copy on the poll and timestamp clocks, the copy's bytes its mip's.
TEST(SyncValidation, TheUploadTexturePresetsAreCleanAndOrdered) {
  for_legacy_and_enhanced("upload-texture", [](const std::string& name, const CleanRun& run) {
    const auto& upload = run.meta["scenario"]["workloads"][0];
    EXPECT_EQ(upload["kind"], "copy");
    EXPECT_EQ(upload["target"]["texture"], "albedo");
    EXPECT_EQ(upload["bytes"], 2048u * 2048u * 4u);
    EXPECT_EQ(
        run.count_pairs({{"Read albedo", "Upload albedo"}, {"Read heightmap", "Upload heightmap"}},
                        {"poll", "ts"}),
        4u * 2u * 2u);  // frames x clocks x readers
    expect_reported_and_explained(
        run, name,
        {"TEXTURE copy/copy_dest -> compute_shading/shader_resource layout "
         "copy_dest -> shader_resource"},
        {"TRANSITION copy_dest -> non_pixel_shader_resource subresource 0"});
  });
}

}  // namespace
}  // namespace gpuoverlap
