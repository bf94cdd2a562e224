// Matrix multiply through OpenBLAS (cblas_?gemm), row-major.

#include <cblas.h>

#include <algorithm>

#include "kernels/cpu/cpu_kernels.hpp"

namespace troupe::cpu {
namespace {

// BLAS rejects leading dimensions below 1 even when a dimension is 0.
int ld(int64_t columns) { return int(std::max<int64_t>(1, columns)); }

// k == 0 means an empty inner sum: c = beta * c (BLAS leaves this case to the caller's taste).
template <class T>
bool handle_empty(const MatmulArgs& x) {
  if (x.m == 0 || x.n == 0) return true;
  if (x.k != 0) return false;
  T* c = static_cast<T*>(x.c);
  const T beta = static_cast<T>(x.beta);
  for (int64_t i = 0; i < x.m * x.n; ++i) c[i] = beta == T(0) ? T(0) : beta * c[i];
  return true;
}

void matmul_f32(const MatmulArgs& x) {
  if (handle_empty<float>(x)) return;
  cblas_sgemm(CblasRowMajor, x.transpose_a ? CblasTrans : CblasNoTrans,
              x.transpose_b ? CblasTrans : CblasNoTrans, int(x.m), int(x.n), int(x.k),
              float(x.alpha), static_cast<const float*>(x.a), ld(x.transpose_a ? x.m : x.k),
              static_cast<const float*>(x.b), ld(x.transpose_b ? x.k : x.n), float(x.beta),
              static_cast<float*>(x.c), ld(x.n));
}

void matmul_f64(const MatmulArgs& x) {
  if (handle_empty<double>(x)) return;
  cblas_dgemm(CblasRowMajor, x.transpose_a ? CblasTrans : CblasNoTrans,
              x.transpose_b ? CblasTrans : CblasNoTrans, int(x.m), int(x.n), int(x.k), x.alpha,
              static_cast<const double*>(x.a), ld(x.transpose_a ? x.m : x.k),
              static_cast<const double*>(x.b), ld(x.transpose_b ? x.k : x.n), x.beta,
              static_cast<double*>(x.c), ld(x.n));
}

}  // namespace

void register_matmul(KernelRegistry& r) {
  add_float_kernels<MatmulArgs>(r, "matmul", matmul_f32, matmul_f64);
}

/// Pins OpenBLAS to one thread (see make_cpu_registry).
void use_single_threaded_blas() { openblas_set_num_threads(1); }

}  // namespace troupe::cpu
