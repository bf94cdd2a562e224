#pragma once
// GPU memory for tensors: device detection, cached cudaMalloc-backed Buffers, host <-> device
// copies.

#include "core/tensor.hpp"

namespace troupe {

/// Number of usable CUDA devices; 0 on ANY CUDA error (no driver, insufficient driver, ...),
/// so CPU-only machines simply see no GPUs.
int gpu_device_count();

/// An uninitialised tensor in the memory of GPU `device`. Its block goes back to a per-device
/// cache with its last reference and is handed out again once a whole-device synchronisation
/// (copy_to_host or copy_to_gpu without a stream, synchronize_gpu) that began after that has
/// completed (kernels/gpu_block_cache.hpp); past a quarter of the device memory, cudaFree.
Tensor allocate_gpu_tensor(DType dtype, Shape shape, int device = 0);

/// A copy of host tensor `host` in the memory of GPU `device`. With a `stream` (cudaStream_t) the
/// copy is ordered on it; either way the call returns once the bytes are on the device.
Tensor copy_to_gpu(const Tensor& host, int device = 0, void* stream = nullptr);

/// A host copy of GPU tensor `gpu`. With a `stream` it waits for the work queued on that stream
/// first; without one it waits for the whole device (replica streams are non-blocking, so the
/// legacy default stream alone would not order after them).
Tensor copy_to_host(const Tensor& gpu, void* stream = nullptr);

/// A copy of GPU tensor `gpu` in fresh memory of the same GPU, ordered on `stream` (null: the
/// legacy default stream, which orders after every blocking stream of the device).
Tensor clone_on_gpu(const Tensor& gpu, void* stream = nullptr);

/// Makes `device` the calling thread's current CUDA device (cudaSetDevice): kernels launched
/// from this thread afterwards run there. Throws internal_error naming the device on failure.
void bind_gpu(int device);

/// Waits until every stream of GPU `device` has finished its queued work.
void synchronize_gpu(int device);

}  // namespace troupe
