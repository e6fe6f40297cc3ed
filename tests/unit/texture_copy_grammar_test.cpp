#include <gtest/gtest.h>

#include "scenario_test_texts.h"
#include "scenarios/frame_plan.h"
#include "scenarios/scenario.h"
#include "scenarios/scenario_toml.h"

namespace gpuoverlap::scenario_tests {
namespace {

// [[texture]] declares a texture; a draw's target renders into one of its subresources.
TEST(ScenarioParser, ReadsTexturesAndDrawTargetsAndRefusesBadOnes) {
  auto with = [](const std::string& textures, const std::string& draw) {
    return two_queues(R"(
[[workload]]
name = "M0"
queue = "direct"
kind = "graphics"
)" + draw) +
           textures;
  };
  const std::string chain = R"(
[[texture]]
name = "chain"
format = "rgba16f"
width = 256
height = 64
mips = 3
slices = 2
)";
  auto parsed =
      parse_scenario(with(chain, "target = { texture = \"chain\", mip = 2, slice = 1 }\n"), "t");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->textures.size(), 1u);
  const TextureSpec& t = parsed->textures[0];
  EXPECT_EQ(t.format, TextureFormat::rgba16f);
  EXPECT_EQ(t.width, 256u);
  EXPECT_EQ(t.mips, 3u);
  EXPECT_EQ(t.slices, 2u);
  const auto& drawn = parsed->workloads.back().target;
  ASSERT_TRUE(drawn);
  EXPECT_EQ(drawn->mip, 2u);
  EXPECT_EQ(drawn->slice, 1u);
  auto refused = [&](const std::string& textures, const std::string& draw,
                     const std::string& reason) {
    const std::string message = error_of(with(textures, draw));
    EXPECT_NE(message.find(reason), std::string::npos) << textures << draw << "\n" << message;
    EXPECT_NE(message.find("test.toml:"), std::string::npos) << message;
  };
  const std::string target = "target = { texture = \"chain\" }\n";
  refused(R"(
[[texture]]
name = "chain"
format = "d24s8"
width = 4
height = 4
)",
          target, "unknown format 'd24s8'");
  // d32: a draw's depth attachment; a dispatch's unordered-access store cannot write it.
  const std::string depth =
      "\n[[texture]]\nname = \"chain\"\nformat = \"d32\"\nwidth = 64\nheight = 64\n";
  auto depth_drawn = parse_scenario(with(depth, target), "t");
  ASSERT_TRUE(depth_drawn) << depth_drawn.error().message;
  EXPECT_EQ(depth_drawn->textures[0].format, TextureFormat::d32);
  EXPECT_EQ(depth_drawn->plan->barriers.texture_start_states[0], D3D12_RESOURCE_STATE_DEPTH_WRITE);
  const std::string depth_dispatch =
      two_queues(
          "\n[[workload]]\nname = \"W\"\nqueue = \"direct\"\ntarget = { texture = \"chain\" }\n") +
      depth;
  EXPECT_NE(error_of(depth_dispatch).find("which is d32: a dispatch writes r32f textures only"),
            std::string::npos)
      << error_of(depth_dispatch);
  refused("\n[[texture]]\nname = \"chain\"\nwidth = 4\n", target, "needs 'height'");
  refused("\n[[texture]]\nname = \"chain\"\nwidth = 4\nheight = 4\nmips = 4\n", target,
          "must be in [1, 3]");  // 4 x 4 has 3 mips
  refused("\n[[texture]]\nname = \"chain\"\nwidth = 8192\nheight = 4\n", target,
          "must be in [1, 4096]");
  refused(chain + chain, target, "duplicate texture name 'chain'");
  refused(chain, "target = { texture = \"other\" }\n", "undeclared texture 'other'");
  refused(chain, "target = { texture = \"chain\", mip = 3 }\n", "has 3 mips");
  refused(chain, "target = { texture = \"chain\", slice = 2 }\n", "has 2 slices");
  refused(chain, "target = \"chain\"\n", "must be a table");
  refused(chain, target + "groups = 4\n", "'groups' does not apply");
  refused(chain, "target = { texture = \"chain\", discard = 1 }\n",
          "'discard' must be true or false");
  // A second write into a subresource needs a read between.
  const std::string twice = with(chain, target + R"(
[[workload]]
name = "M1"
queue = "direct"
kind = "graphics"
)" + target);
  const std::string rewritten = error_of(twice);
  EXPECT_NE(rewritten.find("workload 'M1': 'M1' renders into mip 0, slice 0 of 'chain', which an "
                           "earlier write left and nothing read since"),
            std::string::npos)
      << rewritten;
  EXPECT_NE(rewritten.find("[target-rewrite]"), std::string::npos);
  // A texture is restored at frame start on one queue: its draws share it.
  const std::string two_direct = R"(name = "t"
