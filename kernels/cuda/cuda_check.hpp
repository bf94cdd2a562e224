#pragma once
// Internal to kernels/cuda: turn CUDA/cuBLAS status codes into troupe::Error, and the launch
// geometry every element-wise kernel uses.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "core/status.hpp"

namespace troupe::cuda {

/// Throws internal_error naming `what` and CUDA's message unless `status` is cudaSuccess.
inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw internal_error(std::string(what) + " failed: " + cudaGetErrorName(status) + ": " +
                         cudaGetErrorString(status));
}

/// Throws internal_error naming `what` unless `status` is CUBLAS_STATUS_SUCCESS.
inline void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw internal_error(std::string(what) + " failed with cuBLAS status " +
                         std::to_string(int(status)));
}

/// Checks the launch just made (configuration errors surface here, faults at synchronize).
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over n elements (capped: each thread loops).
inline int blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return int(b < 1 ? 1 : (b > 8192 ? 8192 : b));
}

inline cudaStream_t stream_of(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace troupe::cuda
