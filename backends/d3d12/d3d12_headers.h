// The D3D12 and DXGI headers, in the order mingw-w64 needs: DirectX-Headers' own d3d12.h
// (queues/d3d12_types.h brings it after rpcndr.h), then dxgi1_6.h, then the __uuidof
// definitions of DirectX-Headers for the interfaces mingw-w64 does not know.
#pragma once

// clang-format off
#include "queues/d3d12_types.h"
#include <dxgi1_6.h>
#include <dxguids/dxguids.h>
// clang-format on

namespace gpuoverlap::d3d12 {

// Methods that return a struct are declared with an out parameter for compilers other than
// MSVC (the C++ ABI returns such structs differently from the COM one): one spelling here.
#if defined(_MSC_VER)
inline D3D12_CPU_DESCRIPTOR_HANDLE cpu_start(ID3D12DescriptorHeap* heap) {
  return heap->GetCPUDescriptorHandleForHeapStart();
}
inline D3D12_GPU_DESCRIPTOR_HANDLE gpu_start(ID3D12DescriptorHeap* heap) {
  return heap->GetGPUDescriptorHandleForHeapStart();
}
inline D3D12_RESOURCE_DESC desc_of(ID3D12Resource* resource) { return resource->GetDesc(); }
inline D3D12_RESOURCE_ALLOCATION_INFO allocation_info(ID3D12Device* device,
                                                      const D3D12_RESOURCE_DESC& desc) {
  return device->GetResourceAllocationInfo(0, 1, &desc);
}
#else
inline D3D12_CPU_DESCRIPTOR_HANDLE cpu_start(ID3D12DescriptorHeap* heap) {
  D3D12_CPU_DESCRIPTOR_HANDLE out{};
  heap->GetCPUDescriptorHandleForHeapStart(&out);
  return out;
}
inline D3D12_GPU_DESCRIPTOR_HANDLE gpu_start(ID3D12DescriptorHeap* heap) {
  D3D12_GPU_DESCRIPTOR_HANDLE out{};
  heap->GetGPUDescriptorHandleForHeapStart(&out);
  return out;
}
inline D3D12_RESOURCE_DESC desc_of(ID3D12Resource* resource) {
  D3D12_RESOURCE_DESC out{};
  resource->GetDesc(&out);
  return out;
}
inline D3D12_RESOURCE_ALLOCATION_INFO allocation_info(ID3D12Device* device,
                                                      const D3D12_RESOURCE_DESC& desc) {
  D3D12_RESOURCE_ALLOCATION_INFO out{};
  device->GetResourceAllocationInfo(&out, 0, 1, &desc);
  return out;
}
#endif

}  // namespace gpuoverlap::d3d12
