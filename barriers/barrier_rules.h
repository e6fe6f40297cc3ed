// The D3D12 rules a barrier description must follow, checked before any GPU work (the D3D12
// Enhanced Barriers specification and the D3D12 resource-barrier documentation). Each rule has
// a stable id that appears in messages and tests. Pure functions over DirectX-Headers types.
#pragma once

#include <string>
#include <vector>

#include "barriers/barrier_model.h"

namespace gpuoverlap {

struct BarrierFinding {
  enum class Severity { error, warning };
  Severity severity = Severity::error;
  std::string rule;     // e.g. "global-barrier-layout"
  std::string message;  // one sentence, in D3D12 terms
};

// A legacy transition recorded on a `queue`-type command list, on a resource of `resource`
// kind (gpuoverlap creates a texture for unordered access only where a dispatch writes it:
// `texture_unordered_access`):
//   legacy-write-combined  a write state (UNORDERED_ACCESS, RENDER_TARGET, COPY_DEST) is combined
//                          with another state;
//   legacy-same-state      StateBefore equals StateAfter;
//   queue-state            a state compute command lists cannot use (RENDER_TARGET,
//                          PIXEL_SHADER_RESOURCE, INDEX_BUFFER, GENERIC_READ's graphics parts);
//   resource-state         RENDER_TARGET on a buffer, UNORDERED_ACCESS on a texture no dispatch
//                          writes.
std::vector<BarrierFinding> check_legacy_transition(D3D12_RESOURCE_STATES before,
                                                    D3D12_RESOURCE_STATES after, QueueType queue,
                                                    ResourceKind resource,
                                                    bool texture_unordered_access = false);

// One enhanced barrier of `type` (its layouts are ignored unless TEXTURE):
//   barrier-type-resource  BUFFER barrier on a texture or TEXTURE barrier on a buffer;
//   global-barrier-layout  a GLOBAL barrier where the texture needs a layout change (global
//                          barriers change no layout) or where a layout is given;
//   buffer-barrier-layout  a layout given for a BUFFER barrier (buffers have none);
//   queue-layout           DIRECT_QUEUE_* or RENDER_TARGET layouts on a compute queue,
//                          COMPUTE_QUEUE_* layouts on a direct queue;
//   queue-sync             graphics sync scopes (DRAW, INPUT_ASSEMBLER, VERTEX_SHADING,
//                          PIXEL_SHADING, DEPTH_STENCIL, RENDER_TARGET) on a compute queue;
//   queue-access           RENDER_TARGET, VERTEX_BUFFER or INDEX_BUFFER access on a compute queue;
//   sync-access            an access the sync scope cannot perform (RENDER_TARGET access needs
//                          RENDER_TARGET, DRAW or ALL sync; shader accesses need a shading
//                          scope; copies need COPY); SYNC_NONE needs NO_ACCESS;
//   no-access-combined     NO_ACCESS combined with another access;
//   split-combined         SYNC_SPLIT combined with another scope;
//   layout-access          a texture access its layout does not allow (e.g. SHADER_RESOURCE
//                          access in the RENDER_TARGET layout), UNDEFINED after a barrier
//                          with an access;
//   resource-state         a TEXTURE barrier into UNORDERED_ACCESS on a texture no dispatch
//                          writes (`texture_unordered_access`, as for legacy transitions);
//   access-before-common   (warning) AccessBefore COMMON: every write kind is flushed.
std::vector<BarrierFinding> check_enhanced_barrier(
    D3D12_BARRIER_TYPE type, D3D12_BARRIER_SYNC sync_before, D3D12_BARRIER_SYNC sync_after,
    D3D12_BARRIER_ACCESS access_before, D3D12_BARRIER_ACCESS access_after,
    D3D12_BARRIER_LAYOUT layout_before, D3D12_BARRIER_LAYOUT layout_after, QueueType queue,
    ResourceKind resource, bool texture_unordered_access = false);

// Does `sync` include the pipeline work of `stage` (a single scope bit), directly or through
// an umbrella scope (ALL, DRAW, ALL_SHADING, NON_PIXEL_SHADING)?
bool sync_covers(D3D12_BARRIER_SYNC sync, D3D12_BARRIER_SYNC stage);

// Whether a `queue`-type command list may name a legacy state or an enhanced layout (compute
// lists: no graphics states, no RENDER_TARGET or DIRECT_QUEUE_* layouts; direct lists: no
// COMPUTE_QUEUE_* layouts).
bool state_usable_on(QueueType queue, D3D12_RESOURCE_STATES state);
bool layout_usable_on(QueueType queue, D3D12_BARRIER_LAYOUT layout);

// The layout a legacy state implies for a texture and back (RENDER_TARGET <->
// RENDER_TARGET, shader-resource states <-> SHADER_RESOURCE, UNORDERED_ACCESS, COPY_*, COMMON).
D3D12_BARRIER_LAYOUT layout_for_legacy_state(D3D12_RESOURCE_STATES state);

}  // namespace gpuoverlap
