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

}  // namespace troupe::cpu
