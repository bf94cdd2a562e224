#pragma once
// MultiWorkerMirroredStrategy's cross-device op (TF's CollectiveAllReduce across workers): the
// hierarchical all-reduce. This worker's replicas are summed in memory on the merge thread, the
// sum is all-reduced with the other workers through the WorkerCollective, and the result is
// mirrored back onto this worker's devices. MEAN divides by the replicas of every worker.

#include <memory>

#include "coordinator/collectives/worker_collective.hpp"
#include "coordinator/cross_device_ops.hpp"

namespace troupe {

class MultiWorkerAllReduce final : public CrossDeviceOps {
 public:
  MultiWorkerAllReduce(std::shared_ptr<const KernelRegistry> kernels,
                       std::shared_ptr<WorkerCollective> workers, AllReduceOptions options = {});
  CrossDeviceOpKind kind() const override { return CrossDeviceOpKind::collective_all_reduce; }
  int workers() const override { return workers_->num_workers(); }
  WorkerCollective& worker_collective() { return *workers_; }

  Mirrored reduce_in_place(ReduceOp op, const DistributedValues& value) override;

 protected:
  Mirrored reduce_implementation(ReduceOp op, const DistributedValues& value,
                                 const std::vector<std::string>& destinations) override;
  std::vector<Mirrored> batch_reduce_implementation(ReduceOp op,
                                                    const std::vector<ReducePair>& pairs) override;

 private:
  std::shared_ptr<WorkerCollective> workers_;
};

}  // namespace troupe
