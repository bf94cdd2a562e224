#include "kernels/host_accumulate.hpp"

#include <cstring>

namespace troupe {
namespace {

template <class T>
void accumulate(T* __restrict dst, const T* __restrict src, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] += src[i];
}

template <class T>
void add(T* __restrict dst, const T* __restrict a, const T* __restrict b, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = a[i] + b[i];
}

// The sum and its exponent test in one loop (vectorised: an OR reduction of compares). A value is
// NaN or infinite exactly when its exponent bits are all ones. kAccumulate: dst += b (a unused).
template <class T, class Bits, bool kAccumulate>
bool sum_finite(T* __restrict dst, const T* __restrict a, const T* __restrict b, int64_t count,
                Bits exponent) {
  Bits bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    const T sum = (kAccumulate ? dst[i] : a[i]) + b[i];
    dst[i] = sum;
    Bits bits;
    std::memcpy(&bits, &sum, sizeof bits);
    bad |= Bits((bits & exponent) == exponent);
  }
  return bad == 0;
}

template <class T, class Bits>
bool add_into_finite(void* dst, const void* a, const void* b, int64_t count, Bits exponent) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  // As host_add_into: an operand aliasing dst is an accumulate (addition commutes).
  if (dst == b) return sum_finite<T, Bits, true>(d, nullptr, x, count, exponent);
  if (dst == a) return sum_finite<T, Bits, true>(d, nullptr, y, count, exponent);
  return sum_finite<T, Bits, false>(d, x, y, count, exponent);
}

}  // namespace

bool host_add_into_finite(void* dst, const void* a, const void* b, DType dtype, int64_t count) {
  if (dtype == DType::float32) return add_into_finite<float>(dst, a, b, count, 0x7f800000u);
  if (dtype == DType::float64)
    return add_into_finite<double>(dst, a, b, count, uint64_t(0x7ff0000000000000ull));
  host_add_into(dst, a, b, dtype, count);
  return true;
}

void host_accumulate(void* dst, const void* src, DType dtype, int64_t count) {
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    accumulate(static_cast<T*>(dst), static_cast<const T*>(src), count);
  });
}

void host_add_into(void* dst, const void* a, const void* b, DType dtype, int64_t count) {
  // Aliasing dst with an operand would break the __restrict promise of add(): route it to the
  // accumulate loop instead (addition commutes).
  if (dst == b) return host_accumulate(dst, a, dtype, count);
  if (dst == a) return host_accumulate(dst, b, dtype, count);
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    add(static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), count);
  });
}

}  // namespace troupe
