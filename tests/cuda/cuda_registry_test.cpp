// Registry coverage and device detection: these run (and pass) on machines without a GPU.

#include <gtest/gtest.h>

#include "kernels/cuda/cuda_registry.hpp"
#include "kernels/cuda/device_memory.hpp"

namespace troupe {
namespace {

TEST(CudaRegistry, EveryCpuKernelHasAGpuTwin) {
  KernelRegistry registry = make_cpu_registry();
  const size_t cpu_kernels = registry.size();
  register_cuda_kernels(registry);
  EXPECT_EQ(registry.size(), 2 * cpu_kernels);
  for (const std::string& key : make_cpu_registry().keys()) {
    const std::string gpu_key =
        key.substr(0, key.find("/cpu/")) + "/gpu/" + key.substr(key.find("/cpu/") + 5);
    const auto keys = registry.keys();
    EXPECT_NE(std::find(keys.begin(), keys.end(), gpu_key), keys.end()) << gpu_key;
  }
}

TEST(CudaRegistry, DeviceCountNeverThrows) {
  const int count = gpu_device_count();
  EXPECT_GE(count, 0);
  EXPECT_EQ(gpu_device_count(), count);  // no sticky error from the first call
}

}  // namespace
}  // namespace troupe
