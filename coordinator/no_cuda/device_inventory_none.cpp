// Device inventory of a CPU-only build: no GPUs; host memory is the only memory.
#include "coordinator/device_inventory.hpp"

namespace troupe {
namespace {
[[noreturn]] void no_gpu_support(const std::string& what) {
  throw unimplemented(what +
                      ": this troupe was built without CUDA (no nvcc or NCCL at configure "
                      "time), so it has no GPU support");
}
}  // namespace

int visible_gpu_count() { return 0; }
bool nccl_available() { return false; }
void add_gpu_kernels(KernelRegistry&) {}

Tensor to_device(const Tensor& t, const std::string& device) {
  if (gpu_ordinal(device) >= 0) no_gpu_support("placing " + t.description() + " on " + device);
  return t;
}

Tensor fetch_to_device(const Tensor& t, const std::string& device) { return to_device(t, device); }

// Without CUDA no tensor can live in GPU memory, so every tensor is already on the host.
Tensor to_host(const Tensor& t) { return t; }
bool gpu_values_finite(const std::vector<Tensor>& gpu_tensors) {
  if (!gpu_tensors.empty()) no_gpu_support("checking " + gpu_tensors.front().description());
  return true;
}
std::pair<double, int64_t> gpu_loss_sum_and_correct(const Tensor& loss, const Tensor&,
                                                    const Tensor&) {
  no_gpu_support("summing " + loss.description());
}
Tensor clone_in_place_memory(const Tensor& t) { return t.clone(); }
Tensor allocate_like(const Tensor&, DType dtype, Shape shape) {
  return Tensor(dtype, std::move(shape));
}

void bind_device(const std::string& device) {
  if (gpu_ordinal(device) >= 0) no_gpu_support("binding " + device);
}

GpuHandles make_gpu_handles(int gpu) {
  no_gpu_support("kernel handles for GPU:" + std::to_string(gpu));
}

}  // namespace troupe
