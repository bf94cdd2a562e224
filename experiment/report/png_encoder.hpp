#pragma once
// PNG files from a Canvas: 8-bit RGB, no interlace, each row filtered with "none" and the whole
// compressed with zlib (the PNG format's own deflate). Enough for charts; no other PNG feature.

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/report/canvas.hpp"

namespace troupe::report {

/// The PNG file bytes of `canvas`.
std::vector<uint8_t> encode_png(const Canvas& canvas);

/// Writes encode_png(canvas) to `path` (temp file + rename); throws unavailable naming the path.
void write_png(const Canvas& canvas, const std::string& path);

}  // namespace troupe::report
