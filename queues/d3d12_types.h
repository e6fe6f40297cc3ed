// Brings in the D3D12 vocabulary (enums and structs of DirectX-Headers) without any D3D12
// runtime: on Linux through <wsl/winadapter.h>. Only types may be used from here.
#pragma once

// winadapter.h must come first: it defines what d3d12.h expects of windows.h.
// clang-format off
#if defined(_WIN32)
// DirectX-Headers' own d3d12.h (mingw-w64's stops at ID3D12Device1), after rpcndr.h: it asks
// for a newer rpcndr.h than mingw-w64's unless one was included before it.
#include <windows.h>
#include <rpc.h>
#include <rpcndr.h>
#include <directx/d3d12.h>
#else
#include <wsl/winadapter.h>
#include <directx/d3d12.h>
#endif
// clang-format on
