// The report's rasteriser and PNG encoder: files decode back (zlib inflate here) to the pixels
// drawn, and the charts put their series and labels where they say.
#include <zlib.h>

#include <gtest/gtest.h>

#include "core/status.hpp"
#include "experiment/report/bitmap_font.hpp"
#include "experiment/report/charts.hpp"
#include "experiment/report/png_encoder.hpp"

namespace troupe::report {
namespace {

uint32_t u32(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t(b[at]) << 24 | uint32_t(b[at + 1]) << 16 | uint32_t(b[at + 2]) << 8 | b[at + 3];
}

// A minimal PNG reader for what encode_png writes: checks the signature and every chunk's CRC,
// inflates IDAT and undoes the "none" filter.
struct Decoded {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

Decoded decode(const std::vector<uint8_t>& png) {
  const std::vector<uint8_t> signature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  EXPECT_TRUE(std::equal(signature.begin(), signature.end(), png.begin()));
  Decoded d;
  std::vector<uint8_t> idat;
  for (size_t at = 8; at + 12 <= png.size();) {
    const uint32_t length = u32(png, at);
    const std::string type(png.begin() + std::ptrdiff_t(at + 4),
                           png.begin() + std::ptrdiff_t(at + 8));
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, png.data() + at + 4, uInt(4 + length));
    EXPECT_EQ(uint32_t(crc), u32(png, at + 8 + length)) << type;
    if (type == "IHDR") {
      d.width = int(u32(png, at + 8));
      d.height = int(u32(png, at + 12));
      EXPECT_EQ(png[at + 16], 8);  // bit depth
      EXPECT_EQ(png[at + 17], 2);  // RGB
    }
    if (type == "IDAT")
      idat.insert(idat.end(), png.begin() + std::ptrdiff_t(at + 8),
                  png.begin() + std::ptrdiff_t(at + 8 + length));
    at += 12 + length;
  }
  std::vector<uint8_t> raw(size_t(d.height) * (size_t(d.width) * 3 + 1));
  uLongf raw_size = uLongf(raw.size());
  EXPECT_EQ(uncompress(raw.data(), &raw_size, idat.data(), uLong(idat.size())), Z_OK);
  EXPECT_EQ(raw_size, raw.size());
  for (int y = 0; y < d.height; ++y) {
    const size_t row = size_t(y) * (size_t(d.width) * 3 + 1);
    EXPECT_EQ(raw[row], 0);  // filter "none"
    d.rgb.insert(d.rgb.end(), raw.begin() + std::ptrdiff_t(row + 1),
                 raw.begin() + std::ptrdiff_t(row + 1 + size_t(d.width) * 3));
  }
  return d;
}

Color pixel(const Decoded& d, int x, int y) {
  const size_t i = (size_t(y) * size_t(d.width) + size_t(x)) * 3;
  return {d.rgb[i], d.rgb[i + 1], d.rgb[i + 2]};
}

TEST(Png, DecodesBackToTheDrawnPixels) {
  Canvas c(7, 5);
  c.set(0, 0, {1, 2, 3});
  c.set(6, 4, {250, 100, 0});
  c.line(0, 2, 6, 2, kBlack);
  const Decoded d = decode(encode_png(c));
  EXPECT_EQ(d.width, 7);
  EXPECT_EQ(d.height, 5);
  EXPECT_EQ(d.rgb, c.rgb());
  EXPECT_EQ(pixel(d, 0, 0), (Color{1, 2, 3}));
  EXPECT_EQ(pixel(d, 6, 4), (Color{250, 100, 0}));
  EXPECT_EQ(pixel(d, 3, 2), kBlack);
  EXPECT_EQ(pixel(d, 3, 1), kWhite);
}

TEST(Png, DrawingOutsideTheCanvasIsClipped) {
  Canvas c(4, 4);
  c.line(-10, -10, 10, 10, kBlack, 3);
  c.fill_rect(-5, 2, 100, 100, {9, 9, 9});
  EXPECT_EQ(c.at(0, 0), kBlack);
  EXPECT_EQ(c.at(3, 3), (Color{9, 9, 9}));
  try {
    Canvas(0, 3);
    FAIL() << "accepted a 0x3 canvas";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "canvas size 0x3 is outside 1..16384");
  }
}

TEST(Png, TextDrawsTheFontsGlyphs) {
  Canvas c(20, 10);
  c.text(1, 1, "1", kBlack);
  const auto one = glyph('1');
  for (int row = 0; row < kGlyphHeight; ++row)
    for (int col = 0; col < kGlyphWidth; ++col)
      EXPECT_EQ(c.at(1 + col, 1 + row), (one[size_t(row)] & (0x10 >> col)) ? kBlack : kWhite)
          << row << "," << col;
  EXPECT_EQ(glyph('a'), glyph('A'));           // lower case draws as upper case
  EXPECT_EQ(glyph('~')[0], 0x1F);              // unknown: a box
  EXPECT_EQ(Canvas::text_width("ab", 2), 22);  // (2 * 6 - 1) * 2
}

TEST(Png, LineChartDrawsEverySeriesInItsColour) {
  Canvas c = line_chart({{"a", {{0, 0}, {10, 1}}}, {"b", {{0, 1}, {10, 0}}}}, {"T", "x", "y"});
  EXPECT_EQ(c.width(), kChartWidth);
  EXPECT_EQ(c.height(), kChartHeight);
  PlotArea a;
  // Series a rises from the bottom-left corner, b falls from the top-left corner.
  EXPECT_EQ(c.at(a.left + 1, a.bottom - 1), series_color(0));
  EXPECT_EQ(c.at(a.left + 1, a.top + 1), series_color(1));
  EXPECT_EQ(c.at(a.right - 1, a.top + 1), series_color(0));
  const Decoded d = decode(encode_png(c));
  EXPECT_EQ(d.rgb, c.rgb());
}

TEST(Png, BarHeightsFollowTheValues) {
  Canvas c = bar_chart({{"small", 1}, {"large", 2}}, {"T", "", "v"});
  PlotArea a;
  const int slot = (a.right - a.left) / 2;
  auto height = [&](int i) {
    const int x = a.left + i * slot + slot / 6 + 2;
    int h = 0;
    while (c.at(x, a.bottom - 1 - h) == series_color(size_t(i))) ++h;
    return h;
  };
  EXPECT_GT(height(0), 0);
  EXPECT_NEAR(double(height(1)) / height(0), 2.0, 0.02);
}

TEST(Png, StackedBarsStackTheirSegments) {
  Canvas c = stacked_bar_chart({"v"}, {"input", "compute"}, {{1, 3}}, {"T", "", "ms"});
  PlotArea a;
  const int x = a.left + (a.right - a.left) / 6 + 2;
  int input = 0, compute = 0;
  for (int y = a.bottom - 1; y > a.top; --y) {
    if (c.at(x, y) == series_color(0)) ++input;
    if (c.at(x, y) == series_color(1)) ++compute;
  }
  EXPECT_GT(input, 0);
  EXPECT_NEAR(double(compute) / input, 3.0, 0.05);
}

// Ink (non-white pixels) in the rectangle [x0, x1) x [y0, y1).
int ink(const Canvas& c, int x0, int x1, int y0, int y1) {
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) n += !(c.at(x, y) == kWhite);
  return n;
}

