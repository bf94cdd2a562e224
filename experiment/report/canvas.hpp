#pragma once
// An RGB raster for report charts: pixels, lines, filled rectangles and bitmap-font text. Drawing
// outside the canvas is clipped, never an error.

#include <cstdint>
#include <string>
#include <vector>

namespace troupe::report {

struct Color {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Color& o) const { return r == o.r && g == o.g && b == o.b; }
};

inline constexpr Color kWhite{255, 255, 255};
inline constexpr Color kBlack{0, 0, 0};
inline constexpr Color kGrey{200, 200, 200};

/// The i-th of a fixed palette of distinguishable series colours (wraps around).
Color series_color(size_t i);

/// A width x height RGB image, white when created.
class Canvas {
 public:
  Canvas(int width, int height);
  int width() const { return width_; }
  int height() const { return height_; }
  /// Row-major RGB bytes, 3 per pixel.
  const std::vector<uint8_t>& rgb() const { return rgb_; }
  Color at(int x, int y) const;

  void set(int x, int y, Color c);
  /// A line from (x0, y0) to (x1, y1), both ends included (Bresenham), `thickness` pixels wide.
  void line(int x0, int y0, int x1, int y1, Color c, int thickness = 1);
  /// The rectangle [x, x + w) x [y, y + h), filled.
  void fill_rect(int x, int y, int w, int h, Color c);
  /// `text` with its top-left corner at (x, y), each font pixel drawn as scale x scale.
  void text(int x, int y, const std::string& text, Color c, int scale = 1);
  /// Width in pixels of `text` at `scale`.
  static int text_width(const std::string& text, int scale = 1);

 private:
  int width_, height_;
  std::vector<uint8_t> rgb_;
};

}  // namespace troupe::report
