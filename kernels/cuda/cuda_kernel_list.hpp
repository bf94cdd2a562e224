#pragma once
// Internal to kernels/cuda: registration functions of the .cu files.

#include "kernels/registry.hpp"

namespace troupe::cuda {

void register_elementwise(KernelRegistry& registry);
void register_reductions(KernelRegistry& registry);
void register_matmul(KernelRegistry& registry);
void register_nn(KernelRegistry& registry);
void register_rows(KernelRegistry& registry);
void register_optimizers(KernelRegistry& registry);

/// Registers the float32 and float64 instantiations of one GPU kernel.
template <class Args>
void add_float_kernels(KernelRegistry& r, const char* op, KernelFn<Args> f32, KernelFn<Args> f64) {
  r.add<Args>(op, KernelDevice::gpu, DType::float32, f32);
  r.add<Args>(op, KernelDevice::gpu, DType::float64, f64);
}

/// Registers float32, float64, int32 and int64 instantiations of one GPU kernel.
template <class Args>
void add_numeric_kernels(KernelRegistry& r, const char* op, KernelFn<Args> f32, KernelFn<Args> f64,
                         KernelFn<Args> i32, KernelFn<Args> i64) {
  add_float_kernels<Args>(r, op, f32, f64);
  r.add<Args>(op, KernelDevice::gpu, DType::int32, i32);
  r.add<Args>(op, KernelDevice::gpu, DType::int64, i64);
}

}  // namespace troupe::cuda
