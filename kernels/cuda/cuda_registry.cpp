#include "kernels/cuda/cuda_registry.hpp"

#include "kernels/cuda/cuda_kernel_list.hpp"

namespace troupe {

void register_cuda_kernels(KernelRegistry& registry) {
  cuda::register_elementwise(registry);
  cuda::register_reductions(registry);
  cuda::register_matmul(registry);
  cuda::register_nn(registry);
  cuda::register_rows(registry);
  cuda::register_optimizers(registry);
}

}  // namespace troupe
