// compile_variant in the Windows build: D3DCompile from d3dcompiler_47.dll (on every Windows
// 10 and later, and Wine's builtin one), loaded when first needed so that a system without it
// fails each compile with that reason instead of failing to start. The variant is perlin.hlsl's
// cs_main with GPUOVERLAP_D3D12 (the D3D12 backend's registers) compiled for cs_5_0, the DXBC
// bytes packed into 32-bit words (a DXBC container's size is a multiple of 4). Not a GPU API
// call: like shaderc on Linux, it only turns HLSL into bytecode.
#include <windows.h>
// clang-format off
#include <d3dcompiler.h>
// clang-format on

#include <cstring>
#include <mutex>

#include "background/shader_variants.h"
#include "perlin_hlsl_source.h"

namespace gpuoverlap::background {

namespace {

using D3DCompileFunction = decltype(&D3DCompile);

// The loaded D3DCompile, or why there is none. Loaded once, kept for the process's lifetime.
struct Compiler {
  D3DCompileFunction compile = nullptr;
  std::string missing;
};

const Compiler& compiler() {
  static const Compiler loaded = [] {
    Compiler c;
    HMODULE module = LoadLibraryW(L"d3dcompiler_47.dll");
    if (!module) {
      c.missing = "d3dcompiler_47.dll is not on this system";
      return c;
    }
    c.compile = reinterpret_cast<D3DCompileFunction>(
        reinterpret_cast<void*>(GetProcAddress(module, "D3DCompile")));
    if (!c.compile) c.missing = "d3dcompiler_47.dll has no D3DCompile";
    return c;
  }();
  return loaded;
}

std::string blob_text(ID3DBlob* blob) {
  if (!blob) return {};
  std::string text(static_cast<const char*>(blob->GetBufferPointer()), blob->GetBufferSize());
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

}  // namespace

Result<std::vector<std::uint32_t>> compile_hlsl_compute(
    const std::string& source, const std::string& entry_point,
    const std::vector<std::pair<std::string, std::string>>& defines, bool optimize) {
  const Compiler& c = compiler();
  if (!c.compile) return make_error("D3DCompile unavailable: " + c.missing);
  std::vector<D3D_SHADER_MACRO> macros;
  for (const auto& [name, value] : defines) macros.push_back({name.c_str(), value.c_str()});
  macros.push_back({nullptr, nullptr});
  ID3DBlob* code = nullptr;
  ID3DBlob* errors = nullptr;
  const HRESULT result = c.compile(
      source.data(), source.size(), "perlin.hlsl", macros.data(), nullptr, entry_point.c_str(),
      "cs_5_0", optimize ? D3DCOMPILE_OPTIMIZATION_LEVEL3 : D3DCOMPILE_SKIP_OPTIMIZATION, 0, &code,
      &errors);
  const std::string messages = blob_text(errors);
  if (errors) errors->Release();
  if (FAILED(result) || !code) {
    if (code) code->Release();
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08lx", static_cast<unsigned long>(result));
    // The first line names the first error; the rest repeats it in other words.
    return make_error("D3DCompile failed (" + std::string(hex) + ")" +
                      (messages.empty() ? "" : ": " + messages.substr(0, messages.find('\n'))));
  }
  std::vector<std::uint32_t> words((code->GetBufferSize() + 3) / 4, 0);
  std::memcpy(words.data(), code->GetBufferPointer(), code->GetBufferSize());
  code->Release();
  return words;
}

VariantBytecode variant_bytecode() { return VariantBytecode::dxbc; }

Result<std::vector<std::uint32_t>> compile_variant(const ShaderVariant& variant) {
  std::vector<std::pair<std::string, std::string>> defines = {{"GPUOVERLAP_D3D12", "1"}};
  if (variant.iterations)
    defines.emplace_back("GPUOVERLAP_FIXED_ITERATIONS", std::to_string(variant.iterations));
  if (variant.salt) defines.emplace_back("GPUOVERLAP_VARIANT_SALT", std::to_string(variant.salt));
  return compile_hlsl_compute(std::string(kPerlinHlslSource), "cs_main", defines, variant.optimize);
}

}  // namespace gpuoverlap::background
