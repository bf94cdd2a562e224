#pragma once
// Inputs and result digests of `troupe collective-peer`, shared with the multi-process tests so
// that they can compute the same collective in one process and compare results bit for bit.
// Closed-form inputs are integers (exact in any summation order); seeded inputs are fractions
// whose float sums depend on the order, so equal digests also show the same reduction order.

#include <cstdint>
#include <string>

#include "core/collective/closed_form.hpp"
#include "core/sha256.hpp"
#include "core/tensor.hpp"

namespace troupe {

/// Rank `rank`'s input: closed_form_input for seed 0, else values in [-1, 1) from a splitmix64
/// stream keyed by (seed, rank).
inline Tensor collective_peer_input(int rank, int64_t count, DType dtype, uint64_t seed) {
  if (seed == 0) return closed_form_input(rank, count, dtype);
  Tensor t(dtype, Shape{count});
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + uint64_t(rank) * 0xBF58476D1CE4E5B9ull;
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* out = t.data<T>();
    for (int64_t i = 0; i < count; ++i) {
      uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      double unit = double(z >> 11) * 0x1p-53 * 2.0 - 1.0;
      out[i] = std::is_floating_point<T>::value ? T(unit) : T(int64_t(unit * 1000));
    }
  });
  return t;
}

/// SHA-256 (hex) of the tensor's bytes: equal digests mean bit-identical results.
inline std::string result_digest(const Tensor& t) {
  return to_hex(sha256(std::string_view(static_cast<const char*>(t.raw_data()), t.byte_size())));
}

}  // namespace troupe
