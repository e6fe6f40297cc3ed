// RGBA images to and from PNG files (libpng): the viewer's --screenshot, and the tests that
// look at what it drew.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "core/result.h"

namespace gpuoverlap::viewer {

struct RgbaImage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  // row-major from the top, 4 bytes per pixel
  const std::uint8_t* at(int x, int y) const {
    return pixels.data() + (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                            static_cast<std::size_t>(x)) *
                               4;
  }
};

// Written to a temporary file next to `path` and renamed, so a failure leaves no partial PNG.
Status write_png(const std::filesystem::path& path, const RgbaImage& image);
Result<RgbaImage> read_png(const std::filesystem::path& path);

}  // namespace gpuoverlap::viewer
