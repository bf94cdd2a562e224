// The build-independent half of the device inventory.
#include "coordinator/device_inventory.hpp"

#include "core/device_spec.hpp"

namespace troupe {

DeviceCapabilities local_device_capabilities() {
  const int gpus = visible_gpu_count();
  return DeviceCapabilities{nccl_available(), gpus, gpus};
}

int gpu_ordinal(const std::string& device) {
  // Cheap exit for the common case: replicas bind their device before every step.
  if (device.find("GPU") == std::string::npos && device.find("gpu") == std::string::npos) return -1;
  DeviceSpec spec = DeviceSpec::parse(canonicalize(device));
  if (spec.device_type && *spec.device_type == "GPU") return spec.device_index.value_or(0);
  return -1;
}

ReplicaDeviceContexts::ReplicaDeviceContexts(std::vector<std::string> devices)
    : devices_(std::move(devices)), handles_(devices_.size()) {}

DeviceContext ReplicaDeviceContexts::context(int replica) {
  const std::string& device = devices_.at(size_t(replica));
  const int gpu = gpu_ordinal(device);
  if (gpu < 0) return {};
  std::lock_guard<std::mutex> lock(mutex_);
  auto& h = handles_[size_t(replica)];
  if (!h.owner) h = make_gpu_handles(gpu);
  return h.context;
}

}  // namespace troupe
