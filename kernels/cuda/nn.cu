// CUDA bias_add and sparse softmax cross-entropy. An out-of-range label gives NaN loss and
// gradient for its row (TF's GPU kernel does the same; only the CPU kernel can throw).

#include <cmath>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_kernel_list.hpp"
#include "kernels/kernel_args.hpp"

namespace troupe::cuda {
namespace {

template <class T>
__global__ void bias_add_kernel(const T* a, const T* bias, T* out, int64_t n, int64_t cols) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(blockDim.x) * gridDim.x)
    out[i] = a[i] + bias[i % cols];
}

template <class T>
void bias_add(const RowsArgs& x) {
  const int64_t n = x.rows * x.cols;
  if (n == 0) return;
  bias_add_kernel<<<blocks_for(n), kThreads, 0, stream_of(x.ctx.stream)>>>(
      static_cast<const T*>(x.a), static_cast<const T*>(x.b), static_cast<T*>(x.out), n, x.cols);
  check_launch("bias_add");
}

// One thread per row: rows are many and classes few in the models troupe trains.
template <class T, class L>
__global__ void xent_kernel(const T* logits, const L* labels, T* loss, T* grad, int64_t rows,
                            int64_t classes) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows;
       r += int64_t(blockDim.x) * gridDim.x) {
    const T* z = logits + r * classes;
    T* g = grad + r * classes;
    const int64_t label = int64_t(labels[r]);
    if (label < 0 || label >= classes) {
      const T nan = T(NAN);
      loss[r] = nan;
      for (int64_t c = 0; c < classes; ++c) g[c] = nan;
      continue;
    }
    T mx = z[0];
    for (int64_t c = 1; c < classes; ++c) mx = z[c] > mx ? z[c] : mx;
    T sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += exp(z[c] - mx);
    for (int64_t c = 0; c < classes; ++c) g[c] = exp(z[c] - mx) / sum;
    g[label] -= T(1);
    loss[r] = log(sum) - (z[label] - mx);
  }
}

template <class T>
void softmax_xent(const SoftmaxXentArgs& x) {
  if (x.rows == 0) return;
  auto stream = stream_of(x.ctx.stream);
  auto* logits = static_cast<const T*>(x.logits);
  auto* loss = static_cast<T*>(x.loss);
  auto* grad = static_cast<T*>(x.grad);
  if (x.label_dtype == DType::int64)
    xent_kernel<<<blocks_for(x.rows), kThreads, 0, stream>>>(
        logits, static_cast<const int64_t*>(x.labels), loss, grad, x.rows, x.classes);
  else
    xent_kernel<<<blocks_for(x.rows), kThreads, 0, stream>>>(
        logits, static_cast<const int32_t*>(x.labels), loss, grad, x.rows, x.classes);
  check_launch("softmax_cross_entropy");
}

}  // namespace

void register_nn(KernelRegistry& r) {
  add_float_kernels<RowsArgs>(r, "bias_add", bias_add<float>, bias_add<double>);
  add_float_kernels<SoftmaxXentArgs>(r, "softmax_cross_entropy", softmax_xent<float>,
                                     softmax_xent<double>);
}

}  // namespace troupe::cuda
