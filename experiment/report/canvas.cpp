#include "experiment/report/canvas.hpp"

#include <cstdlib>

#include "core/status.hpp"
#include "experiment/report/bitmap_font.hpp"

namespace troupe::report {

Color series_color(size_t i) {
  static constexpr Color kPalette[] = {
      {31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
      {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

Canvas::Canvas(int width, int height) : width_(width), height_(height) {
  if (width < 1 || height < 1 || width > 16384 || height > 16384)
    throw invalid_argument("canvas size " + std::to_string(width) + "x" + std::to_string(height) +
                           " is outside 1..16384");
  rgb_.assign(size_t(width) * size_t(height) * 3, 255);
}

Color Canvas::at(int x, int y) const {
  const size_t i = (size_t(y) * size_t(width_) + size_t(x)) * 3;
  return {rgb_.at(i), rgb_.at(i + 1), rgb_.at(i + 2)};
}

void Canvas::set(int x, int y, Color c) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  const size_t i = (size_t(y) * size_t(width_) + size_t(x)) * 3;
  rgb_[i] = c.r;
  rgb_[i + 1] = c.g;
  rgb_[i + 2] = c.b;
}

void Canvas::line(int x0, int y0, int x1, int y1, Color c, int thickness) {
  const int dx = std::abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
  const int dy = -std::abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  const int lo = -(thickness - 1) / 2, hi = thickness / 2;
  for (;;) {
    for (int oy = lo; oy <= hi; ++oy)
      for (int ox = lo; ox <= hi; ++ox) set(x0 + ox, y0 + oy, c);
    if (x0 == x1 && y0 == y1) break;
    const int e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
}

void Canvas::fill_rect(int x, int y, int w, int h, Color c) {
  for (int yy = y; yy < y + h; ++yy)
    for (int xx = x; xx < x + w; ++xx) set(xx, yy, c);
}

void Canvas::text(int x, int y, const std::string& text, Color c, int scale) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto rows = glyph(text[i]);
    const int left = x + int(i) * kGlyphAdvance * scale;
    for (int row = 0; row < kGlyphHeight; ++row)
      for (int col = 0; col < kGlyphWidth; ++col)
        if (rows[size_t(row)] & (0x10 >> col))
          fill_rect(left + col * scale, y + row * scale, scale, scale, c);
  }
}

int Canvas::text_width(const std::string& text, int scale) {
  return text.empty() ? 0 : (int(text.size()) * kGlyphAdvance - 1) * scale;
}

}  // namespace troupe::report
