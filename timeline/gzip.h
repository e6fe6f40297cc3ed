// A gzip member (RFC 1952) of a text, through zlib: what `gunzip`, Python's gzip, pandas and the
// Perfetto UI read. Used for trace.json.gz, whose JSON shrinks about tenfold.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace gpuoverlap {

Result<std::string> gzip_compress(std::string_view text);

}  // namespace gpuoverlap
