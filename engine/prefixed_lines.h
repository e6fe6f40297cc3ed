// The log of devices that run at once: each device's text a whole line at a time, after its
// prefix, never mixed within a line.
#pragma once

#include <ostream>
#include <streambuf>
#include <string>

namespace gpuoverlap {

// An output stream whose text goes to `sink` a whole line at a time, each line after `prefix`,
// under one lock that every such stream shares. What is left without a newline goes out when
// the stream is destroyed.
class PrefixedLines : public std::ostream {
 public:
  PrefixedLines(std::ostream& sink, std::string prefix);
  ~PrefixedLines() override;

 private:
  class Buffer : public std::streambuf {
   public:
    Buffer(std::ostream& sink, std::string prefix) : sink_(sink), prefix_(std::move(prefix)) {}
    void emit();

   protected:
    int overflow(int c) override;
    std::streamsize xsputn(const char* text, std::streamsize count) override;

   private:
    std::ostream& sink_;
    std::string prefix_, pending_;
  };
  Buffer buffer_;
};

}  // namespace gpuoverlap
