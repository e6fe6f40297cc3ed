// A URI's password is not repeated: not in messages, the results' recorded command line, nor
// the history (a database location "postgresql://user:secret@host/db" reads
// "postgresql://user:***@host/db"). Anything else is returned as it is.
#pragma once

#include <string>
#include <string_view>

namespace gpuoverlap {

inline std::string without_password(std::string_view text) {
  std::string out(text);
  const std::size_t scheme = out.find("://");
  if (scheme == std::string::npos) return out;
  const std::size_t user = scheme + 3;
  const std::size_t at = out.find('@', user);
  const std::size_t end_of_authority = out.find_first_of("/?#", user);
  if (at != std::string::npos && (end_of_authority == std::string::npos || at < end_of_authority)) {
    const std::size_t colon = out.find(':', user);
    if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  // libpq takes it as a parameter too: ...?password=secret&...
  for (std::size_t p = out.find("password=", user); p != std::string::npos;
       p = out.find("password=", p + 1)) {
    const std::size_t value = p + 9;
    const std::size_t end = out.find('&', value);
    out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
  }
  return out;
}

}  // namespace gpuoverlap
