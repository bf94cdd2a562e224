#pragma once
// What this process can compute on beyond the CPU, and how to put tensors there. The header is
// free of CUDA and CAF; its implementation is chosen by CMake: coordinator/cuda/ when troupe_cuda
// is built (TROUPE_HAVE_CUDA), coordinator/no_cuda/ otherwise, where there are no GPUs and any
// request for one is an error that says so. Everything CPU behaves the same in both builds.

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/collective/algorithm_choice.hpp"
#include "core/device_spec.hpp"
#include "core/tensor.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/registry.hpp"

namespace troupe {

/// GPUs the CUDA runtime sees; 0 in a CPU-only build and on any CUDA error (no driver, ...).
int visible_gpu_count();
/// True when the build has NCCL and at least one GPU is visible.
bool nccl_available();
/// The machine as select_cross_device_ops sees it (no virtual GPUs: logical = physical).
DeviceCapabilities local_device_capabilities();
/// Adds the CUDA kernels to `registry` in a CUDA build; does nothing in a CPU-only build.
void add_gpu_kernels(KernelRegistry& registry);

/// `t` in the memory of `device`: itself when it is already there, else a copy (host <-> GPU).
/// Throws unimplemented for a GPU device in a CPU-only build.
Tensor to_device(const Tensor& t, const std::string& device);
/// to_device for input read ahead (InputOptions::experimental_fetch_to_device): a host tensor
/// bound for a GPU is copied on a stream of the calling thread's own rather than the replicas'
/// (whose queued work it then need not wait for); returns once the bytes are there.
Tensor fetch_to_device(const Tensor& t, const std::string& device);
/// `t` in host memory (itself when it is already there); waits for the GPU's queued work.
Tensor to_host(const Tensor& t);
/// True when no element of any GPU tensor in `gpu_tensors` is NaN or infinite, decided on the
/// GPUs (a flag per GPU comes back, not the values). Throws unimplemented for a GPU tensor in a
/// CPU-only build (which cannot make one).
bool gpu_values_finite(const std::vector<Tensor>& gpu_tensors);
/// For a classification batch whose per-example `loss` [n], `logits` [n, classes] and int
/// `labels` [n] live on one GPU: {sum of the losses, rows whose first largest logit is at the
/// label}, computed there (16 bytes come back, not the three tensors). Throws unimplemented in
/// a CPU-only build (which cannot make a GPU tensor).
std::pair<double, int64_t> gpu_loss_sum_and_correct(const Tensor& loss, const Tensor& logits,
                                                    const Tensor& labels);
/// A private copy of `t` in the same memory (host or the same GPU).
Tensor clone_in_place_memory(const Tensor& t);
/// An uninitialised tensor of `dtype` and `shape` in the memory `like` lives in.
Tensor allocate_like(const Tensor& like, DType dtype, Shape shape);
/// Makes `device` the calling thread's CUDA device when it is a GPU; nothing for a CPU.
void bind_device(const std::string& device);

/// The kernel context of a GPU: a cuBLAS handle on the GPU's legacy default stream, plus the
/// opaque owner that frees it. Throws unimplemented in a CPU-only build.
struct GpuHandles {
  std::shared_ptr<void> owner;
  DeviceContext context;
};
GpuHandles make_gpu_handles(int gpu);

/// Kernel contexts of a strategy's replicas. A GPU replica gets a cuBLAS handle on its GPU's
/// legacy default stream, so that its kernels, its variables' updates and NcclAllReduce run in
/// one order per GPU without events; a CPU replica gets the empty context.
class ReplicaDeviceContexts {
 public:
  explicit ReplicaDeviceContexts(std::vector<std::string> devices);
  /// Replica `replica`'s context, created on first use (any thread).
  DeviceContext context(int replica);

 private:
  std::vector<std::string> devices_;
  std::mutex mutex_;
  std::vector<GpuHandles> handles_;
};

}  // namespace troupe
