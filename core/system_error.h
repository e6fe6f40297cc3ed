// The text of the operating system's last error, for messages: strerror(errno) on POSIX,
// FormatMessage(GetLastError()) on Windows.
#pragma once

#include <string>

namespace gpuoverlap {

std::string last_system_error();

}  // namespace gpuoverlap
