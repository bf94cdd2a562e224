#pragma once
// MultiWorkerMirroredStrategy (spec mirrored.md §2.5, cluster-and-ps.md §1): synchronous data
// parallelism across workers. Each worker (process) holds its local replicas, one per device;
// num_replicas_in_sync counts every worker's. All-reduce is hierarchical: the worker's replicas
// meet in memory, the worker's sum is all-reduced with the other workers through a
// WorkerCollective, and the result goes back to the replicas (MultiWorkerAllReduce). Variables
// start equal everywhere: each initial value is broadcast from the chief (worker 0).
// experimental_distribute_dataset auto-shards across workers (coordinator/distributed_dataset).
//
// With single_worker_collective() this is a MirroredStrategy in one process, so one experiment
// file runs the same with `troupe run` and with `troupe launch -n N`.

#include <memory>
#include <string>
#include <vector>

#include "coordinator/collectives/worker_collective.hpp"
#include "coordinator/strategy.hpp"

namespace troupe {

/// Options of MultiWorkerMirroredStrategy.
struct MultiWorkerOptions {
  CommunicationOptions communication;
  StrategyOptions timeouts;
};

class MultiWorkerMirroredStrategy : public Strategy {
 public:
  /// `workers`: the collectives between this worker and the others. `devices`: this worker's
  /// (empty: every GPU, or the CPU). Throws invalid_argument for NCCL without GPU replicas.
  MultiWorkerMirroredStrategy(caf::actor_system& system, std::shared_ptr<WorkerCollective> workers,
                              std::vector<std::string> devices = {},
                              MultiWorkerOptions options = {});

  WorkerCollective& worker_collective() { return *workers_; }
  /// The chief (worker 0) writes checkpoints and summaries; the others write to temporary
  /// directories they remove (TF's multi-worker checkpointing).
  bool is_chief() const { return worker_index() == 0; }

 protected:
  std::shared_ptr<VariableStorage> make_variable_storage(const std::string& name,
                                                         const Tensor& initial,
                                                         const VariableOptions& options) override;

 private:
  struct Resolved;
  MultiWorkerMirroredStrategy(caf::actor_system& system, Resolved resolved,
                              MultiWorkerOptions options);

  std::shared_ptr<WorkerCollective> workers_;
};

}  // namespace troupe
