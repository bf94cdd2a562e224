#include "kernels/host_accumulate.hpp"

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

}  // namespace

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
