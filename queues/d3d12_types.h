// Brings in the D3D12 vocabulary (enums and structs of DirectX-Headers) without any D3D12
// runtime: on Linux through <wsl/winadapter.h>. Only types may be used from here.
#pragma once

#if defined(_WIN32)
#include <d3d12.h>
#else
#include <wsl/winadapter.h>
#include <directx/d3d12.h>
#endif
