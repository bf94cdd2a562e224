#include "coordinator/multi_worker_mirrored_strategy.hpp"

#include "coordinator/device_inventory.hpp"
#include "coordinator/mirrored_strategy.hpp"
#include "coordinator/multi_worker_all_reduce.hpp"
#include "core/device_spec.hpp"

namespace troupe {

struct MultiWorkerMirroredStrategy::Resolved {
  std::vector<std::string> devices;
  std::shared_ptr<const KernelRegistry> kernels;
  std::shared_ptr<WorkerCollective> workers;
};

namespace {

AllReduceOptions all_reduce_options(const CommunicationOptions& c) {
  AllReduceOptions o;
  o.bytes_per_pack = c.bytes_per_pack;
  o.chunk_bytes = c.chunk_bytes;
  return o;
}

}  // namespace

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(caf::actor_system& system,
                                                         std::shared_ptr<WorkerCollective> workers,
                                                         std::vector<std::string> devices,
                                                         MultiWorkerOptions options)
    : MultiWorkerMirroredStrategy(
          system,
          Resolved{resolve_mirrored_devices(devices, visible_gpu_count()), default_kernels(),
                   workers ? std::move(workers) : single_worker_collective()},
          options) {}

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(caf::actor_system& system, Resolved r,
                                                         MultiWorkerOptions options)
    : Strategy("MultiWorkerMirroredStrategy", &system, r.devices,
               std::make_unique<MultiWorkerAllReduce>(r.kernels, r.workers,
                                                      all_reduce_options(options.communication)),
               r.kernels, options.timeouts),
      workers_(r.workers) {
  bool all_cpu = true;
  for (auto& d : r.devices) all_cpu = all_cpu && any_cpu({d});
  if (options.communication.implementation == CommunicationImplementation::nccl && all_cpu)
    throw invalid_argument(
        "MultiWorkerMirroredStrategy: communication implementation NCCL needs GPU replicas, but "
        "this worker's devices are CPUs; use AUTO or RING");
  if (!all_cpu)
    throw unimplemented(
        "MultiWorkerMirroredStrategy: GPU replicas are not supported yet (CPU replicas are)");
  workers_->configure(options.communication);
  set_workers(workers_->num_workers(), workers_->worker_index());
}

std::shared_ptr<VariableStorage> MultiWorkerMirroredStrategy::make_variable_storage(
    const std::string& name, const Tensor& initial, const VariableOptions& options) {
  // Every worker creates the same variables in the same order, so the broadcasts pair up.
  Tensor start = num_workers() > 1 ? workers_->broadcast(to_host(initial).clone(), 0) : initial;
  return Strategy::make_variable_storage(name, start, options);
}

}  // namespace troupe
