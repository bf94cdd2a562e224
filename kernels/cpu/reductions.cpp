// Reductions on the CPU. sum_n is the collectives' hot loop: it works block by block so that
// every input is read once, and the partial sum of a block stays in L1 between inputs.

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/cpu_kernels.hpp"

namespace troupe::cpu {
namespace {

// Elements per block: 4 inputs + the accumulator of 2048 doubles still fit a 32 KiB L1 on reload.
constexpr int64_t kSumBlock = 2048;

template <class T>
void start2(T* __restrict acc, const T* __restrict a, const T* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = a[i] + b[i];
}
template <class T>
void start3(T* __restrict acc, const T* __restrict a, const T* __restrict b, const T* __restrict c,
            int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = a[i] + b[i] + c[i];
}
template <class T>
void start4(T* __restrict acc, const T* __restrict a, const T* __restrict b, const T* __restrict c,
            const T* __restrict d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = a[i] + b[i] + c[i] + d[i];
}
template <class T>
void more1(T* __restrict acc, const T* __restrict a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] + a[i];
}
template <class T>
void more2(T* __restrict acc, const T* __restrict a, const T* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] + a[i] + b[i];
}
template <class T>
void more3(T* __restrict acc, const T* __restrict a, const T* __restrict b, const T* __restrict c,
           int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] + a[i] + b[i] + c[i];
}

// out = in[0] + in[1] + ... added strictly left to right (so the result equals a naive sequential
// sum bit for bit). Accumulates into a block-local buffer, so `out` may alias any input.
template <class T>
void sum_n(const SumNArgs& x) {
  const T* const* in = reinterpret_cast<const T* const*>(x.inputs);
  T* out = static_cast<T*>(x.out);
  const int64_t n = x.num_inputs;
  if (n == 0) {
    std::fill(out, out + x.count, T(0));
    return;
  }
  if (n == 1) {
    if (out != in[0] && x.count > 0) std::memcpy(out, in[0], size_t(x.count) * sizeof(T));
    return;
  }
  alignas(64) T acc[kSumBlock];
  for (int64_t begin = 0; begin < x.count; begin += kSumBlock) {
    const int64_t len = std::min(kSumBlock, x.count - begin);
    auto at = [begin](const T* p) { return p + begin; };
    int64_t j;
    if (n == 2) {
      start2(acc, at(in[0]), at(in[1]), len), j = 2;
    } else if (n == 3) {
      start3(acc, at(in[0]), at(in[1]), at(in[2]), len), j = 3;
    } else {
      start4(acc, at(in[0]), at(in[1]), at(in[2]), at(in[3]), len), j = 4;
    }
    for (; j + 3 <= n; j += 3) more3(acc, at(in[j]), at(in[j + 1]), at(in[j + 2]), len);
    if (n - j == 2) more2(acc, at(in[j]), at(in[j + 1]), len);
    if (n - j == 1) more1(acc, at(in[j]), len);
    std::memcpy(out + begin, acc, size_t(len) * sizeof(T));
  }
}

// Float sums accumulate in double: a loss or a norm over millions of elements would otherwise
// lose most of its digits.
template <class T>
using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, T>;

template <class T>
void reduce_sum(const RowsArgs& x) {
  const T* a = static_cast<const T*>(x.a);
  const int64_t n = x.rows * x.cols;
  Accumulator<T> total = 0;
  for (int64_t i = 0; i < n; ++i) total += a[i];
  static_cast<T*>(x.out)[0] = static_cast<T>(total);
}

template <class T>
void bias_add_grad(const RowsArgs& x) {
  const T* a = static_cast<const T*>(x.a);
  T* out = static_cast<T*>(x.out);
  std::fill(out, out + x.cols, T(0));
  for (int64_t r = 0; r < x.rows; ++r) more1(out, a + r * x.cols, x.cols);
}

}  // namespace

void register_reductions(KernelRegistry& r) {
  add_numeric_kernels<SumNArgs>(r, "sum_n", sum_n<float>, sum_n<double>, sum_n<int32_t>,
                                sum_n<int64_t>);
  add_numeric_kernels<RowsArgs>(r, "reduce_sum", reduce_sum<float>, reduce_sum<double>,
                                reduce_sum<int32_t>, reduce_sum<int64_t>);
  add_float_kernels<RowsArgs>(r, "bias_add_grad", bias_add_grad<float>, bias_add_grad<double>);
}

}  // namespace troupe::cpu
