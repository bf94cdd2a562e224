// The non-finite guard's scan on the GPU: every element checked, one flag raised.
#include <cmath>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_memory.hpp"
#include "kernels/cuda/finite_check.hpp"

namespace troupe {
namespace {

template <class T>
__global__ void flag_non_finite(const T* values, int64_t count, int* flag) {
  bool bad = false;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(blockDim.x) * gridDim.x)
    bad |= !isfinite(values[i]);
  if (bad) *flag = 1;  // every writer writes the same value: no atomic needed
}

}  // namespace

bool gpu_tensors_finite(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) return true;
  const int device = tensors.front().buffer()->device_index();
  for (const auto& t : tensors)
    if (t.memory() != MemoryKind::gpu || t.buffer()->device_index() != device)
      throw invalid_argument("gpu_tensors_finite: " + t.description() +
                             " is not in the memory of GPU " + std::to_string(device));
  Tensor flag = allocate_gpu_tensor(DType::int32, Shape{1}, device);  // binds `device`
  int* raised = static_cast<int*>(flag.raw_data());
  cuda::check(cudaMemsetAsync(raised, 0, sizeof(int), nullptr), "gpu_tensors_finite");
  for (const auto& t : tensors) {
    const int64_t n = t.num_elements();
    if (n == 0) continue;
    if (t.dtype() == DType::float32)
      flag_non_finite<<<cuda::blocks_for(n), cuda::kThreads>>>(
          static_cast<const float*>(t.raw_data()), n, raised);
    else if (t.dtype() == DType::float64)
      flag_non_finite<<<cuda::blocks_for(n), cuda::kThreads>>>(
          static_cast<const double*>(t.raw_data()), n, raised);
    else
      continue;
    cuda::check_launch("gpu_tensors_finite");
  }
  return copy_to_host(flag).scalar<int32_t>() == 0;
}

}  // namespace troupe
