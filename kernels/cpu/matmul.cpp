// Matrix multiply, row-major: float32 through the chosen CPU GEMM library (OpenBLAS's
// cblas_sgemm or oneDNN's dnnl_sgemm), float64 through OpenBLAS (oneDNN has no dgemm). A large
// float32 GEMM on a replica thread may be cut into row blocks that an idle replica of the same
// process runs (core/work_share.hpp); the bits are the same either way.

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/collective/shared_memory_all_reduce.hpp"
#include "core/work_share.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu_gemm.hpp"

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

void openblas_sgemm(const MatmulArgs& x, int64_t lda, int64_t ldb, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, x.transpose_a ? CblasTrans : CblasNoTrans,
              x.transpose_b ? CblasTrans : CblasNoTrans, int(x.m), int(x.n), int(x.k),
              float(x.alpha), static_cast<const float*>(x.a), int(lda),
              static_cast<const float*>(x.b), int(ldb), float(x.beta), static_cast<float*>(x.c),
              int(ldc));
}

using SgemmFn = void (*)(const MatmulArgs&, int64_t lda, int64_t ldb, int64_t ldc);

// GEMMs of at least this many FLOPs are offered to idle replicas: the MLP 784-256-10's two
// large ones (51 MFLOP at batch 128) are; its 0.6 MFLOP ones end before a helper could start.
constexpr double kShareMinFlops = 8e6;
// Rows per block at least: 16-row blocks of 784 x 256 still run at 85 % of the whole call.
constexpr int64_t kShareMinBlockRows = 16;

// Rows [begin, end) of C = op(A) op(B): the same rows of C and of op(A); B is whole. The
// leading dimensions stay the whole call's.
MatmulArgs row_block(const MatmulArgs& x, int64_t begin, int64_t end) {
  MatmulArgs part = x;
  part.m = end - begin;
  const int64_t a_row_stride = x.transpose_a ? 1 : lda(x);  // op(A)'s row r starts here
  part.a = static_cast<const float*>(x.a) + begin * a_row_stride;
  part.c = static_cast<float*>(x.c) + begin * ld(x.n);
  return part;
}

uint64_t shape_key(const MatmulArgs& x) {
  return (uint64_t(x.m) << 42) ^ (uint64_t(x.n) << 21) ^ uint64_t(x.k) ^
         (uint64_t(x.transpose_a) << 62) ^ (uint64_t(x.transpose_b) << 63);
}

