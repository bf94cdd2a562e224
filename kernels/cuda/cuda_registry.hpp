#pragma once
// Entry point of troupe_cuda: adds the GPU version of every kernel to a registry. Link
// troupe_cuda (built when TROUPE_HAVE_CUDA is ON) and call this after make_cpu_registry();
// GPU kernels then run whenever an op's tensors live in GPU memory.

#include "kernels/registry.hpp"

namespace troupe {

/// Registers every CUDA kernel (device kind gpu) in `registry`.
void register_cuda_kernels(KernelRegistry& registry);

}  // namespace troupe
