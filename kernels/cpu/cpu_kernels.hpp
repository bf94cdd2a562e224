#pragma once
// Internal to kernels/: registration entry points of the CPU kernel files, and the small helpers
// they share. Callers use make_cpu_registry() (kernels/registry.hpp) instead.

#include <string>
#include <string_view>

#include "kernels/cpu/simd_level.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/registry.hpp"

namespace troupe::cpu {

/// relu and relu_grad (and bias_add below) in the build for `simd` (kernels/cpu/simd_level.hpp).
void register_elementwise(KernelRegistry& registry, SimdLevel simd = detected_simd_level());
void register_reductions(KernelRegistry& registry);
/// float32 matmul on `float32_gemm` (unavailable when not compiled in), float64 on OpenBLAS.
void register_matmul(KernelRegistry& registry, CpuGemm float32_gemm);
void register_nn(KernelRegistry& registry, SimdLevel simd = detected_simd_level());
void register_rows(KernelRegistry& registry);
void register_dense_optimizers(KernelRegistry& registry);
void register_sparse_optimizers(KernelRegistry& registry);
/// Pins OpenBLAS to one thread: replicas already run one per core.
void use_single_threaded_blas();

/// c = alpha * op(a) @ op(b) + beta * c through dnnl_sgemm on the calling thread only, with the
/// given leading dimensions; throws internal when oneDNN refuses (the message names its status)
/// and unavailable when the build has no oneDNN.
void onednn_sgemm(const MatmulArgs& x, int64_t lda, int64_t ldb, int64_t ldc);
/// oneDNN's name for the instruction set it dispatches to on this CPU; "none" without oneDNN.
std::string onednn_isa_name();

/// Registers the float32 and float64 instantiations of one kernel.
template <class Args>
void add_float_kernels(KernelRegistry& r, std::string_view op, KernelFn<Args> f32,
                       KernelFn<Args> f64) {
  r.add<Args>(op, KernelDevice::cpu, DType::float32, f32);
  r.add<Args>(op, KernelDevice::cpu, DType::float64, f64);
}

/// Registers float32, float64, int32 and int64 instantiations of one kernel.
template <class Args>
void add_numeric_kernels(KernelRegistry& r, std::string_view op, KernelFn<Args> f32,
                         KernelFn<Args> f64, KernelFn<Args> i32, KernelFn<Args> i64) {
  add_float_kernels<Args>(r, op, f32, f64);
  r.add<Args>(op, KernelDevice::cpu, DType::int32, i32);
  r.add<Args>(op, KernelDevice::cpu, DType::int64, i64);
}

/// Reads index `i` of an int32 or int64 index array as int64.
inline int64_t read_index(const void* indices, DType index_dtype, int64_t i) {
  return index_dtype == DType::int64 ? static_cast<const int64_t*>(indices)[i]
                                     : static_cast<const int32_t*>(indices)[i];
}

/// How many indices ahead the row kernels ask for a row. Rows lie scattered over a table far
/// larger than the caches, so each one is a DRAM miss that the loop's own loads reach too late to
/// overlap. Asked for 8 rows ahead, 512 rows of 256 bytes from a 128 MiB table (a ps shard's
/// share of a `troupe bench ps` step, its "shard's kernels" line) took 18-19 us to gather instead
/// of 28-31 and 20-22 us to apply SGD to instead of 37-40 (AMD EPYC Zen 4 VM, 3 runs each; a
/// loop of the gather alone gave the same at 4 and 16 ahead).
constexpr int64_t kPrefetchRows = 8;

/// The table row that index `i` of `indices` names when it is one (`i` in range and the row in
/// [0, table_rows)), else -1: what the row kernels ask for ahead (a bad index is reported when
/// its turn comes).
inline int64_t row_ahead(const void* indices, DType index_dtype, int64_t i, int64_t num_indices,
                         int64_t table_rows) {
  if (i >= num_indices) return -1;
  const int64_t row = read_index(indices, index_dtype, i);
  return row >= 0 && row < table_rows ? row : -1;
}

/// Asks for the cache lines of `row` (from row_ahead; -1 asks for nothing) of `table` (may be
/// null), `row_bytes` each: its first 1 KiB (the hardware prefetcher follows a longer row).
inline void prefetch_row(const void* table, int64_t row, size_t row_bytes, bool for_write) {
  if (!table || row < 0) return;
  const char* p = static_cast<const char*>(table) + size_t(row) * row_bytes;
  const char* end = p + (row_bytes < 1024 ? row_bytes : 1024);
  for (; p < end; p += 64) {
#if defined(__x86_64__)
    // g++ 12 at -O2 emitted no instruction for __builtin_prefetch (nor _mm_prefetch) in these
    // kernels' loops (objdump): they ran without a single prefetch. A volatile asm stays.
    // prefetchw is a no-op on the x86 CPUs that lack it.
    if (for_write)
      asm volatile("prefetchw %0" : : "m"(*p));
    else
      asm volatile("prefetcht0 %0" : : "m"(*p));
#else
    __builtin_prefetch(p, for_write ? 1 : 0, 3);
#endif
  }
}

}  // namespace troupe::cpu
