#include "backends/d3d12/hresult.h"

#include <cstdio>

namespace gpuoverlap::d3d12 {

std::string hresult_name(HRESULT result) {
  switch (static_cast<unsigned long>(result)) {
    case 0x00000000ul:
      return "S_OK";
    case 0x00000001ul:
      return "S_FALSE";
    case 0x80004001ul:
      return "E_NOTIMPL";
    case 0x80004002ul:
      return "E_NOINTERFACE";
    case 0x80004003ul:
      return "E_POINTER";
    case 0x80004005ul:
      return "E_FAIL";
    case 0x80070005ul:
      return "E_ACCESSDENIED";
    case 0x8007000Eul:
      return "E_OUTOFMEMORY";
    case 0x80070057ul:
      return "E_INVALIDARG";
    case 0x887A0001ul:
      return "DXGI_ERROR_INVALID_CALL";
    case 0x887A0002ul:
      return "DXGI_ERROR_NOT_FOUND";
    case 0x887A0004ul:
      return "DXGI_ERROR_UNSUPPORTED";
    case 0x887A0005ul:
      return "DXGI_ERROR_DEVICE_REMOVED";
    case 0x887A0006ul:
      return "DXGI_ERROR_DEVICE_HUNG";
    case 0x887A0007ul:
      return "DXGI_ERROR_DEVICE_RESET";
    case 0x887A0020ul:
      return "DXGI_ERROR_DRIVER_INTERNAL_ERROR";
    case 0x887A002Dul:
      return "DXGI_ERROR_SDK_COMPONENT_MISSING";
    case 0x887E0001ul:
      return "D3D12_ERROR_ADAPTER_NOT_FOUND";
    case 0x887E0002ul:
      return "D3D12_ERROR_DRIVER_VERSION_MISMATCH";
    default:
      break;
  }
  char text[32];
  std::snprintf(text, sizeof text, "HRESULT 0x%08lx", static_cast<unsigned long>(result));
  return text;
}

Error hresult_error(HRESULT result, const std::string& what) {
  return Error{what + " failed: " + hresult_name(result), static_cast<std::int64_t>(result),
               hresult_name(result)};
}

}  // namespace gpuoverlap::d3d12
