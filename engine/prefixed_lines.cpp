#include "engine/prefixed_lines.h"

#include <mutex>

namespace gpuoverlap {

namespace {
std::mutex& prefixed_lines_mutex() {
  static std::mutex mutex;
  return mutex;
}
}  // namespace

PrefixedLines::PrefixedLines(std::ostream& sink, std::string prefix)
    : std::ostream(nullptr), buffer_(sink, std::move(prefix)) {
  rdbuf(&buffer_);
}

PrefixedLines::~PrefixedLines() {
  buffer_.sputc('\n');  // a last line without its newline still goes out whole
}

void PrefixedLines::Buffer::emit() {
  if (pending_.empty() || pending_ == "\n") {
    pending_.clear();
    return;
  }
  std::lock_guard lock(prefixed_lines_mutex());
  sink_ << prefix_ << pending_ << std::flush;
  pending_.clear();
}

int PrefixedLines::Buffer::overflow(int c) {
  if (c == traits_type::eof()) return traits_type::not_eof(c);
  pending_ += static_cast<char>(c);
  if (c == '\n') emit();
  return c;
}

std::streamsize PrefixedLines::Buffer::xsputn(const char* text, std::streamsize count) {
  for (std::streamsize i = 0; i < count; ++i) overflow(static_cast<unsigned char>(text[i]));
  return count;
}

}  // namespace gpuoverlap
