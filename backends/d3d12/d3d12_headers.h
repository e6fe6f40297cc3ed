// The D3D12 and DXGI headers, in the order mingw-w64 needs: DirectX-Headers' own d3d12.h
// (queues/d3d12_types.h brings it after rpcndr.h), then dxgi1_6.h, then the __uuidof
// definitions of DirectX-Headers for the interfaces mingw-w64 does not know.
#pragma once

// clang-format off
#include "queues/d3d12_types.h"
#include <dxgi1_6.h>
#include <dxguids/dxguids.h>
// clang-format on
