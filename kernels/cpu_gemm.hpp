#pragma once
// The libraries that can run float32 matmul on the CPU. OpenBLAS is always linked (it also runs
// float64, which oneDNN lacks); oneDNN is compiled in when the build finds Debian's libdnnl-dev.
// Both run one thread per call: replicas already run one per core. Which one a default registry
// uses was decided by measurement (docs/kernels.md); `troupe bench train` measures both.

#include <cstdint>
#include <string>
#include <vector>

namespace troupe {

enum class CpuGemm { openblas, onednn };

/// "openblas" or "onednn".
const char* cpu_gemm_name(CpuGemm gemm);

/// The float32 GEMM libraries this build can run: openblas, then onednn when compiled in.
std::vector<CpuGemm> available_cpu_gemms();

/// The one make_cpu_registry() runs float32 matmul with: onednn when compiled in.
CpuGemm default_cpu_gemm();

/// The instruction set oneDNN dispatches to on this CPU (e.g. "avx512_core_bf16", "avx2"), or
/// "none" when oneDNN is not compiled in.
std::string onednn_cpu_isa();

/// Whether `gemm` computes row blocks of op(A) op(B) (m x n, inner k) with the whole call's bits
/// on this CPU: only such shapes are cut for an idle replica to share (core/work_share.hpp).
/// Probed once per shape, alpha, beta and thread, on random values (kernels/cpu/matmul.cpp).
bool cpu_gemm_row_blocks_exact(CpuGemm gemm, int64_t m, int64_t n, int64_t k, bool transpose_a,
                               bool transpose_b, double alpha = 1.0, double beta = 0.0);

/// Rows [row_begin, row_end) of lhs^T rhs through `gemm` (lhs [k, m], rhs [k, n], row-major),
/// plus beta times what `out` ([m, n]) holds there: an OuterProduct's `rows`
/// (core/collective/shared_memory_all_reduce.hpp).
using OuterProductRowsFn = void (*)(const float* lhs, const float* rhs, int64_t k, int64_t m,
                                    int64_t n, int64_t row_begin, int64_t row_end, float beta,
                                    float* out);
OuterProductRowsFn cpu_outer_product_rows(CpuGemm gemm);

/// Whether cpu_outer_product_rows(gemm) over the shared-memory all-reduce's row blocks
/// (outer_product_block_rows), accumulated over `ranks` ranks of k rows each (beta 1 after the
/// first rank), gives each rank's whole product (one GEMM) summed in rank order bit for bit.
/// Probed once per shape, rank count and thread, on random values.
bool cpu_outer_product_rows_exact(CpuGemm gemm, int64_t m, int64_t n, int64_t k, int ranks);

}  // namespace troupe
