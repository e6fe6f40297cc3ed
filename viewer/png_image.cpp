#include "viewer/png_image.h"

#include <png.h>

namespace gpuoverlap::viewer {

Status write_png(const std::filesystem::path& path, const RgbaImage& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * 4)
    return make_error("write " + path.string() + ": the image has no pixels");
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PNG_FORMAT_RGBA;
  const std::filesystem::path partial = path.string() + ".partial";
  if (!png_image_write_to_file(&png, partial.c_str(), 0, image.pixels.data(), 0, nullptr)) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    return make_error("write " + path.string() + ": " + png.message);
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) return make_error("write " + path.string() + ": " + error.message());
  return ok_status();
}

Result<RgbaImage> read_png(const std::filesystem::path& path) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, path.c_str()))
    return make_error("read " + path.string() + ": " + png.message);
  png.format = PNG_FORMAT_RGBA;
  RgbaImage image;
  image.width = static_cast<int>(png.width);
  image.height = static_cast<int>(png.height);
  image.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
    png_image_free(&png);
    return make_error("read " + path.string() + ": " + png.message);
  }
  return image;
}

}  // namespace gpuoverlap::viewer
