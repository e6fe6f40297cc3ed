// Run-time compiles of specialised workload variants (background/shader_variants.h).
#include "background/shader_variants.h"

#include <gtest/gtest.h>

namespace gpuoverlap::background {
namespace {

constexpr std::uint32_t kSpirvMagic = 0x07230203;

TEST(ShaderVariants, CompilesTheWorkloadWithItsIterationsFolded) {
  const auto a = compile_variant({64, true});
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_GT(a->size(), 5u);
  EXPECT_EQ((*a)[0], kSpirvMagic);
  // A different constant gives a different module: the constant is really folded in.
  const auto b = compile_variant({128, true});
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_NE(*a, *b);
  // The same variant compiles to the same module (deterministic work per task).
  const auto again = compile_variant({64, true});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*a, *again);
  // Without optimisation it still compiles, to a different module.
  const auto slow = compile_variant({64, false});
  ASSERT_TRUE(slow.ok()) << slow.error().message;
  EXPECT_NE(*a, *slow);
}

TEST(ShaderVariants, ASaltMakesEachCompileDistinctAndNoFoldReadsThePushConstants) {
  const auto a = compile_variant({.iterations = 64, .optimize = true, .salt = 1});
  const auto b = compile_variant({.iterations = 64, .optimize = true, .salt = 2});
  const auto plain = compile_variant({.iterations = 64, .optimize = true});
  ASSERT_TRUE(a.ok() && b.ok() && plain.ok());
  // A driver's shader cache keyed on the module cannot skip a compile.
  EXPECT_NE(*a, *b);
  EXPECT_NE(*a, *plain);
  // Not folded: the loop count stays a push constant, so the count given does not matter.
  const auto unfolded = compile_variant({.iterations = 0, .optimize = true, .salt = 1});
  ASSERT_TRUE(unfolded.ok()) << unfolded.error().message;
  EXPECT_NE(*unfolded, *a);
}

TEST(ShaderVariants, ACompileErrorIsAValueCarryingShadercsMessage) {
  const auto bad = compile_hlsl_compute("[numthreads(1,1,1)] void cs_main() { undefined_thing(); }",
                                        "cs_main", {}, true);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("shaderc:"), std::string::npos);
  EXPECT_NE(bad.error().message.find("undefined_thing"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace gpuoverlap::background
