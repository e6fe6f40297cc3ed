// gzip members (RFC 1952) through zlib: what `gunzip`, Python's gzip, pandas and the Perfetto UI
// read and write. The writers use it for trace.json.gz and records.csv.gz (CSV and JSON text
// shrink five- to tenfold); the readers of results folders use it to read them back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace gpuoverlap {

// How hard deflate works: `fast` (level 1) for a file written after every scenario whose size
// matters less than the tool's time (the kernel's record: about half the time of the default
// for a third more bytes), `small` (zlib's default) for the rest.
enum class GzipEffort { small, fast };
Result<std::string> gzip_compress(std::string_view text, GzipEffort effort = GzipEffort::small);
// One gzip member of the parts' text in order, each part deflated on its own thread (at most
// `threads` at once): what gunzip and gzip_decompress read as one file of their concatenation.
// Each part is a deflate stream of its own, flushed to a byte boundary, so a part's matches do
// not reach into the part before (a little larger than gzip_compress on parts of a few MB).
Result<std::string> gzip_compress_parts(const std::vector<std::string>& parts, GzipEffort effort,
                                        std::size_t threads);

// The text of a gzip file that came from outside (`what` names it in messages). Untrusted, so
// the inflated size is bounded twice: never more than `max_bytes`, and never more than
// kMaxGzipRatio times the compressed size once past 1 MiB. The second bound refuses a
// decompression bomb long before memory runs out; gpuoverlap's own CSV and JSON compress 4- to
// 15-fold. Damage (a wrong magic, a truncated stream, a bad checksum, bytes after the member)
// is an Error naming `what` and the reason.
inline constexpr std::uint64_t kMaxGzipRatio = 200;
Result<std::string> gzip_decompress(std::string_view compressed, std::uint64_t max_bytes,
                                    const std::string& what);

// Whether `bytes` start with the gzip magic (1f 8b).
bool has_gzip_magic(std::string_view bytes);

}  // namespace gpuoverlap
