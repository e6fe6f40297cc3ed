#include "timeline/gzip.h"

#include <zlib.h>

#include <limits>

namespace gpuoverlap {

Result<std::string> gzip_compress(std::string_view text) {
  if (text.size() > std::numeric_limits<uInt>::max())
    return make_error("gzip: the text is larger than one zlib call takes");
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK)
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

}  // namespace gpuoverlap
