#include "background/shader_variants.h"

#include <shaderc/shaderc.h>

#include <memory>

#include "perlin_hlsl_source.h"

namespace gpuoverlap::background {

Result<std::vector<std::uint32_t>> compile_hlsl_compute(
    const std::string& source, const std::string& entry_point,
    const std::vector<std::pair<std::string, std::string>>& defines, bool optimize) {
  const std::unique_ptr<shaderc_compiler, decltype(&shaderc_compiler_release)> compiler(
      shaderc_compiler_initialize(), &shaderc_compiler_release);
  const std::unique_ptr<shaderc_compile_options, decltype(&shaderc_compile_options_release)>
      options(shaderc_compile_options_initialize(), &shaderc_compile_options_release);
  if (!compiler || !options) return make_error("shaderc: cannot create a compiler");
  shaderc_compile_options_set_source_language(options.get(), shaderc_source_language_hlsl);
  shaderc_compile_options_set_target_env(options.get(), shaderc_target_env_vulkan,
                                         shaderc_env_version_vulkan_1_1);
  shaderc_compile_options_set_optimization_level(
      options.get(),
      optimize ? shaderc_optimization_level_performance : shaderc_optimization_level_zero);
  for (const auto& [name, value] : defines)
    shaderc_compile_options_add_macro_definition(options.get(), name.data(), name.size(),
                                                 value.data(), value.size());
  const std::unique_ptr<shaderc_compilation_result, decltype(&shaderc_result_release)> result(
      shaderc_compile_into_spv(compiler.get(), source.data(), source.size(), shaderc_compute_shader,
                               "perlin.hlsl", entry_point.c_str(), options.get()),
      &shaderc_result_release);
  if (!result) return make_error("shaderc: no result");
  if (shaderc_result_get_compilation_status(result.get()) != shaderc_compilation_status_success)
    return make_error("shaderc: " + std::string(shaderc_result_get_error_message(result.get())));
  const std::size_t bytes = shaderc_result_get_length(result.get());
  std::vector<std::uint32_t> words(bytes / sizeof(std::uint32_t));
  const char* data = shaderc_result_get_bytes(result.get());
  std::copy(data, data + words.size() * sizeof(std::uint32_t),
            reinterpret_cast<char*>(words.data()));
  return words;
}

VariantBytecode variant_bytecode() { return VariantBytecode::spirv; }

Result<std::vector<std::uint32_t>> compile_variant(const ShaderVariant& variant) {
  std::vector<std::pair<std::string, std::string>> defines;
  if (variant.iterations)
    defines.emplace_back("GPUOVERLAP_FIXED_ITERATIONS", std::to_string(variant.iterations) + "u");
  if (variant.salt)
    defines.emplace_back("GPUOVERLAP_VARIANT_SALT", std::to_string(variant.salt) + "u");
  return compile_hlsl_compute(std::string(kPerlinHlslSource), "cs_main", defines, variant.optimize);
}

}  // namespace gpuoverlap::background
