#pragma once
// What a step function sees of its replica (tf.distribute.ReplicaContext): its id, the group
// size, merge_call and the collectives (all_reduce, broadcast, all_gather), which run over the
// transport coordinator/collectives chooses per call.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/replica_group_shared.hpp"
#include "coordinator/distributed_values.hpp"
#include "core/collective/transport_choice.hpp"
#include "core/reduce_op.hpp"

namespace troupe {

class Strategy;
class ReplicaCollectives;

/// Runs once in cross-replica context with every replica's merge_call arguments grouped per
/// position (PerReplica), and returns values that each replica receives its component of
/// (a value with one component goes to every replica).
using MergeFn =
    std::function<std::vector<DistributedValues>(Strategy&, const std::vector<PerReplica>&)>;

/// Told of each collective and merge_call a replica ran: which ("all_reduce", "broadcast",
/// "all_gather", "merge_call"), when, and the bytes of the tensors it passed in.
using CollectiveObserver =
    std::function<void(const char* kind, std::chrono::steady_clock::time_point begin,
                       std::chrono::steady_clock::time_point end, int64_t bytes)>;

/// The replica side of a running step.
class ReplicaContext {
 public:
  ReplicaContext(Strategy& strategy, int replica_id, MergePort& port);
  ~ReplicaContext();
  ReplicaContext(const ReplicaContext&) = delete;
  ReplicaContext& operator=(const ReplicaContext&) = delete;

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
  /// SUM all-reduce of `values` and of the outer products lhs^T rhs in `products` (dense kernel
  /// gradients as their factors): one result per value, then one [m, n] per product. Replicas
  /// meeting in shared memory sum the products in row blocks without forming their own
  /// (core/collective/shared_memory_all_reduce.hpp); other transports form them first.
  std::vector<Tensor> all_reduce_with_products(const std::vector<Tensor>& values,
                                               const std::vector<OuterProduct>& products);
  /// Replica `root`'s `value` on every replica (every replica must call it, with a tensor of
  /// the same dtype and shape; the others' contents are ignored).
  Tensor broadcast(const Tensor& value, int root);
  /// Every replica's `value` concatenated along dimension 0, in replica order (dimension 0 may
  /// differ between replicas).
  Tensor all_gather(const Tensor& value);
  /// The transport this replica's latest collective took (transport_name() names it).
  Transport last_collective_transport() const;

  /// Reports every later collective and merge_call of this replica to `observer` (empty: none);
  /// a run's timeline splits a step into compute and communication with it.
  void set_collective_observer(CollectiveObserver observer) { observer_ = std::move(observer); }

  /// The group's transport primitives (merge, peer collective, shared-memory all-reduce), for
  /// the collective transports of coordinator/collectives.
  MergePort& port() const { return port_; }

 private:
  ReplicaCollectives& collectives();

  Strategy& strategy_;
  int replica_id_;
  MergePort& port_;
  std::unique_ptr<ReplicaCollectives> collectives_;  // made at the first collective
  CollectiveObserver observer_;
};

}  // namespace troupe
