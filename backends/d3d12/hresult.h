// HRESULTs as Result values: the code and its name travel in the Error, as VkResults do.
#pragma once

#include <string>

#include "backends/d3d12/d3d12_headers.h"
#include "core/result.h"

namespace gpuoverlap::d3d12 {

// "E_NOTIMPL", "DXGI_ERROR_UNSUPPORTED", ... or "HRESULT 0x887a0004" for a code without a name.
std::string hresult_name(HRESULT result);

// "<what> failed: <name>", carrying the code.
Error hresult_error(HRESULT result, const std::string& what);

// Returns the Error of a failed call from the enclosing function (a Status or Result).
#define GPUOVERLAP_HR(call, what)                                      \
  do {                                                                 \
    if (const HRESULT gpuoverlap_hr_ = (call); FAILED(gpuoverlap_hr_)) \
      return ::gpuoverlap::d3d12::hresult_error(gpuoverlap_hr_, what); \
  } while (false)

}  // namespace gpuoverlap::d3d12