[queues.a]
type = "direct"
[queues.b]
type = "direct"
[[texture]]
name = "chain"
width = 64
height = 4
mips = 2
[[workload]]
name = "M0"
queue = "a"
kind = "graphics"
target = { texture = "chain", mip = 0 }
[[workload]]
name = "M1"
queue = "b"
kind = "graphics"
target = { texture = "chain", mip = 1 }
)";
  EXPECT_NE(error_of(two_direct)
                .find("test.toml:20: workload 'M1' writes 'chain' on queue 'b', 'M0' on queue "
                      "'a': a texture's writers share one queue"),
            std::string::npos)
      << error_of(two_direct);
}

// A dispatch writes r32f textures only, a thread per pixel of the target mip in groups of 64.
TEST(ScenarioParser, ADispatchWritesR32fTexturesAThreadPerPixel) {
  auto dispatch_into = [](const std::string& format, std::uint32_t mip) {
    return two_queues(R"(
[[workload]]
name = "K"
queue = "direct"
target = { texture = "chain", mip = )" +
                      std::to_string(mip) + " }\n") +
           "[[texture]]\nname = \"chain\"\nformat = \"" + format +
           "\"\nwidth = 256\nheight = 64\nmips = 6\n";
  };
  EXPECT_NE(error_of(dispatch_into("rgba8", 0))
                .find("workload 'K' is a dispatch writing 'chain', which is rgba8: a dispatch "
                      "writes r32f textures only"),
            std::string::npos)
      << error_of(dispatch_into("rgba8", 0));
  EXPECT_NE(error_of(dispatch_into("r32f", 5))
                .find("workload 'K' writes mip 5 of 'chain', 16 pixels: a dispatch runs a thread "
                      "per pixel in groups of 64"),
            std::string::npos)
      << error_of(dispatch_into("r32f", 5));
  // 4096 x 1024 pixels: 65,536 groups of 64, one more than a dispatch may run.
  const std::string big = dispatch_into("r32f", 0);
  const std::string too_big =
      big.substr(0, big.find("width = 256")) + "width = 4096\nheight = 1024\nmips = 6\n";
  EXPECT_NE(error_of(too_big).find("4194304 pixels: more than 65535 groups of 64 threads"),
            std::string::npos)
      << error_of(too_big);
  {
    auto k = parse_scenario(dispatch_into("r32f", 2), "t");  // 64 x 16 pixels
    ASSERT_TRUE(k) << k.error().message;
    ASSERT_TRUE(k->workloads.back().target);
    EXPECT_EQ(k->workloads.back().target->mip, 2u);
    EXPECT_EQ(workload_shape(*k, k->workloads.size() - 1).threads, 64u * 16u);
  }
  EXPECT_NE(error_of(dispatch_into("r32f", 0) + "[[workload]]\nname = \"K2\"\nqueue = "
                                                "\"direct\"\ntarget = { texture = \"chain\", "
                                                "mip = 0 }\ngroups = 2\n")
                .find("it runs a thread per pixel of the target mip's, so 'groups' does not apply"),
            std::string::npos);
}

