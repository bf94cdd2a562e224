#pragma once
// A CUDA stream plus the cuBLAS handle bound to it: what one GPU replica needs to run kernels.

#include "kernels/kernel_args.hpp"

namespace troupe {

/// Which stream a GpuStream queues on.
enum class StreamKind {
  own,             ///< a fresh non-blocking stream: overlaps with other streams
  legacy_default,  ///< CUDA's legacy default stream: totally ordered with every blocking stream
                   ///< of the device, so replicas, variable updates and NCCL need no events
};

/// Owns a cudaStream_t (unless legacy_default) and a cublasHandle_t on GPU `device`.
class GpuStream {
 public:
  explicit GpuStream(int device = 0, StreamKind kind = StreamKind::own);
  ~GpuStream();
  GpuStream(const GpuStream&) = delete;
  GpuStream& operator=(const GpuStream&) = delete;

  /// The handles as Ops wants them: Ops ops(registry, stream.context()).
  DeviceContext context() const { return {stream_, blas_}; }
  int device() const { return device_; }
  /// Blocks until all work queued on the stream has finished; throws on a kernel error.
  void synchronize() const;

 private:
  int device_;
  void* stream_ = nullptr;
  void* blas_ = nullptr;
};

}  // namespace troupe
