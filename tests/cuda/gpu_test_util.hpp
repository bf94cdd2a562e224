#pragma once
// Fixture for GPU-vs-CPU kernel tests: skips without a device; otherwise owns a registry with
// CPU and CUDA kernels, a GpuStream, and Ops for each side.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "kernels/cuda/cuda_registry.hpp"
#include "kernels/cuda/device_memory.hpp"
#include "kernels/cuda/gpu_stream.hpp"
#include "kernels/ops.hpp"

namespace troupe::testing {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    registry = std::make_unique<KernelRegistry>(make_cpu_registry());
    register_cuda_kernels(*registry);
    stream = std::make_unique<GpuStream>(0);
    cpu = std::make_unique<Ops>(*registry);
    gpu = std::make_unique<Ops>(*registry, stream->context());
  }

  Tensor up(const Tensor& host) { return copy_to_gpu(host, 0); }

  /// Waits for the stream, copies `on_gpu` back and compares with `on_cpu` element-wise.
  void expect_match(const Tensor& on_cpu, const Tensor& on_gpu, double tol) {
    stream->synchronize();
    Tensor back = copy_to_host(on_gpu);
    ASSERT_EQ(back.dtype(), on_cpu.dtype());
    ASSERT_EQ(back.shape(), on_cpu.shape());
    dispatch_dtype(on_cpu.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* c = on_cpu.data<T>();
      const T* g = back.data<T>();
      for (int64_t i = 0; i < on_cpu.num_elements(); ++i) {
        const double e = double(c[i]), a = double(g[i]);
        ASSERT_NEAR(a, e, tol * (1.0 + std::abs(e))) << "element " << i;
      }
    });
  }

  std::unique_ptr<KernelRegistry> registry;
  std::unique_ptr<GpuStream> stream;
  std::unique_ptr<Ops> cpu, gpu;
};

/// Tolerance for comparing a CPU and a GPU result of `dtype` (different FMA/rounding orders).
inline double tol_for(DType dtype) { return dtype == DType::float32 ? 1e-5 : 1e-12; }

}  // namespace troupe::testing
