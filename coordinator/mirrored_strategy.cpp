#include "coordinator/mirrored_strategy.hpp"

#include <set>

#include "core/device_spec.hpp"

namespace troupe {
std::shared_ptr<const KernelRegistry> default_kernels() {
  return std::make_shared<const KernelRegistry>(make_cpu_registry());
}

std::vector<std::string> resolve_mirrored_devices(const std::vector<std::string>& devices,
                                                  int available_gpus) {
  std::vector<std::string> requested = devices;
  if (requested.empty()) {
    for (int g = 0; g < available_gpus; ++g) requested.push_back("GPU:" + std::to_string(g));
    if (requested.empty()) requested.push_back("CPU:0");
  }
  if (!is_single_worker(requested))  // throws for mixed local/remote and remote without task
    throw failed_precondition(
        "in-graph multi-worker MirroredStrategy is not supported (devices "
        "span several workers); use MultiWorkerMirroredStrategy");
  std::vector<std::string> canonical;
  std::set<std::string> seen;
  for (auto& d : requested) {
    DeviceSpec spec = DeviceSpec::parse(d);
    if (!spec.is_local())
      throw unimplemented("device '" + d +
                          "' is on a remote worker; MirroredStrategy runs the "
                          "devices of this process only");
    std::string c = canonicalize(d);
    if (!seen.insert(c).second) throw invalid_argument("device '" + d + "' is listed twice");
    DeviceSpec full = DeviceSpec::parse(c);
    if (full.device_type && *full.device_type == "GPU" && full.device_index &&
        *full.device_index >= available_gpus)
      throw invalid_argument("device '" + d + "' requested but this machine has " +
                             std::to_string(available_gpus) + " GPU(s)");
    canonical.push_back(c);
  }
  return canonical;
}

struct MirroredStrategy::Resolved {
  std::vector<std::string> devices;
  std::shared_ptr<const KernelRegistry> kernels;
};

MirroredStrategy::MirroredStrategy(caf::actor_system& system, std::vector<std::string> devices,
                                   MirroredOptions options)
    : MirroredStrategy(system, Resolved{resolve_mirrored_devices(devices, 0), default_kernels()},
                       options) {}

MirroredStrategy::MirroredStrategy(caf::actor_system& system, Resolved r, MirroredOptions options)
    : Strategy("MirroredStrategy", &system, r.devices,
               make_cross_device_ops(options.cross_device_ops
                                         ? *options.cross_device_ops
                                         : select_cross_device_ops(r.devices, DeviceCapabilities{}),
                                     r.kernels, options.all_reduce),
               r.kernels, options.timeouts) {}

OneDeviceStrategy::OneDeviceStrategy(caf::actor_system& system, const std::string& device,
                                     StrategyOptions options)
    : Strategy("OneDeviceStrategy", &system, {canonicalize(device)},
               std::make_unique<ReductionToOneDevice>(default_kernels()), default_kernels(),
               options) {}

DefaultStrategy::DefaultStrategy()
    : Strategy("DefaultStrategy", nullptr, {canonicalize("/device:CPU:0")},
               std::make_unique<ReductionToOneDevice>(default_kernels()), default_kernels(), {}) {}

}  // namespace troupe
