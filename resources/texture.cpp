#include "resources/texture.h"

#include <algorithm>

namespace gpuoverlap {

std::string_view to_string(TextureFormat format) { return name_of(kTextureFormatNames, format); }

std::optional<TextureFormat> parse_texture_format(std::string_view text) {
  return value_of(kTextureFormatNames, text);
}

std::uint32_t bytes_per_texel(TextureFormat format) {
  switch (format) {
    case TextureFormat::rgba8:
    case TextureFormat::r32f:
    case TextureFormat::d32:
      return 4;
    case TextureFormat::rgba16f:
      return 8;
  }
  return 4;
}

std::uint32_t full_mip_count(std::uint32_t width, std::uint32_t height) {
  std::uint32_t size = width > height ? width : height;
  std::uint32_t mips = 1;
  while (size > 1) {
    size >>= 1;
    ++mips;
  }
  return mips;
}

std::uint64_t subresource_bytes(const TextureSpec& texture, std::uint32_t mip) {
  return std::uint64_t{mip_size(texture.width, mip)} * mip_size(texture.height, mip) *
         bytes_per_texel(texture.format);
}

std::uint64_t texture_bytes(const TextureSpec& texture) {
  std::uint64_t bytes = 0;
  for (std::uint32_t mip = 0; mip < texture.mips; ++mip) bytes += subresource_bytes(texture, mip);
  return bytes * texture.slices;
}

std::vector<std::string> heap_names(const std::vector<TextureSpec>& textures) {
  std::vector<std::string> names;
  for (const TextureSpec& t : textures)
    if (!t.heap.empty() && std::find(names.begin(), names.end(), t.heap) == names.end())
      names.push_back(t.heap);
  return names;
}

}  // namespace gpuoverlap
