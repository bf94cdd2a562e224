#include "kernels/cuda/device_memory.hpp"

#include "kernels/cuda/cuda_check.hpp"

namespace troupe {

int gpu_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return 0;
  }
  return count;
}

Tensor allocate_gpu_tensor(DType dtype, Shape shape, int device) {
  const size_t bytes = size_t(shape.num_elements()) * dtype_size(dtype);
  cuda::check(cudaSetDevice(device), "cudaSetDevice");
  void* p = nullptr;
  // cudaMalloc(0) may return null; allocate one byte so every GPU tensor has a real address.
  cuda::check(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc");
  auto buffer =
      std::make_shared<Buffer>(p, bytes, MemoryKind::gpu, device, [](void* q) { cudaFree(q); });
  return Tensor(dtype, std::move(shape), std::move(buffer));
}

namespace {
// Copies on `stream` and waits for it; without a stream, waits for the whole device around the
// copy so that it is ordered after (and completes before) work on any non-blocking stream.
void copy_and_wait(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, void* stream,
                   const char* what) {
  if (stream != nullptr) {
    cudaStream_t s = cuda::stream_of(stream);
    cuda::check(cudaMemcpyAsync(dst, src, bytes, kind, s), what);
    cuda::check(cudaStreamSynchronize(s), what);
  } else {
    cuda::check(cudaDeviceSynchronize(), what);
    cuda::check(cudaMemcpy(dst, src, bytes, kind), what);
    cuda::check(cudaDeviceSynchronize(), what);
  }
}
}  // namespace

Tensor copy_to_gpu(const Tensor& host, int device, void* stream) {
  if (host.memory() != MemoryKind::host)
    throw invalid_argument("copy_to_gpu: " + host.description() + " is already on a GPU");
  Tensor gpu = allocate_gpu_tensor(host.dtype(), host.shape(), device);
  if (host.byte_size())
    copy_and_wait(gpu.raw_data(), host.raw_data(), host.byte_size(), cudaMemcpyHostToDevice, stream,
                  "copy_to_gpu");
  return gpu;
}

Tensor copy_to_host(const Tensor& gpu, void* stream) {
  if (gpu.memory() != MemoryKind::gpu)
    throw invalid_argument("copy_to_host: " + gpu.description() + " is not on a GPU");
  Tensor host(gpu.dtype(), gpu.shape());
  cuda::check(cudaSetDevice(gpu.buffer()->device_index()), "cudaSetDevice");
  if (gpu.byte_size())
    copy_and_wait(host.raw_data(), gpu.raw_data(), gpu.byte_size(), cudaMemcpyDeviceToHost, stream,
                  "copy_to_host");
  return host;
}

Tensor clone_on_gpu(const Tensor& gpu, void* stream) {
  if (gpu.memory() != MemoryKind::gpu)
    throw invalid_argument("clone_on_gpu: " + gpu.description() + " is not on a GPU");
  const int device = gpu.buffer()->device_index();
  Tensor copy = allocate_gpu_tensor(gpu.dtype(), gpu.shape(), device);
  if (gpu.byte_size())
    cuda::check(cudaMemcpyAsync(copy.raw_data(), gpu.raw_data(), gpu.byte_size(),
                                cudaMemcpyDeviceToDevice, cuda::stream_of(stream)),
                "clone_on_gpu");
  return copy;
}

void bind_gpu(int device) {
  cuda::check(cudaSetDevice(device), ("cudaSetDevice(" + std::to_string(device) + ")").c_str());
}

void synchronize_gpu(int device) {
  bind_gpu(device);
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

}  // namespace troupe
