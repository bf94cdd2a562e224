#include "experiment/report/png_encoder.hpp"

#include <zlib.h>

#include <cstdio>
#include <filesystem>

#include "core/status.hpp"

namespace troupe::report {
namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(uint8_t(v >> 24));
  out.push_back(uint8_t(v >> 16));
  out.push_back(uint8_t(v >> 8));
  out.push_back(uint8_t(v));
}

// A chunk: length, type, data, and the CRC-32 of type and data.
void put_chunk(std::vector<uint8_t>& out, const char type[4], const std::vector<uint8_t>& data) {
  put_u32(out, uint32_t(data.size()));
  const size_t type_at = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, out.data() + type_at, uInt(4 + data.size()));
  put_u32(out, uint32_t(crc));
}

}  // namespace

std::vector<uint8_t> encode_png(const Canvas& canvas) {
  const size_t row_bytes = size_t(canvas.width()) * 3;
  std::vector<uint8_t> raw;
  raw.reserve((row_bytes + 1) * size_t(canvas.height()));
  for (int y = 0; y < canvas.height(); ++y) {
    raw.push_back(0);  // filter type "none"
    auto row = canvas.rgb().begin() + std::ptrdiff_t(size_t(y) * row_bytes);
    raw.insert(raw.end(), row, row + std::ptrdiff_t(row_bytes));
  }
  uLongf packed_size = compressBound(uLong(raw.size()));
  std::vector<uint8_t> packed(packed_size);
  if (compress2(packed.data(), &packed_size, raw.data(), uLong(raw.size()), Z_BEST_COMPRESSION) !=
      Z_OK)
    throw internal_error("png: zlib could not compress " + std::to_string(raw.size()) + " bytes");
  packed.resize(packed_size);

  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<uint8_t> header;
  put_u32(header, uint32_t(canvas.width()));
  put_u32(header, uint32_t(canvas.height()));
  header.insert(header.end(), {8, 2, 0, 0, 0});  // 8 bits, RGB, deflate, adaptive, no interlace
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", packed);
  put_chunk(png, "IEND", {});
  return png;
}

void write_png(const Canvas& canvas, const std::string& path) {
  const std::vector<uint8_t> bytes = encode_png(canvas);
  const std::string temp = path + ".tmp";
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) throw unavailable("cannot write plot " + path);
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) {
    std::filesystem::remove(temp);
    throw unavailable("cannot write plot " + path + " (disk full?)");
  }
  std::filesystem::rename(temp, path);
}

}  // namespace troupe::report