// Whether `sgemm` computes the row blocks WorkShare would cut x into with the whole call's bits.
// Most kernels compute each row of C over the inner dimension in the same order whatever the
// call's m (OpenBLAS; oneDNN's AVX-512 kernels except for A x B^T), but some choose their
// blocking by m (oneDNN's AVX2 kernels, for most shapes): cutting those would make results
// depend on which core was faster. The answer depends on the shape and the kernel, not on the
// values, so one probe on random values per shape and thread decides it.
bool cuts_exactly(const MatmulArgs& x, SgemmFn sgemm) {
  struct Verdict {
    uint64_t key;
    SgemmFn sgemm;
    double alpha, beta;
    bool exact;
  };
  thread_local std::vector<Verdict> verdicts;
  const uint64_t key = shape_key(x);
  for (const auto& v : verdicts)
    if (v.key == key && v.sgemm == sgemm && v.alpha == x.alpha && v.beta == x.beta) return v.exact;
  const int64_t a_size = (x.transpose_a ? x.k : x.m) * lda(x);
  const int64_t b_size = (x.transpose_b ? x.n : x.k) * ldb(x);
  uint32_t state = 12345;
  auto fill = [&](std::vector<float>& v) {
    for (float& f : v) f = float((state = state * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1;
  };
  std::vector<float> a(static_cast<size_t>(a_size)), b(static_cast<size_t>(b_size)),
      whole(static_cast<size_t>(x.m * x.n));
  fill(a);
  fill(b);
  fill(whole);
  std::vector<float> cut = whole;  // beta reads C
  MatmulArgs probe = x;
  probe.a = a.data();
  probe.b = b.data();
  probe.c = whole.data();
  sgemm(probe, lda(x), ldb(x), ld(x.n));
  probe.c = cut.data();
  const int64_t rows = WorkShare::block_rows(x.m, kShareMinBlockRows);
  for (int64_t begin = 0; begin < x.m; begin += rows)
    sgemm(row_block(probe, begin, std::min(x.m, begin + rows)), lda(x), ldb(x), ld(x.n));
  const bool exact = std::memcmp(whole.data(), cut.data(), whole.size() * sizeof(float)) == 0;
  verdicts.push_back({key, sgemm, x.alpha, x.beta, exact});
  return exact;
}

struct SharedSgemm {
  const MatmulArgs* whole;
  SgemmFn sgemm;
};

void run_sgemm(const MatmulArgs& x, SgemmFn sgemm) {
  if (handle_empty<float>(x)) return;
  WorkShare* share = WorkShare::current();
  if (!share || !share->sharing() ||
      2.0 * double(x.m) * double(x.n) * double(x.k) < kShareMinFlops || !cuts_exactly(x, sgemm)) {
    sgemm(x, lda(x), ldb(x), ld(x.n));
    return;
  }
  const SharedSgemm job{&x, sgemm};
  share->run_rows(
      WorkShare::current_member(), shape_key(x), x.m, kShareMinBlockRows,
      [](const void* context, int64_t begin, int64_t end) {
        const auto& j = *static_cast<const SharedSgemm*>(context);
        j.sgemm(row_block(*j.whole, begin, end), lda(*j.whole), ldb(*j.whole), ld(j.whole->n));
      },
      &job);
}

void openblas_matmul_f32(const MatmulArgs& x) { run_sgemm(x, openblas_sgemm); }

// Rows [begin, end) of lhs^T rhs: op(A) = lhs^T, so its row r is lhs's column r.
template <SgemmFn sgemm>
void outer_product_rows(const float* lhs, const float* rhs, int64_t k, int64_t m, int64_t n,
                        int64_t begin, int64_t end, float beta, float* out) {
  MatmulArgs x;
  x.m = end - begin;
  x.n = n;
  x.k = k;
  x.transpose_a = true;
  x.a = lhs + begin;
  x.b = rhs;
  x.c = out + begin * n;
  x.beta = beta;
  if (!handle_empty<float>(x)) sgemm(x, ld(m), ld(n), ld(n));
}

// See cpu_outer_product_rows_exact.
bool outer_product_rows_exact(int64_t m, int64_t n, int64_t k, int ranks, OuterProductRowsFn rows) {
  struct Verdict {
    int64_t m, n, k;
    int ranks;
    OuterProductRowsFn rows;
    bool exact;
  };
  thread_local std::vector<Verdict> verdicts;
  for (const auto& v : verdicts)
    if (v.m == m && v.n == n && v.k == k && v.ranks == ranks && v.rows == rows) return v.exact;
  uint32_t state = 2024;
  auto random = [&](int64_t count) {
    std::vector<float> v(static_cast<size_t>(count));
    for (float& f : v) f = float((state = state * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1;
    return v;
  };
  std::vector<std::vector<float>> lhs, rhs;
  for (int r = 0; r < ranks; ++r) {
    lhs.push_back(random(k * m));
    rhs.push_back(random(k * n));
  }
  // Each rank's whole product, summed in rank order: what the all-reduce of dense gradients gives.
  std::vector<float> expected(static_cast<size_t>(m * n)), part(expected.size());
  for (int r = 0; r < ranks; ++r) {
    // All m rows at once: the one GEMM call a replica makes for the gradient's values.
    rows(lhs[size_t(r)].data(), rhs[size_t(r)].data(), k, m, n, 0, m, 0.0f,
         r == 0 ? expected.data() : part.data());
    if (r > 0)
      for (size_t i = 0; i < expected.size(); ++i) expected[i] = expected[i] + part[i];
  }
  // Blocks in rank order; with 2 ranks also the other way round, since the all-reduce adds
  // whichever rank's term comes first (core/collective/shared_memory_all_reduce.cpp).
  const int64_t rows_per_block = outer_product_block_rows(m, n);
  bool exact = true;
  for (bool reversed : {false, true}) {
    if (reversed && ranks != 2) break;
    std::vector<float> blocked(expected.size(), 7.0f);  // beta 0 must overwrite, not add
    for (int64_t begin = 0; begin < m; begin += rows_per_block)
      for (int i = 0; i < ranks; ++i) {
        const size_t r = size_t(reversed ? ranks - 1 - i : i);
        rows(lhs[r].data(), rhs[r].data(), k, m, n, begin, std::min(m, begin + rows_per_block),
             i == 0 ? 0.0f : 1.0f, blocked.data());
      }
    exact =
        exact && std::memcmp(expected.data(), blocked.data(), expected.size() * sizeof(float)) == 0;
  }
  verdicts.push_back({m, n, k, ranks, rows, exact});
  return exact;
}

void openblas_matmul_f64(const MatmulArgs& x) {
  if (handle_empty<double>(x)) return;
  cblas_dgemm(CblasRowMajor, x.transpose_a ? CblasTrans : CblasNoTrans,
              x.transpose_b ? CblasTrans : CblasNoTrans, int(x.m), int(x.n), int(x.k), x.alpha,
              static_cast<const double*>(x.a), int(lda(x)), static_cast<const double*>(x.b),
              int(ldb(x)), x.beta, static_cast<double*>(x.c), int(ld(x.n)));
}

void onednn_matmul_f32(const MatmulArgs& x) { run_sgemm(x, onednn_sgemm); }

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
  r.set_cpu_float32_gemm(float32_gemm);
}

/// Pins OpenBLAS to one thread (see make_cpu_registry).
void use_single_threaded_blas() { openblas_set_num_threads(1); }

}  // namespace troupe::cpu

namespace troupe {

OuterProductRowsFn cpu_outer_product_rows(CpuGemm gemm) {
  return gemm == CpuGemm::onednn ? cpu::outer_product_rows<cpu::onednn_sgemm>
                                 : cpu::outer_product_rows<cpu::openblas_sgemm>;
}

bool cpu_outer_product_rows_exact(CpuGemm gemm, int64_t m, int64_t n, int64_t k, int ranks) {
  return cpu::outer_product_rows_exact(m, n, k, ranks, cpu_outer_product_rows(gemm));
}

bool cpu_gemm_row_blocks_exact(CpuGemm gemm, int64_t m, int64_t n, int64_t k, bool transpose_a,
                               bool transpose_b, double alpha, double beta) {
  MatmulArgs x;
  x.m = m;
  x.n = n;
  x.k = k;
  x.transpose_a = transpose_a;
  x.transpose_b = transpose_b;
  x.alpha = alpha;
  x.beta = beta;
  return cpu::cuts_exactly(x, gemm == CpuGemm::onednn ? cpu::onednn_sgemm : cpu::openblas_sgemm);
}

}  // namespace troupe
