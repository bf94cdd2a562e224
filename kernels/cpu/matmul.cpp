// Matrix multiply, row-major: float32 through the chosen CPU GEMM library (OpenBLAS's
// cblas_sgemm or oneDNN's dnnl_sgemm), float64 through OpenBLAS (oneDNN has no dgemm).

#include <cblas.h>

#include <algorithm>
#include <string>

#include "kernels/cpu/cpu_kernels.hpp"

namespace troupe::cpu {
namespace {

// BLAS rejects leading dimensions below 1 even when a dimension is 0.
int64_t ld(int64_t columns) { return std::max<int64_t>(1, columns); }
int64_t lda(const MatmulArgs& x) { return ld(x.transpose_a ? x.m : x.k); }
int64_t ldb(const MatmulArgs& x) { return ld(x.transpose_b ? x.k : x.n); }

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

void openblas_matmul_f32(const MatmulArgs& x) {
  if (handle_empty<float>(x)) return;
  cblas_sgemm(CblasRowMajor, x.transpose_a ? CblasTrans : CblasNoTrans,
              x.transpose_b ? CblasTrans : CblasNoTrans, int(x.m), int(x.n), int(x.k),
              float(x.alpha), static_cast<const float*>(x.a), int(lda(x)),
              static_cast<const float*>(x.b), int(ldb(x)), float(x.beta), static_cast<float*>(x.c),
              int(ld(x.n)));
}

void openblas_matmul_f64(const MatmulArgs& x) {
  if (handle_empty<double>(x)) return;
  cblas_dgemm(CblasRowMajor, x.transpose_a ? CblasTrans : CblasNoTrans,
              x.transpose_b ? CblasTrans : CblasNoTrans, int(x.m), int(x.n), int(x.k), x.alpha,
              static_cast<const double*>(x.a), int(lda(x)), static_cast<const double*>(x.b),
              int(ldb(x)), x.beta, static_cast<double*>(x.c), int(ld(x.n)));
}

void onednn_matmul_f32(const MatmulArgs& x) {
  if (handle_empty<float>(x)) return;
  onednn_sgemm(x, lda(x), ldb(x), ld(x.n));
}

}  // namespace

void register_matmul(KernelRegistry& r, CpuGemm float32_gemm) {
  const auto available = available_cpu_gemms();
  if (std::find(available.begin(), available.end(), float32_gemm) == available.end())
    throw unavailable(std::string("matmul: float32 GEMM '") + cpu_gemm_name(float32_gemm) +
                      "' is not in this build (oneDNN comes from Debian's libdnnl-dev); "
                      "available: openblas");
  add_float_kernels<MatmulArgs>(
      r, "matmul", float32_gemm == CpuGemm::onednn ? onednn_matmul_f32 : openblas_matmul_f32,
      openblas_matmul_f64);
}

/// Pins OpenBLAS to one thread (see make_cpu_registry).
void use_single_threaded_blas() { openblas_set_num_threads(1); }

}  // namespace troupe::cpu
