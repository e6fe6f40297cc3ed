#include "core/wine.h"

#if defined(_WIN32)
#include <windows.h>
#endif

namespace gpuoverlap {

std::optional<std::string> wine_version() {
#if defined(_WIN32)
  // Wine's ntdll exports wine_get_version; Windows' does not.
  using WineVersion = const char*(__cdecl*)();
  const HMODULE ntdll = GetModuleHandleA("ntdll.dll");
  const auto version = ntdll ? reinterpret_cast<WineVersion>(reinterpret_cast<void*>(
                                   GetProcAddress(ntdll, "wine_get_version")))
                             : nullptr;
  if (version) return std::string(version());
#endif
  return std::nullopt;
}

}  // namespace gpuoverlap
