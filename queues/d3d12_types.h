// Brings in the D3D12 vocabulary (enums and structs of DirectX-Headers) without any D3D12
// runtime: on Linux through <wsl/winadapter.h>. Only types may be used from here.
#pragma once

// winadapter.h must come first: it defines what d3d12.h expects of windows.h.
// clang-format off
#if defined(_WIN32)
#include <d3d12.h>
#else
#include <wsl/winadapter.h>
#include <directx/d3d12.h>
#endif
// clang-format on