TEST(Png, BarNamesTooLongForTheirSlotAlternateBetweenTwoRows) {
  PlotArea a;
  const int first_row = a.bottom + 8, second_row = first_row + kGlyphHeight + 4;
  const int slot = (a.right - a.left) / 6;
  std::vector<std::string> names = {"a", "b", "c", "d", "e", "f"};
  Canvas short_names =
      stacked_bar_chart(names, {"x"}, std::vector<std::vector<double>>(6, {1}), {"T", "", "ms"});
  EXPECT_EQ(ink(short_names, a.left, a.right, second_row, second_row + kGlyphHeight), 0);
  names[3] = "multi_worker_2x1";  // wider than its slot
  Canvas long_names =
      stacked_bar_chart(names, {"x"}, std::vector<std::vector<double>>(6, {1}), {"T", "", "ms"});
  // The odd names move to the second row; the long one keeps its whole text there, and the
  // first row beside it (slot 4, where "e" stays) has only "e".
  EXPECT_GT(
      ink(long_names, a.left + 3 * slot, a.left + 4 * slot, second_row, second_row + kGlyphHeight),
      0);
  EXPECT_GT(
      ink(long_names, a.left + 4 * slot, a.left + 5 * slot, second_row, second_row + kGlyphHeight),
      0);  // "multi_worker_2x1" runs on into slot 4's width
  EXPECT_EQ(ink(long_names, a.left + 4 * slot + kGlyphAdvance + 2, a.left + 5 * slot, first_row,
                first_row + kGlyphHeight),
            0);
}

}  // namespace
}  // namespace troupe::report
