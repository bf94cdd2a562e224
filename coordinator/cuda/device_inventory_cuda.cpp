// Device inventory of a CUDA build: the GPUs troupe_cuda sees, its kernels and its copies.
#include "coordinator/device_inventory.hpp"

#include <map>
#include <memory>

#include "kernels/cuda/classification_stats.hpp"
#include "kernels/cuda/cuda_registry.hpp"
#include "kernels/cuda/device_memory.hpp"
#include "kernels/cuda/finite_check.hpp"
#include "kernels/cuda/gpu_stream.hpp"

namespace troupe {

int visible_gpu_count() { return gpu_device_count(); }

// NCCL is linked into every CUDA build (cmake/Cuda.cmake refuses CUDA without it).
bool nccl_available() { return gpu_device_count() > 0; }

void add_gpu_kernels(KernelRegistry& registry) { register_cuda_kernels(registry); }

Tensor to_device(const Tensor& t, const std::string& device) {
  const int gpu = gpu_ordinal(device);
  if (gpu < 0) return to_host(t);
  if (t.memory() == MemoryKind::gpu && t.buffer()->device_index() == gpu) return t;
  return copy_to_gpu(to_host(t), gpu);
}

Tensor fetch_to_device(const Tensor& t, const std::string& device) {
  const int gpu = gpu_ordinal(device);
  if (gpu < 0 || t.memory() != MemoryKind::host) return to_device(t, device);
  // One stream per GPU and reading thread, made on first use and kept for the thread's life.
  thread_local std::map<int, std::unique_ptr<GpuStream>> streams;
  auto& stream = streams[gpu];
  if (!stream) stream = std::make_unique<GpuStream>(gpu, StreamKind::own);
  return copy_to_gpu(t, gpu, stream->context().stream);
}

Tensor to_host(const Tensor& t) { return t.memory() == MemoryKind::host ? t : copy_to_host(t); }

bool gpu_values_finite(const std::vector<Tensor>& gpu_tensors) {
  std::map<int, std::vector<Tensor>> by_device;
  for (const auto& t : gpu_tensors) by_device[t.buffer()->device_index()].push_back(t);
  for (const auto& [device, tensors] : by_device)
    if (!gpu_tensors_finite(tensors)) return false;
  return true;
}

std::pair<double, int64_t> gpu_loss_sum_and_correct(const Tensor& loss, const Tensor& logits,
                                                    const Tensor& labels) {
  const ClassificationStats stats = gpu_classification_stats(loss, logits, labels);
  return {stats.loss_sum, stats.correct};
}

Tensor clone_in_place_memory(const Tensor& t) {
  return t.memory() == MemoryKind::host ? t.clone() : clone_on_gpu(t);
}

Tensor allocate_like(const Tensor& like, DType dtype, Shape shape) {
  if (like.memory() == MemoryKind::host) return Tensor(dtype, std::move(shape));
  return allocate_gpu_tensor(dtype, std::move(shape), like.buffer()->device_index());
}

void bind_device(const std::string& device) {
  const int gpu = gpu_ordinal(device);
  if (gpu >= 0) bind_gpu(gpu);
}

GpuHandles make_gpu_handles(int gpu) {
  auto stream = std::make_shared<GpuStream>(gpu, StreamKind::legacy_default);
  return GpuHandles{stream, stream->context()};
}

}  // namespace troupe