TEST(ScenarioParser, ReadsHeapsOfAliasedTexturesAndRefusesBadOnes) {
  auto scenario = [](const std::string& second_texture, const std::string& second_draw) {
    return std::string(R"(name = "h"
[queues.direct]
type = "direct"
[[texture]]
name = "a"
width = 64
height = 64
heap = "transient"
)") + second_texture +
           R"(
[[workload]]
name = "Draw A"
queue = "direct"
kind = "graphics"
target = { texture = "a" }
[[workload]]
name = "Read A"
queue = "direct"
groups = 1
depends_on = ["Draw A"]
)" + second_draw;
  };
  const std::string b =
      "[[texture]]\nname = \"b\"\nwidth = 64\nheight = 64\nheap = \"transient\"\n";
  const std::string draw_b =
      "[[workload]]\nname = \"Draw B\"\nqueue = \"direct\"\nkind = \"graphics\"\n"
      "target = { texture = \"b\" }\n";
  auto parsed = parse_scenario(scenario(b, draw_b), "h.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->textures[0].heap, "transient");
  EXPECT_EQ(parsed->textures[1].heap, "transient");
  EXPECT_EQ(parsed->plan->barriers.texture_aliased, (std::vector<bool>{true, true}));
  auto again = parse_scenario(to_toml(*parsed), "again.toml");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->textures, parsed->textures);

  // One texture alone in its heap (a misspelt name, most likely).
  std::string error = error_of(scenario(
      "[[texture]]\nname = \"b\"\nwidth = 64\nheight = 64\nheap = \"transiant\"\n", draw_b));
  EXPECT_NE(error.find("texture 'a' is the only one in heap 'transient'"), std::string::npos)
      << error;
  EXPECT_NE(error.find("test.toml"), std::string::npos);
  // A texture of several subresources.
  error = error_of(scenario(
      "[[texture]]\nname = \"b\"\nwidth = 64\nheight = 64\nmips = 2\nheap = \"transient\"\n",
      draw_b));
  EXPECT_NE(error.find("a texture in a heap has one of each"), std::string::npos) << error;
  // Nothing writes b.
  error = error_of(scenario(b, ""));
  EXPECT_NE(error.find("'b' in heap 'transient' is not written"), std::string::npos) << error;
  // A bad heap name.
  error = error_of(
      scenario("[[texture]]\nname = \"b\"\nwidth = 64\nheight = 64\nheap = \"\"\n", draw_b));
  EXPECT_NE(error.find("heap name '' is empty"), std::string::npos) << error;
  // 'Late' reads a after Draw B wrote b: a would still be read while b holds the memory.
  error =
      error_of(scenario(b, draw_b + "depends_on = [\"Draw A\"]\n[[workload]]\nname = \"Late\"\n"
                                    "queue = \"direct\"\ngroups = 1\ndepends_on = [\"Draw A\"]\n"));
  EXPECT_NE(error.find("[heap-overlap]"), std::string::npos) << error;
}

