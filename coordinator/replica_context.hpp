#pragma once
// What a step function sees of its replica (tf.distribute.ReplicaContext): its id, the group
// size, merge_call and all_reduce.

#include <functional>
#include <string>
#include <vector>

#include "actors/replica_group_shared.hpp"
#include "coordinator/distributed_values.hpp"
#include "core/reduce_op.hpp"

namespace troupe {

class Strategy;

/// Runs once in cross-replica context with every replica's merge_call arguments grouped per
/// position (PerReplica), and returns values that each replica receives its component of
/// (a value with one component goes to every replica).
using MergeFn =
    std::function<std::vector<DistributedValues>(Strategy&, const std::vector<PerReplica>&)>;

/// The replica side of a running step.
class ReplicaContext {
 public:
  ReplicaContext(Strategy& strategy, int replica_id, MergePort& port);

  int replica_id_in_sync_group() const { return replica_id_; }
  int num_replicas_in_sync() const;
  Strategy& strategy() const { return strategy_; }
  /// Canonical device of this replica.
  const std::string& device() const;
  /// Step id of the run() this replica is executing.
  uint64_t step() const { return port_.step(); }

  /// Suspends this replica until every replica reaches its merge_call with the same `tag`, runs
  /// `fn` once (replica 0's) in cross-replica context, and returns this replica's share of its
  /// results. Replicas that disagree, fail or stay away end in an error naming them.
  std::vector<Tensor> merge_call(const MergeFn& fn, std::vector<Tensor> args = {},
                                 const std::string& tag = "");
  /// All-reduce of one value across replicas (every replica must call it).
  Tensor all_reduce(ReduceOp op, const Tensor& value);
  /// Batched all-reduce: fused by the cross-device op's packing rules.
  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& values);

 private:
  Strategy& strategy_;
  int replica_id_;
  MergePort& port_;
};

}  // namespace troupe
