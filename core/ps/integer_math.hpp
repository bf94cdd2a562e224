#pragma once
// Exact integer floor and ceiling division for operands of any sign. The spec's formulas take
// floor / ceil of real quotients whose operands may be negative (R-SLICE-DEC, R-EMB "div");
// C++'s `/` truncates toward zero, which is wrong for those.

#include <cstdint>

namespace troupe {

/// floor(a / b) for b != 0.
constexpr int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// ceil(a / b) for b != 0.
constexpr int64_t ceil_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

/// a mod b with the sign of b (Python's %), for b != 0.
constexpr int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

}  // namespace troupe
