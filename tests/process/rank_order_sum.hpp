#pragma once
// Inputs whose float sums round, and their rank-order sum: the bits an all-reduce across ranks
// must reproduce (tests of the shared-memory rendezvous and of the cross-memory all-reduce).

#include <cstring>

#include "core/tensor.hpp"

namespace troupe::testing {

// Rank r's input: fractions whose float sums round (so the order of the sum shows in the bits).
inline Tensor input_of(int rank, int64_t count, DType dtype) {
  Tensor t(dtype, Shape{count});
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t i = 0; i < count; ++i)
      t.data<T>()[i] = T(double((i * 7919 + rank * 104729) % 100003) / 977.0 - 51.3 * rank);
  });
  return t;
}

// The rank-order sum ((x0 + x1) + x2) ..., element by element, in the dtype.
inline Tensor expected_sum(int ranks, int64_t count, DType dtype) {
  Tensor sum = input_of(0, count, dtype);
  for (int r = 1; r < ranks; ++r) {
    Tensor x = input_of(r, count, dtype);
    dispatch_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      for (int64_t i = 0; i < count; ++i) sum.data<T>()[i] = T(sum.data<T>()[i] + x.data<T>()[i]);
    });
  }
  return sum;
}

inline bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.byte_size() == b.byte_size() &&
         (a.byte_size() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0);
}

}  // namespace troupe::testing
