// CUDA reductions: sum_n (left-to-right, all inputs of a pass read by one thread), reduce_sum
// (one deterministic block), bias_add_grad (one thread per column).

#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_kernel_list.hpp"
#include "kernels/kernel_args.hpp"

namespace troupe::cuda {
namespace {

// Inputs per pass travel as a kernel parameter (64 pointers = 512 bytes).
constexpr int kMaxPass = 64;

template <class T>
struct Pointers {
  const T* p[kMaxPass];
};

// out[i] = (accumulate ? out[i] : 0-free start) + in[0][i] + ... + in[n-1][i], left to right.
template <class T>
__global__ void sum_pass(Pointers<T> in, int n, bool accumulate, T* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(blockDim.x) * gridDim.x) {
    T acc = accumulate ? out[i] : in.p[0][i];
    for (int j = accumulate ? 0 : 1; j < n; ++j) acc = acc + in.p[j][i];
    out[i] = acc;
  }
}

template <class T>
void sum_n(const SumNArgs& x) {
  cudaStream_t stream = stream_of(x.ctx.stream);
  T* out = static_cast<T*>(x.out);
  const T* const* inputs = reinterpret_cast<const T* const*>(x.inputs);
  if (x.count == 0) return;
  if (x.num_inputs == 0) {
    check(cudaMemsetAsync(out, 0, size_t(x.count) * sizeof(T), stream), "sum_n");
    return;
  }
  // A later pass re-reads `out`, so out may alias only inputs of the first pass.
  for (int64_t j = kMaxPass; j < x.num_inputs; ++j)
    if (inputs[j] == out)
      throw invalid_argument("sum_n on gpu: out aliases input " + std::to_string(j) +
                             "; with more than 64 inputs out may only alias one of the first 64");
  for (int64_t begin = 0; begin < x.num_inputs; begin += kMaxPass) {
    Pointers<T> pass{};
    const int n = int(x.num_inputs - begin < kMaxPass ? x.num_inputs - begin : kMaxPass);
    for (int j = 0; j < n; ++j) pass.p[j] = inputs[begin + j];
    sum_pass<<<blocks_for(x.count), kThreads, 0, stream>>>(pass, n, begin > 0, out, x.count);
    check_launch("sum_n");
  }
}

template <class T>
using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, T>;

// One block: each thread sums a strided slice, then a shared-memory tree. Deterministic.
template <class T>
__global__ void reduce_sum_kernel(const T* a, int64_t n, T* out) {
  __shared__ Accumulator<T> partial[kThreads];
  Accumulator<T> s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += a[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int width = blockDim.x / 2; width > 0; width /= 2) {
    if (int(threadIdx.x) < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = T(partial[0]);
}

template <class T>
void reduce_sum(const RowsArgs& x) {
  reduce_sum_kernel<<<1, kThreads, 0, stream_of(x.ctx.stream)>>>(
      static_cast<const T*>(x.a), x.rows * x.cols, static_cast<T*>(x.out));
  check_launch("reduce_sum");
}

template <class T>
__global__ void bias_add_grad_kernel(const T* a, int64_t rows, int64_t cols, T* out) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < cols;
       c += int64_t(blockDim.x) * gridDim.x) {
    T s = 0;
    for (int64_t r = 0; r < rows; ++r) s += a[r * cols + c];
    out[c] = s;
  }
}

template <class T>
void bias_add_grad(const RowsArgs& x) {
  if (x.cols == 0) return;
  bias_add_grad_kernel<<<blocks_for(x.cols), kThreads, 0, stream_of(x.ctx.stream)>>>(
      static_cast<const T*>(x.a), x.rows, x.cols, static_cast<T*>(x.out));
  check_launch("bias_add_grad");
}

}  // namespace

void register_reductions(KernelRegistry& r) {
  add_numeric_kernels<SumNArgs>(r, "sum_n", sum_n<float>, sum_n<double>, sum_n<int32_t>,
                                sum_n<int64_t>);
  add_numeric_kernels<RowsArgs>(r, "reduce_sum", reduce_sum<float>, reduce_sum<double>,
                                reduce_sum<int32_t>, reduce_sum<int64_t>);
  add_float_kernels<RowsArgs>(r, "bias_add_grad", bias_add_grad<float>, bias_add_grad<double>);
}

}  // namespace troupe::cuda
