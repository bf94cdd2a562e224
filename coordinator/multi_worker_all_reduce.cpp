#include "coordinator/multi_worker_all_reduce.hpp"

#include "coordinator/tensor_reductions.hpp"
#include "core/status.hpp"

namespace troupe {
namespace {

void require_host(const DistributedValues& value) {
  for (auto& v : value.values())
    if (v.memory() != MemoryKind::host)
      throw unimplemented(
          "MultiWorkerMirroredStrategy: reducing GPU values across workers is not supported yet "
          "(CPU replicas are); got " +
          v.description());
}

}  // namespace

MultiWorkerAllReduce::MultiWorkerAllReduce(std::shared_ptr<const KernelRegistry> kernels,
                                           std::shared_ptr<WorkerCollective> workers,
                                           AllReduceOptions options)
    : CrossDeviceOps(std::move(kernels), options), workers_(std::move(workers)) {
  if (!workers_) throw invalid_argument("MultiWorkerAllReduce: no worker collective");
}

Mirrored MultiWorkerAllReduce::reduce_in_place(ReduceOp op, const DistributedValues& value) {
  return reduce_implementation(op, value, value.devices());
}

Mirrored MultiWorkerAllReduce::reduce_implementation(ReduceOp op, const DistributedValues& value,
                                                     const std::vector<std::string>& destinations) {
  return batch_reduce_implementation(op, {ReducePair{value, destinations}}).at(0);
}

std::vector<Mirrored> MultiWorkerAllReduce::batch_reduce_implementation(
    ReduceOp op, const std::vector<ReducePair>& pairs) {
  // This worker's sum of every value first, then one call across workers for all of them.
  std::vector<Tensor> local;
  local.reserve(pairs.size());
  for (auto& p : pairs) {
    require_host(p.value);
    local.push_back(simple_reduce(ReduceOp::sum, p.value));
  }
  auto global = workers_->all_reduce_sum(local);
  std::vector<Mirrored> out;
  out.reserve(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    Tensor t = global[i];
    if (op == ReduceOp::mean)
      t = divided(ops_, t, int64_t(pairs[i].value.size()) * workers_->num_workers());
    out.push_back(broadcast(t, pairs[i].destinations));
  }
  return out;
}

}  // namespace troupe
