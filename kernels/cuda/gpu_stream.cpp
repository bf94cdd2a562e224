#include "kernels/cuda/gpu_stream.hpp"

#include "kernels/cuda/cuda_check.hpp"

namespace troupe {

GpuStream::GpuStream(int device, StreamKind kind) : device_(device) {
  cuda::check(cudaSetDevice(device), "cudaSetDevice");
  cudaStream_t stream = nullptr;  // null = the legacy default stream
  if (kind == StreamKind::own)
    cuda::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cublasHandle_t blas = nullptr;
  cublasStatus_t status = cublasCreate(&blas);
  if (status != CUBLAS_STATUS_SUCCESS) {
    if (stream) cudaStreamDestroy(stream);
    cuda::check_blas(status, "cublasCreate");
  }
  cublasSetStream(blas, stream);
  stream_ = stream;
  blas_ = blas;
}

GpuStream::~GpuStream() {
  cudaSetDevice(device_);
  cublasDestroy(static_cast<cublasHandle_t>(blas_));
  if (stream_) cudaStreamDestroy(cuda::stream_of(stream_));
}

void GpuStream::synchronize() const {
  cuda::check(cudaStreamSynchronize(cuda::stream_of(stream_)), "cudaStreamSynchronize");
}

}  // namespace troupe
