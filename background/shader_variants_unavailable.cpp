// compile_variant in a build without shaderc (the Windows build, whose D3D12 backend will
// compile its variants with D3DCompile where the runtime has it): every compile fails with
// this reason, which the background session records as the task's error.
#include "background/shader_variants.h"

namespace gpuoverlap::background {

namespace {
Error unavailable() {
  return make_error(
      "this build has no shader compiler for background variants (shaderc is part of the "
      "Linux build only)");
}
}  // namespace

Result<std::vector<std::uint32_t>> compile_variant(const ShaderVariant&) { return unavailable(); }

Result<std::vector<std::uint32_t>> compile_hlsl_compute(
    const std::string&, const std::string&, const std::vector<std::pair<std::string, std::string>>&,
    bool) {
  return unavailable();
}

}  // namespace gpuoverlap::background
