#include "kernels/host_accumulate.hpp"

namespace troupe {
namespace {

template <class T>
void accumulate(T* __restrict dst, const T* __restrict src, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] += src[i];
}

}  // namespace

void host_accumulate(void* dst, const void* src, DType dtype, int64_t count) {
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    accumulate(static_cast<T*>(dst), static_cast<const T*>(src), count);
  });
}

}  // namespace troupe
