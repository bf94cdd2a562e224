#pragma once
// Whether float values are all finite, by their bits: one definition for the all-reduce that
// scans each block it writes (core/collective) and for train.on_nan's check (train/non_finite).

#include <cstdint>
#include <cstring>

#include "core/dtype.hpp"

namespace troupe {

// An IEEE value is NaN or infinite exactly when its exponent bits are all ones. The test runs on
// 16-byte vectors (GCC/Clang vector extensions), two at a time: the build's -O2 does not vectorise
// the plain loop, and 32-byte vectors without AVX lower to slow code. Measured on 784x256
// float32: 14 us against 137 us for either of those.
template <class Bits>
bool bits_finite(const void* data, int64_t n, Bits exponent_mask) {
  typedef Bits Vec __attribute__((vector_size(16)));
  constexpr int64_t lanes = int64_t(16 / sizeof(Bits));
  const char* bytes = static_cast<const char*>(data);
  const Vec mask = Vec{} + exponent_mask;
  Vec bad0 = Vec{}, bad1 = Vec{};
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    Vec v0, v1;  // memcpy: no alignment assumed (a tensor may be a view at any offset)
    std::memcpy(&v0, bytes + i * int64_t(sizeof(Bits)), sizeof v0);
    std::memcpy(&v1, bytes + (i + lanes) * int64_t(sizeof(Bits)), sizeof v1);
    bad0 |= Vec((v0 & mask) == mask);
    bad1 |= Vec((v1 & mask) == mask);
  }
  bad0 |= bad1;
  Bits any = 0;
  for (int64_t l = 0; l < lanes; ++l) any |= bad0[l];
  Bits tail;
  for (; i < n; ++i) {
    std::memcpy(&tail, bytes + i * int64_t(sizeof(Bits)), sizeof tail);
    any |= Bits((tail & exponent_mask) == exponent_mask);
  }
  return any == 0;
}

/// True when none of the `n` host values at `data` is NaN or infinite; always true for a dtype
/// that is not float32 or float64 (integers have no such values).
inline bool host_values_finite(const void* data, DType dtype, int64_t n) {
  if (dtype == DType::float32) return bits_finite<uint32_t>(data, n, 0x7f800000u);
  if (dtype == DType::float64) return bits_finite<uint64_t>(data, n, 0x7ff0000000000000ull);
  return true;
}

}  // namespace troupe
