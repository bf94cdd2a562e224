#pragma once
// GPU memory for tensors: device detection, cudaMalloc-backed Buffers, host <-> device copies.

#include "core/tensor.hpp"

namespace troupe {

/// Number of usable CUDA devices; 0 on ANY CUDA error (no driver, insufficient driver, ...),
/// so CPU-only machines simply see no GPUs.
int gpu_device_count();

/// An uninitialised tensor in the memory of GPU `device`; cudaFree'd with its last reference.
Tensor allocate_gpu_tensor(DType dtype, Shape shape, int device = 0);

/// A copy of host tensor `host` in the memory of GPU `device` (synchronous).
Tensor copy_to_gpu(const Tensor& host, int device = 0);

/// A host copy of GPU tensor `gpu` (synchronous: waits for work queued before it).
Tensor copy_to_host(const Tensor& gpu);

}  // namespace troupe
