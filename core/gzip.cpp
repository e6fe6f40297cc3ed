#include "core/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "core/scope_exit.h"

namespace gpuoverlap {

Result<std::string> gzip_compress(std::string_view text, GzipEffort effort) {
  if (text.size() > std::numeric_limits<uInt>::max())
    return make_error("gzip: the text is larger than one zlib call takes");
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  const int level = effort == GzipEffort::fast ? 1 : Z_DEFAULT_COMPRESSION;
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return make_error("gzip: deflateInit2 failed");
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, Z_FINISH);
  const std::size_t written = stream.total_out;
  deflateEnd(&stream);
  if (status != Z_STREAM_END) return make_error("gzip: deflate did not finish");
  out.resize(written);
  return out;
}

namespace {

// `text` as raw deflate data (no header), ended by a final block or, where `last` is false, by
// a sync flush: the bytes end on a byte boundary with no final block, so the next part's
// deflate data may follow.
Result<std::string> deflate_part(std::string_view text, int level, bool last) {
  if (text.size() > std::numeric_limits<uInt>::max())
    return make_error("gzip: a part is larger than one zlib call takes");
  z_stream stream{};
  if (deflateInit2(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return make_error("gzip: deflateInit2 failed");
  const ScopeExit end_stream([&stream] { deflateEnd(&stream); });
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, last ? Z_FINISH : Z_SYNC_FLUSH);
  if (last ? status != Z_STREAM_END : (status != Z_OK || stream.avail_in != 0))
    return make_error("gzip: deflate did not finish a part");
  out.resize(stream.total_out);
  return out;
}

void put_u32_le(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

Result<std::string> gzip_compress_parts(const std::vector<std::string>& parts, GzipEffort effort,
                                        std::size_t threads) {
  const int level = effort == GzipEffort::fast ? 1 : Z_DEFAULT_COMPRESSION;
  const std::size_t n = parts.size();
  std::vector<Result<std::string>> deflated(n, make_error("gzip: part not deflated"));
  std::vector<uLong> crcs(n, 0);
  std::atomic<std::size_t> next{0};
  // No exception leaves a thread (one that did would end the process): a part that failed
  // keeps its error, and a part no thread took is deflated by this one.
  const auto work = [&]() noexcept {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        deflated[i] = deflate_part(parts[i], level, i + 1 == n);
        crcs[i] = crc32(0L, reinterpret_cast<const Bytef*>(parts[i].data()),
                        static_cast<uInt>(std::min<std::size_t>(parts[i].size(),
                                                                std::numeric_limits<uInt>::max())));
      } catch (const std::exception& e) {
        deflated[i] = make_error(std::string("gzip: a part failed: ") + e.what());
      }
    }
  };
  {
    std::vector<std::jthread> helpers;  // joined when the scope ends, however it ends
    for (std::size_t t = 1; t < std::min(threads, n); ++t) {
      try {
        helpers.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // no thread to be had: the ones there are, and this one, do the rest
      }
    }
    work();
  }
  // RFC 1952: magic, deflate, no flags, no time, no extra flags, OS unknown.
  std::string out("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  uLong crc = crc32(0L, Z_NULL, 0);
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!deflated[i]) return deflated[i].error();
    out += *deflated[i];
    crc = crc32_combine(crc, crcs[i], static_cast<z_off_t>(parts[i].size()));
    bytes += parts[i].size();
  }
  if (n == 0) {
    auto empty = deflate_part({}, level, true);
    if (!empty) return empty.error();
    out += *empty;
  }
  put_u32_le(out, static_cast<std::uint32_t>(crc));
  put_u32_le(out, static_cast<std::uint32_t>(bytes & 0xffffffffu));  // ISIZE: the size mod 2^32
  return out;
}

bool has_gzip_magic(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<std::string> gzip_decompress(std::string_view compressed, std::uint64_t max_bytes,
                                    const std::string& what) {
  if (!has_gzip_magic(compressed))
    return make_error(what + ": not a gzip file (its first bytes are not 1f 8b)");
  if (compressed.size() > std::numeric_limits<uInt>::max())
    return make_error(what + ": larger than one zlib call takes");
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return make_error(what + ": inflateInit2 failed");
  const ScopeExit end_stream([&stream] { inflateEnd(&stream); });
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  const std::uint64_t ratio_limit =
      std::max<std::uint64_t>(1ull << 20, kMaxGzipRatio * compressed.size());
  const std::uint64_t limit = std::min(max_bytes, ratio_limit);
  std::string out;
  char chunk[1 << 16];
  for (;;) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    const int status = inflate(&stream, Z_NO_FLUSH);
    const std::size_t produced = sizeof chunk - stream.avail_out;
    if (out.size() + produced > limit)
      return make_error(what +
                        (limit == max_bytes
                             ? ": inflates past the limit of " + std::to_string(max_bytes >> 20) +
                                   " MiB for this kind of file"
                             : ": inflates more than " + std::to_string(kMaxGzipRatio) +
                                   "-fold (a decompression bomb, or not written by gpuoverlap)"));
    out.append(chunk, produced);
    if (status == Z_STREAM_END) break;
    if (status == Z_BUF_ERROR && stream.avail_in == 0)
      return make_error(what + ": truncated (the gzip stream ends early)");
    if (status != Z_OK)
      return make_error(what + ": damaged gzip data (" +
                        std::string(stream.msg != nullptr ? stream.msg : "zlib error") + ")");
  }
  // One member only, as gpuoverlap writes it: anything after it is damage, not data.
  if (stream.avail_in != 0)
    return make_error(what + ": " + std::to_string(stream.avail_in) +
                      " bytes after the end of the gzip data");
  return out;
}

}  // namespace gpuoverlap
