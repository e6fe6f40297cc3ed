// Specialised variants of the workload shader, compiled at run time with shaderc: the
// driver's background work (D3D12 background processing: a PGO recompile with constants
// folded in). A variant computes exactly what the build-time shader computes for the same
// iteration count, so the foreground may run it instead (BackgroundSpec::bind_committed); it
// is different code: the loop's trip count is a constant the compiler sees.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace gpuoverlap::background {

struct ShaderVariant {
  std::uint32_t iterations = 64;  // folded in as GPUOVERLAP_FIXED_ITERATIONS; 0: not folded
  bool optimize = true;           // shaderc's performance optimisation (spirv-opt passes)
  // Folded in as GPUOVERLAP_VARIANT_SALT (0: not defined): a branch no frame takes, so that
  // compiles of the same variant differ in their bytecode (a driver's shader cache cannot
  // skip one) while computing exactly what the build-time shader computes.
  std::uint32_t salt = 0;
};

// The bytecode compile_variant gives in this build: SPIR-V (shaderc, the Linux build) or DXBC
// (D3DCompile, the Windows build, which has no shaderc). A backend whose pipelines take the
// other refuses background work as unsupported by this build.
enum class VariantBytecode { spirv, dxbc };
VariantBytecode variant_bytecode();

// Compiles perlin.hlsl's cs_main (compute) with the variant's constants to the backend's
// bytecode: in the Linux build SPIR-V for Vulkan 1.1 with shaderc, as the build does with
// glslangValidator; in the Windows build DXBC for cs_5_0 with D3DCompile
// (shader_variants_d3dcompile.cpp), its bytes packed in 32-bit words. Errors carry the
// compiler's message. Thread safe.
Result<std::vector<std::uint32_t>> compile_variant(const ShaderVariant& variant);

// The same for any HLSL text and compute entry point (tests give broken sources).
// Hazard: glslang's HLSL front end turns a missing entry function into an empty entry point
// of that name and reports success; name a function that exists.
Result<std::vector<std::uint32_t>> compile_hlsl_compute(
    const std::string& source, const std::string& entry_point,
    const std::vector<std::pair<std::string, std::string>>& defines, bool optimize);

}  // namespace gpuoverlap::background