// A copy: sized by bytes (at least what a consumer reads, whole words, at most 1 GiB), with
// nothing of a dispatch's size, no target and no dependencies; consumers read its output.
TEST(ScenarioParser, ReadsCopiesAndRefusesWhatDoesNotApply) {
  const std::string head =
      "name = \"t\"\n[queues.direct]\ntype = \"direct\"\n[queues.compute]\ntype = "
      "\"compute\"\n[[texture]]\nname = \"tex\"\nformat = \"r32f\"\nwidth = 64\nheight = 64\n";
  auto copy = [&](const std::string& lines) {
    return head + "[[workload]]\nname = \"U\"\nqueue = \"compute\"\nkind = \"copy\"\n" + lines +
           "\n[[workload]]\nname = \"R\"\nqueue = \"direct\"\ndepends_on = [\"U\"]\n";
  };
  auto parsed = parse_scenario(copy("bytes = 4096"), "t.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->workloads[0].kind, WorkloadKind::copy);
  EXPECT_EQ(parsed->workloads[0].bytes, 4096u);
  EXPECT_EQ(parsed->workloads[0].groups, 0u);
  ASSERT_EQ(parsed->workloads[1].depends_on.size(), 1u);
  EXPECT_EQ(parse_scenario(copy(""), "t.toml")->workloads[0].bytes, kDefaultCopyBytes);
  auto refused = [&](const std::string& lines, const std::string& reason) {
    const std::string message = error_of(copy(lines));
    EXPECT_NE(message.find(reason), std::string::npos) << lines << ": " << message;
    EXPECT_EQ(message.rfind("test.toml:15: ", 0), 0u) << message;
  };
  refused("bytes = 4092", "must be in [4096, 1073741824]");
  refused("bytes = 1073741828", "must be in [4096, 1073741824]");
  refused("bytes = 4098", "not a whole number of 4-byte words");
  refused("groups = 2", "is a copy: 'groups' does not apply");
  refused("iterations = 2", "is a copy: 'iterations' does not apply");
  // Into a declared texture: exactly its subresource's bytes (64 x 64 r32f: 16384), no discard.
  auto into = parse_scenario(copy("target = { texture = \"tex\" }"), "t.toml");
  ASSERT_TRUE(into) << into.error().message;
  EXPECT_EQ(into->workloads[0].bytes, 64u * 64u * 4u);
  ASSERT_TRUE(into->workloads[0].target.has_value());
  EXPECT_TRUE(into->plan->barriers.texture_copy_destination[0]);
  EXPECT_EQ(into->plan->barriers.texture_start_states[0], D3D12_RESOURCE_STATE_COPY_DEST);
  auto exact = parse_scenario(copy("target = { texture = \"tex\" }\nbytes = 16384"), "t.toml");
  EXPECT_TRUE(exact) << exact.error().message;
  refused("bytes = 4096\ntarget = { texture = \"tex\" }", "which takes 16384 bytes");
  refused("target = { texture = \"tex\", discard = true }", "is a copy: 'discard' does not apply");
  std::string depth_head = head;
  depth_head.replace(depth_head.find("r32f"), 4, "d32");
  const std::string into_depth = depth_head +
                                 "[[workload]]\nname = \"U\"\nqueue = \"direct\"\nkind = "
                                 "\"copy\"\ntarget = { texture = \"tex\" }\n";
  EXPECT_NE(error_of(into_depth).find("which is d32: a depth texture is written by draws only"),
            std::string::npos)
      << error_of(into_depth);
  const std::string dispatch_with_bytes =
      head + "[[workload]]\nname = \"D\"\nqueue = \"direct\"\nbytes = 4096\n";
  EXPECT_NE(error_of(dispatch_with_bytes).find("is not a copy: 'bytes' sizes a copy only"),
            std::string::npos);
}

// A readback: a copy with depends_on reads its one producer's output into a readback buffer,
// as many bytes as that output has (a dispatch's 4 per thread, a draw's R32F render target, a
// declared texture's subresource).
TEST(ScenarioParser, ReadsReadbackCopiesSizedByTheirSource) {
  const std::string head =
      "name = \"t\"\n[queues.direct]\ntype = \"direct\"\n[queues.compute]\ntype = "
      "\"compute\"\n[[texture]]\nname = \"tex\"\nformat = \"rgba16f\"\nwidth = 64\nheight = "
      "32\nmips = 2\n"
      "[[workload]]\nname = \"D\"\nqueue = \"compute\"\ngroups = 3\n"
      "[[workload]]\nname = \"G\"\nqueue = \"direct\"\nkind = \"graphics\"\ngroups = 5\n"
      "[[workload]]\nname = \"T\"\nqueue = \"direct\"\nkind = \"graphics\"\ntarget = { texture = "
      "\"tex\", mip = 1 }\n";
  auto readback = [&](const std::string& lines) {
    return head + "[[workload]]\nname = \"R\"\nqueue = \"compute\"\nkind = \"copy\"\n" + lines;
  };
  const auto threads = [](std::uint32_t groups) { return groups_shape(groups).threads; };
  for (const auto& [source, bytes] : std::vector<std::pair<std::string, std::uint64_t>>{
           {"D", threads(3) * 4ull}, {"G", 1024ull * 5 * 4}, {"T", 32ull * 16 * 8}}) {
    auto parsed = parse_scenario(readback("depends_on = [\"" + source + "\"]\n"), "t.toml");
    ASSERT_TRUE(parsed) << parsed.error().message;
    const WorkloadSpec& copy = parsed->workloads.back();
    EXPECT_TRUE(is_readback(copy));
    EXPECT_EQ(copy.bytes, bytes) << source;
    // It round-trips: to_toml writes its dependency.
    auto again = parse_scenario(to_toml(*parsed), "again.toml");
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(again->workloads.back().depends_on.size(), 1u);
    EXPECT_EQ(again->workloads.back().bytes, bytes);
  }
  auto refused = [&](const std::string& toml, const std::string& reason) {
    const std::string message = error_of(toml);
    EXPECT_NE(message.find(reason), std::string::npos) << toml << ": " << message;
    EXPECT_EQ(message.rfind("test.toml:", 0), 0u) << message;
  };
  refused(readback("depends_on = [\"D\", \"G\"]\n"),
          "it reads back one workload's output, so 'depends_on' names exactly one");
  refused(readback("depends_on = [\"D\"]\ntarget = { texture = \"tex\" }\n"),
          "'target' does not apply");
  refused(readback("depends_on = [\"D\"]\nbytes = 4096\n"),
          "whose output takes " + std::to_string(threads(3) * 4) + " bytes");
  refused(readback("depends_on = [{ workload = \"D\", barrier = \"none\" }]\n"),
          "it reads that output, behind a barrier");
  refused(readback("depends_on = [{ workload = \"D\", reads_output = false }]\n"),
          "it reads that output, behind a barrier");
  refused(readback("depends_on = [\"D\"]\n") +
              "[[workload]]\nname = \"X\"\nqueue = \"compute\"\ndepends_on = [\"R\"]\n",
          "a readback: its output is read by the CPU, not by workloads");
}

}  // namespace
}  // namespace gpuoverlap::scenario_tests
