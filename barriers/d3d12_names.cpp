#include "barriers/d3d12_names.h"

#include <cstdint>
#include <cstdio>
#include <utility>

namespace gpuoverlap {

namespace {

template <typename Enum, std::size_t N>
using NameTable = std::pair<std::string_view, Enum>[N];

// Zero-valued names (COMMON, NONE) only parse alone; masks are the OR of their parts.
constexpr std::pair<std::string_view, D3D12_RESOURCE_STATES> kStates[] = {
    {"common", D3D12_RESOURCE_STATE_COMMON},
    {"vertex_and_constant_buffer", D3D12_RESOURCE_STATE_VERTEX_AND_CONSTANT_BUFFER},
    {"index_buffer", D3D12_RESOURCE_STATE_INDEX_BUFFER},
    {"indirect_argument", D3D12_RESOURCE_STATE_INDIRECT_ARGUMENT},
    {"unordered_access", D3D12_RESOURCE_STATE_UNORDERED_ACCESS},
    {"render_target", D3D12_RESOURCE_STATE_RENDER_TARGET},
    {"depth_write", D3D12_RESOURCE_STATE_DEPTH_WRITE},
    {"depth_read", D3D12_RESOURCE_STATE_DEPTH_READ},
    {"non_pixel_shader_resource", D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE},
    {"pixel_shader_resource", D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE},
    {"all_shader_resource", D3D12_RESOURCE_STATE_ALL_SHADER_RESOURCE},
    {"copy_dest", D3D12_RESOURCE_STATE_COPY_DEST},
    {"copy_source", D3D12_RESOURCE_STATE_COPY_SOURCE},
    {"generic_read", D3D12_RESOURCE_STATE_GENERIC_READ},
};

constexpr std::pair<std::string_view, D3D12_BARRIER_SYNC> kSyncs[] = {
    {"none", D3D12_BARRIER_SYNC_NONE},
    {"all", D3D12_BARRIER_SYNC_ALL},
    {"draw", D3D12_BARRIER_SYNC_DRAW},
    {"input_assembler", D3D12_BARRIER_SYNC_INPUT_ASSEMBLER},
    {"vertex_shading", D3D12_BARRIER_SYNC_VERTEX_SHADING},
    {"pixel_shading", D3D12_BARRIER_SYNC_PIXEL_SHADING},
    {"depth_stencil", D3D12_BARRIER_SYNC_DEPTH_STENCIL},
    {"render_target", D3D12_BARRIER_SYNC_RENDER_TARGET},
    {"compute_shading", D3D12_BARRIER_SYNC_COMPUTE_SHADING},
    {"copy", D3D12_BARRIER_SYNC_COPY},
    {"all_shading", D3D12_BARRIER_SYNC_ALL_SHADING},
    {"non_pixel_shading", D3D12_BARRIER_SYNC_NON_PIXEL_SHADING},
    {"split", D3D12_BARRIER_SYNC_SPLIT},
};

constexpr std::pair<std::string_view, D3D12_BARRIER_ACCESS> kAccesses[] = {
    {"common", D3D12_BARRIER_ACCESS_COMMON},
    {"vertex_buffer", D3D12_BARRIER_ACCESS_VERTEX_BUFFER},
    {"constant_buffer", D3D12_BARRIER_ACCESS_CONSTANT_BUFFER},
    {"index_buffer", D3D12_BARRIER_ACCESS_INDEX_BUFFER},
    {"render_target", D3D12_BARRIER_ACCESS_RENDER_TARGET},
    {"unordered_access", D3D12_BARRIER_ACCESS_UNORDERED_ACCESS},
    {"depth_stencil_write", D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE},
    {"depth_stencil_read", D3D12_BARRIER_ACCESS_DEPTH_STENCIL_READ},
    {"shader_resource", D3D12_BARRIER_ACCESS_SHADER_RESOURCE},
    {"indirect_argument", D3D12_BARRIER_ACCESS_INDIRECT_ARGUMENT},
    {"copy_dest", D3D12_BARRIER_ACCESS_COPY_DEST},
    {"copy_source", D3D12_BARRIER_ACCESS_COPY_SOURCE},
    {"no_access", D3D12_BARRIER_ACCESS_NO_ACCESS},
};

constexpr std::pair<std::string_view, D3D12_BARRIER_LAYOUT> kLayouts[] = {
    {"undefined", D3D12_BARRIER_LAYOUT_UNDEFINED},
    {"common", D3D12_BARRIER_LAYOUT_COMMON},
    {"generic_read", D3D12_BARRIER_LAYOUT_GENERIC_READ},
    {"render_target", D3D12_BARRIER_LAYOUT_RENDER_TARGET},
    {"unordered_access", D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS},
    {"depth_stencil_write", D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE},
    {"depth_stencil_read", D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ},
    {"shader_resource", D3D12_BARRIER_LAYOUT_SHADER_RESOURCE},
    {"copy_source", D3D12_BARRIER_LAYOUT_COPY_SOURCE},
    {"copy_dest", D3D12_BARRIER_LAYOUT_COPY_DEST},
    {"direct_queue_common", D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COMMON},
    {"direct_queue_generic_read", D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_GENERIC_READ},
    {"direct_queue_unordered_access", D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_UNORDERED_ACCESS},
    {"direct_queue_shader_resource", D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_SHADER_RESOURCE},
    {"direct_queue_copy_source", D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COPY_SOURCE},
    {"direct_queue_copy_dest", D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COPY_DEST},
    {"compute_queue_common", D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COMMON},
    {"compute_queue_generic_read", D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_GENERIC_READ},
    {"compute_queue_unordered_access", D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_UNORDERED_ACCESS},
    {"compute_queue_shader_resource", D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_SHADER_RESOURCE},
    {"compute_queue_copy_source", D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COPY_SOURCE},
    {"compute_queue_copy_dest", D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COPY_DEST},
};

template <typename Enum, std::size_t N>
std::optional<Enum> parse_single(const NameTable<Enum, N>& table, std::string_view text) {
  for (const auto& [name, value] : table)
    if (name == text) return value;
  return std::nullopt;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// "a|b|c": every part must be a known name; a zero-valued name must stand alone.
template <typename Enum, std::size_t N>
std::optional<Enum> parse_mask(const NameTable<Enum, N>& table, std::string_view text) {
  std::uint32_t mask = 0;
  std::size_t parts = 0;
  bool zero_named = false;
  while (true) {
    const std::size_t bar = text.find('|');
    const auto value = parse_single(table, trim(text.substr(0, bar)));
    if (!value) return std::nullopt;
    zero_named = zero_named || static_cast<std::uint32_t>(*value) == 0;
    mask |= static_cast<std::uint32_t>(*value);
    ++parts;
    if (bar == std::string_view::npos) break;
    text.remove_prefix(bar + 1);
  }
  if (zero_named && parts > 1) return std::nullopt;
  return static_cast<Enum>(mask);
}

// Largest named parts first, so GENERIC_READ prints as one name rather than its bits.
template <typename Enum, std::size_t N>
std::string mask_name(const NameTable<Enum, N>& table, Enum value) {
  std::uint32_t left = static_cast<std::uint32_t>(value);
  if (left == 0) {
    for (const auto& [name, v] : table)
      if (static_cast<std::uint32_t>(v) == 0) return std::string(name);
    return "0";
  }
  std::string text;
  while (left != 0) {
    std::string_view best;
    std::uint32_t best_bits = 0;
    for (const auto& [name, v] : table) {
      const auto bits = static_cast<std::uint32_t>(v);
      if (bits != 0 && (bits & left) == bits &&
          __builtin_popcount(bits) > __builtin_popcount(best_bits)) {
        best = name;
        best_bits = bits;
      }
    }
    if (best_bits == 0) {
      text += (text.empty() ? "0x" : "|0x");
      char hex[9];
      std::snprintf(hex, sizeof hex, "%x", left);
      text += hex;
      break;
    }
    if (!text.empty()) text += '|';
    text += best;
    left &= ~best_bits;
  }
  return text;
}

template <typename Enum, std::size_t N>
std::string names(const NameTable<Enum, N>& table) {
  std::string text;
  for (const auto& [name, value] : table) {
    if (!text.empty()) text += " | ";
    text += name;
  }
  return text;
}

}  // namespace

std::optional<D3D12_RESOURCE_STATES> parse_resource_states(std::string_view text) {
  return parse_mask(kStates, text);
}
std::optional<D3D12_BARRIER_SYNC> parse_barrier_sync(std::string_view text) {
  return parse_mask(kSyncs, text);
}
std::optional<D3D12_BARRIER_ACCESS> parse_barrier_access(std::string_view text) {
  return parse_mask(kAccesses, text);
}
std::optional<D3D12_BARRIER_LAYOUT> parse_barrier_layout(std::string_view text) {
  return parse_single(kLayouts, trim(text));
}

std::string resource_states_name(D3D12_RESOURCE_STATES states) {
  return mask_name(kStates, states);
}
std::string barrier_sync_name(D3D12_BARRIER_SYNC sync) { return mask_name(kSyncs, sync); }
std::string barrier_access_name(D3D12_BARRIER_ACCESS access) {
  return mask_name(kAccesses, access);
}
std::string barrier_layout_name(D3D12_BARRIER_LAYOUT layout) {
  for (const auto& [name, value] : kLayouts)
    if (value == layout) return std::string(name);
  return "layout_" + std::to_string(static_cast<int>(layout));
}

std::string resource_state_names() { return names(kStates); }
std::string barrier_sync_names() { return names(kSyncs); }
std::string barrier_access_names() { return names(kAccesses); }
std::string barrier_layout_names() { return names(kLayouts); }

}  // namespace gpuoverlap
