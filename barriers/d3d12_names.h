// Scenario-file names of the D3D12 barrier vocabulary (DirectX-Headers enums), both ways.
// Names are the enum's suffix in lower case ("compute_shading" for
// D3D12_BARRIER_SYNC_COMPUTE_SHADING); flag masks join names with '|'. Only the subset that
// gpuoverlap's workloads can meaningfully use is named; anything else is rejected by the
// parser with the list of accepted names.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "queues/d3d12_types.h"

namespace gpuoverlap {

std::optional<D3D12_RESOURCE_STATES> parse_resource_states(std::string_view text);
std::optional<D3D12_BARRIER_SYNC> parse_barrier_sync(std::string_view text);
std::optional<D3D12_BARRIER_ACCESS> parse_barrier_access(std::string_view text);
std::optional<D3D12_BARRIER_LAYOUT> parse_barrier_layout(std::string_view text);

std::string resource_states_name(D3D12_RESOURCE_STATES states);
std::string barrier_sync_name(D3D12_BARRIER_SYNC sync);
std::string barrier_access_name(D3D12_BARRIER_ACCESS access);
std::string barrier_layout_name(D3D12_BARRIER_LAYOUT layout);

// The accepted names, '|'-joined, for error messages.
std::string resource_state_names();
std::string barrier_sync_names();
std::string barrier_access_names();
std::string barrier_layout_names();

}  // namespace gpuoverlap
