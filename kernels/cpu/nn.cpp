// Neural-network CPU kernels: bias_add and sparse softmax cross-entropy (TF's
// SparseSoftmaxCrossEntropyWithLogits), computed in the tensor's own precision as TF does.

#include <cmath>
#include <string>

#include "kernels/cpu/cpu_kernels.hpp"

namespace troupe::cpu {
namespace {

template <class T>
[[gnu::always_inline]] inline void bias_add(const RowsArgs& x) {
  const T* a = static_cast<const T*>(x.a);
  const T* __restrict bias = static_cast<const T*>(x.b);
  T* out = static_cast<T*>(x.out);
  for (int64_t r = 0; r < x.rows; ++r) {
    const T* row = a + r * x.cols;
    T* dst = out + r * x.cols;
    for (int64_t c = 0; c < x.cols; ++c) dst[c] = row[c] + bias[c];
  }
}

// bias_add compiled for AVX2 (kernels/cpu/simd_level.hpp): measured 4.5 -> 2.4 us on 128x256
// floats; the same additions, so bitwise the same results.
template <class T>
[[gnu::target("avx2")]] void bias_add_avx2(const RowsArgs& x) {
  bias_add<T>(x);
}

template <class T>
void softmax_xent(const SoftmaxXentArgs& x) {
  const T* logits = static_cast<const T*>(x.logits);
  T* loss = static_cast<T*>(x.loss);
  T* grad = static_cast<T*>(x.grad);
  const int64_t classes = x.classes;
  for (int64_t r = 0; r < x.rows; ++r) {
    const int64_t label = read_index(x.labels, x.label_dtype, r);
    if (label < 0 || label >= classes)
      throw out_of_range("softmax_cross_entropy: label " + std::to_string(label) + " of row " +
                         std::to_string(r) + " is outside the valid range [0, " +
                         std::to_string(classes) + ")");
    const T* z = logits + r * classes;
    T* g = grad + r * classes;
    T max = z[0];
    for (int64_t c = 1; c < classes; ++c) max = z[c] > max ? z[c] : max;
    T sum = 0;
    for (int64_t c = 0; c < classes; ++c) {
      g[c] = std::exp(z[c] - max);
      sum += g[c];
    }
    const T inv = T(1) / sum;
    for (int64_t c = 0; c < classes; ++c) g[c] *= inv;
    g[label] -= T(1);
    // loss = logsumexp(z) - z[label], shifted by max for stability.
    loss[r] = std::log(sum) - (z[label] - max);
  }
}

}  // namespace

void register_nn(KernelRegistry& r, SimdLevel simd) {
  if (simd == SimdLevel::avx2)
    add_float_kernels<RowsArgs>(r, "bias_add", bias_add_avx2<float>, bias_add_avx2<double>);
  else
    add_float_kernels<RowsArgs>(r, "bias_add", bias_add<float>, bias_add<double>);
  add_float_kernels<SoftmaxXentArgs>(r, "softmax_cross_entropy", softmax_xent<float>,
                                     softmax_xent<double>);
}

}  // namespace troupe::cpu
