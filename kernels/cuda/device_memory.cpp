#include "kernels/cuda/device_memory.hpp"

#include <mutex>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/gpu_block_cache.hpp"

namespace troupe {

int gpu_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return 0;
  }
  return count;
}

namespace {

constexpr int kMaxDevices = 64;

// The caching allocator's bookkeeping for `device` (kernels/gpu_block_cache.hpp), created on
// first use with room for a quarter of the device's memory. Never destroyed: at exit the CUDA
// context may already be gone, and the driver takes the memory back with the process.
GpuBlockCache& block_cache(int device) {
  static std::mutex mutex;
  static GpuBlockCache* caches[kMaxDevices] = {};
  if (device < 0 || device >= kMaxDevices)
    throw invalid_argument("GPU device " + std::to_string(device) + " is outside [0, " +
                           std::to_string(kMaxDevices) + ")");
  std::lock_guard<std::mutex> lock(mutex);
  if (!caches[device]) {
    size_t free_bytes = 0, total_bytes = 0;
    cuda::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    caches[device] = new GpuBlockCache(total_bytes / 4);
  }
  return *caches[device];
}

// cudaDeviceSynchronize on the current device (`device`), after which the blocks released before
// it began are reusable.
void synchronize_and_recycle(int device, const char* what) {
  GpuBlockCache& cache = block_cache(device);
  const uint64_t ticket = cache.synchronizing();
  cuda::check(cudaDeviceSynchronize(), what);
  cache.synchronized(ticket);
}

void* device_malloc(size_t bytes, int device) {
  void* p = nullptr;
  cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaErrorMemoryAllocation) {
    // Out of memory: give the cached blocks back to the driver and try once more.
    cudaGetLastError();
    synchronize_and_recycle(device, "cudaDeviceSynchronize");
    for (auto& [block, size] : block_cache(device).drain_free()) cudaFree(block);
    status = cudaMalloc(&p, bytes);
  }
  cuda::check(status, "cudaMalloc");
  return p;
}

}  // namespace

Tensor allocate_gpu_tensor(DType dtype, Shape shape, int device) {
  const size_t bytes = size_t(shape.num_elements()) * dtype_size(dtype);
  cuda::check(cudaSetDevice(device), "cudaSetDevice");
  // At least one granule, so that every GPU tensor has a real address (cudaMalloc(0) may not).
  const size_t block_bytes = GpuBlockCache::rounded(bytes);
  GpuBlockCache& cache = block_cache(device);
  void* p = cache.take(block_bytes);
  if (p == nullptr) p = device_malloc(block_bytes, device);
  auto buffer =
      std::make_shared<Buffer>(p, bytes, MemoryKind::gpu, device, [&cache, block_bytes](void* q) {
        if (!cache.release(q, block_bytes)) cudaFree(q);
      });
  return Tensor(dtype, std::move(shape), std::move(buffer));
}

namespace {
// Copies on `stream` and waits for it; without a stream, waits for the whole device around the
// copy so that it is ordered after (and completes before) work on any non-blocking stream.
void copy_and_wait(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, void* stream,
                   int device, const char* what) {
  if (stream != nullptr) {
    cudaStream_t s = cuda::stream_of(stream);
    cuda::check(cudaMemcpyAsync(dst, src, bytes, kind, s), what);
    cuda::check(cudaStreamSynchronize(s), what);
  } else {
    synchronize_and_recycle(device, what);
    cuda::check(cudaMemcpy(dst, src, bytes, kind), what);
    synchronize_and_recycle(device, what);
  }
}
}  // namespace

Tensor copy_to_gpu(const Tensor& host, int device, void* stream) {
  if (host.memory() != MemoryKind::host)
    throw invalid_argument("copy_to_gpu: " + host.description() + " is already on a GPU");
  Tensor gpu = allocate_gpu_tensor(host.dtype(), host.shape(), device);
  if (host.byte_size())
    copy_and_wait(gpu.raw_data(), host.raw_data(), host.byte_size(), cudaMemcpyHostToDevice, stream,
                  device, "copy_to_gpu");
  return gpu;
}

Tensor copy_to_host(const Tensor& gpu, void* stream) {
  if (gpu.memory() != MemoryKind::gpu)
    throw invalid_argument("copy_to_host: " + gpu.description() + " is not on a GPU");
  Tensor host(gpu.dtype(), gpu.shape());
  const int device = gpu.buffer()->device_index();
  cuda::check(cudaSetDevice(device), "cudaSetDevice");
  if (gpu.byte_size())
    copy_and_wait(host.raw_data(), gpu.raw_data(), gpu.byte_size(), cudaMemcpyDeviceToHost, stream,
                  device, "copy_to_host");
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
  synchronize_and_recycle(device, "cudaDeviceSynchronize");
}

}  // namespace troupe
