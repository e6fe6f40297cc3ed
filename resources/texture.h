// Textures a scenario declares ([[texture]]): what a draw renders into and a later workload
// reads, one subresource (a mip of an array slice) at a time. API-neutral: the backends create
// them (Vulkan images, D3D12 committed resources) and the barrier planner tracks the state of
// each subresource through the frame.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.h"

namespace gpuoverlap {

// Formats a shader can read as a float (its first channel): three color formats a draw can
// render into, and d32, a 32-bit float depth buffer, which only a draw writes (as its depth
// attachment, with no color attachment) and shaders read as depth.
enum class TextureFormat { rgba8, rgba16f, r32f, d32 };
inline constexpr EnumNames<TextureFormat, 4> kTextureFormatNames{
    {{TextureFormat::rgba8, "rgba8"},
     {TextureFormat::rgba16f, "rgba16f"},
     {TextureFormat::r32f, "r32f"},
     {TextureFormat::d32, "d32"}}};
inline constexpr bool is_depth(TextureFormat format) { return format == TextureFormat::d32; }
std::string_view to_string(TextureFormat format);
std::optional<TextureFormat> parse_texture_format(std::string_view text);
std::uint32_t bytes_per_texel(TextureFormat format);

// Limits every backend guarantees for a 2-D render target (Vulkan's maxImageDimension2D and
// maxImageArrayLayers minimums, D3D12's 16384 and 2048), kept lower so a scenario's textures
// stay within a GPU's memory: a 4096 x 4096 RGBA16F texture with 16 slices is 2 GiB.
inline constexpr std::uint32_t kMaxTextureSize = 4096;
inline constexpr std::uint32_t kMaxTextureSlices = 16;
inline constexpr std::uint64_t kMaxTextureBytes = std::uint64_t{1} << 30;  // per texture, 1 GiB
inline constexpr std::size_t kMaxTexturesPerScenario = 16;

struct TextureSpec {
  std::string name;
  TextureFormat format = TextureFormat::rgba8;
  std::uint32_t width = 0, height = 0;  // of mip 0, in texels
  std::uint32_t mips = 1, slices = 1;
  // The heap it is placed in ([[texture]] heap = NAME): every texture of one heap is placed at
  // its offset 0, so they alias, and one of them holds the memory at a time (the barrier
  // planner's aliasing hand-overs). Empty: memory of its own.
  std::string heap;
  std::uint32_t subresources() const { return mips * slices; }
  bool operator==(const TextureSpec&) const = default;
};

// The heaps `textures` name, each once, in the order they first appear.
std::vector<std::string> heap_names(const std::vector<TextureSpec>& textures);

// The full mip chain of a width x height texture: down to 1 x 1.
std::uint32_t full_mip_count(std::uint32_t width, std::uint32_t height);
// A mip's size: halved per level, never below 1.
inline constexpr std::uint32_t mip_size(std::uint32_t size, std::uint32_t mip) {
  return (size >> mip) > 0 ? (size >> mip) : 1;
}
// The bytes of one subresource at `mip`, tightly packed (what a copy into or out of it moves).
std::uint64_t subresource_bytes(const TextureSpec& texture, std::uint32_t mip);
// The bytes of every subresource (what the texture takes in memory, alignment aside).
std::uint64_t texture_bytes(const TextureSpec& texture);

// One subresource a workload renders into.
struct TextureTarget {
  std::size_t texture = 0;  // index into Scenario::textures
  std::uint32_t mip = 0, slice = 0;
  // The draw covers every texel and its old contents do not matter: where the subresource must
  // first go back to RENDER_TARGET, an enhanced barrier may DISCARD them (from UNDEFINED).
  bool discard = false;
  bool operator==(const TextureTarget&) const = default;
};

}  // namespace gpuoverlap
