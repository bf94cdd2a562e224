#pragma once
// A built-in 5x7 bitmap font for chart labels, so reports need no font files. It has digits,
// upper-case letters (lower case draws as upper case) and the punctuation numbers and names use;
// any other character draws as a box.

#include <array>
#include <cstdint>

namespace troupe::report {

inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 7;
/// Horizontal distance from one character to the next.
inline constexpr int kGlyphAdvance = kGlyphWidth + 1;

/// The glyph of `c`: 7 rows, top first; bit 4 of a row is its leftmost pixel.
std::array<uint8_t, kGlyphHeight> glyph(char c);

}  // namespace troupe::report
