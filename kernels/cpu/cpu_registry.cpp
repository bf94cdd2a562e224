#include "kernels/cpu/cpu_kernels.hpp"

namespace troupe {

KernelRegistry make_cpu_registry() { return make_cpu_registry(default_cpu_gemm()); }

KernelRegistry make_cpu_registry(CpuGemm gemm) {
  cpu::use_single_threaded_blas();
  KernelRegistry registry;
  cpu::register_elementwise(registry);
  cpu::register_reductions(registry);
  cpu::register_matmul(registry, gemm);
  cpu::register_nn(registry);
  cpu::register_rows(registry);
  cpu::register_dense_optimizers(registry);
  cpu::register_sparse_optimizers(registry);
  return registry;
}

}  // namespace troupe
