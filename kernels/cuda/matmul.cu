// Matrix multiply through cuBLAS. cuBLAS is column-major: a row-major C = op(A) op(B) is the
// column-major C^T = op(B)^T op(A)^T, so the operands are passed swapped.

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_kernel_list.hpp"
#include "kernels/kernel_args.hpp"

namespace troupe::cuda {
namespace {

int ld(int64_t columns) { return int(std::max<int64_t>(1, columns)); }

cublasHandle_t handle_of(const MatmulArgs& x) {
  if (x.ctx.blas_handle == nullptr)
    throw failed_precondition(
        "matmul on gpu needs a cuBLAS handle: build Ops with a GpuStream's "
        "context()");
  return static_cast<cublasHandle_t>(x.ctx.blas_handle);
}

// k == 0: an empty inner sum, c = beta * c; done here rather than trusting cuBLAS's quick return.
template <class T>
bool handle_empty(const MatmulArgs& x) {
  if (x.m == 0 || x.n == 0) return true;
  if (x.k != 0) return false;
  const int count = int(x.m * x.n);
  if (x.beta == 0.0) {
    check(cudaMemsetAsync(x.c, 0, size_t(count) * sizeof(T), stream_of(x.ctx.stream)), "matmul");
  } else if constexpr (sizeof(T) == 4) {
    const float beta = float(x.beta);
    check_blas(cublasSscal(handle_of(x), count, &beta, static_cast<float*>(x.c), 1), "cublasSscal");
  } else {
    check_blas(cublasDscal(handle_of(x), count, &x.beta, static_cast<double*>(x.c), 1),
               "cublasDscal");
  }
  return true;
}

void matmul_f32(const MatmulArgs& x) {
  if (handle_empty<float>(x)) return;
  const float alpha = float(x.alpha), beta = float(x.beta);
  check_blas(cublasSgemm(handle_of(x), x.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                         x.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, int(x.n), int(x.m), int(x.k),
                         &alpha, static_cast<const float*>(x.b), ld(x.transpose_b ? x.k : x.n),
                         static_cast<const float*>(x.a), ld(x.transpose_a ? x.m : x.k), &beta,
                         static_cast<float*>(x.c), ld(x.n)),
             "cublasSgemm");
}

void matmul_f64(const MatmulArgs& x) {
  if (handle_empty<double>(x)) return;
  check_blas(cublasDgemm(handle_of(x), x.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                         x.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, int(x.n), int(x.m), int(x.k),
                         &x.alpha, static_cast<const double*>(x.b), ld(x.transpose_b ? x.k : x.n),
                         static_cast<const double*>(x.a), ld(x.transpose_a ? x.m : x.k), &x.beta,
                         static_cast<double*>(x.c), ld(x.n)),
             "cublasDgemm");
}

}  // namespace

void register_matmul(KernelRegistry& r) {
  add_float_kernels<MatmulArgs>(r, "matmul", matmul_f32, matmul_f64);
}

}  // namespace troupe::cuda
