#pragma once
// The collectives a replica takes part in with the other replicas of its group — all_reduce,
// broadcast, all_gather — as one interface with one implementation per transport:
//  - merge_call: the replicas hand their values to merge_call, which reduces (through the
//    strategy's cross-device op, NCCL for GPU values) or gathers them on one thread;
//  - shared_memory: replicas of one process meet in memory, each summing a segment in place;
//  - peer_actors: every replica drives its collective peer actor, whose ring / tree messages
//    travel to peers in this process or, through CAF's middleman, in others.
// ReplicaCollectives (replica_collectives.hpp) picks the transport per call with
// choose_transport; nothing else decides it.

#include <memory>
#include <vector>

#include "core/collective/shared_memory_all_reduce.hpp"
#include "core/collective/transport_choice.hpp"
#include "core/reduce_op.hpp"
#include "core/tensor.hpp"

namespace troupe {

class ReplicaContext;

/// One transport's collectives, seen from one replica. Every replica of the group must call
/// the same collectives in the same order with matching dtypes and shapes.
class CollectiveTransport {
 public:
  virtual ~CollectiveTransport() = default;
  virtual Transport kind() const = 0;
  /// SUM or MEAN of every replica's `values`, element-wise, one result per value.
  virtual std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& values) = 0;
  /// SUM of every replica's `values`, then of its `products` (lhs^T rhs, [m, n] each;
  /// core/collective/shared_memory_all_reduce.hpp): one result per value, then per product. By
  /// default each replica forms its products first; shared memory sums them in row blocks.
  virtual std::vector<Tensor> all_reduce_with_products(const std::vector<Tensor>& values,
                                                       const std::vector<OuterProduct>& products);
  /// Replica `root`'s `value` on every replica (the others pass a tensor of the same dtype and
  /// shape, whose contents are ignored).
  virtual Tensor broadcast(const Tensor& value, int root) = 0;
  /// Every replica's `value` concatenated along dimension 0 in replica order; dimension 0 may
  /// differ between replicas, the other dimensions and the dtype may not.
  virtual Tensor all_gather(const Tensor& value) = 0;
};

/// The transports, each bound to the replica whose context it is given.
std::unique_ptr<CollectiveTransport> make_merge_call_transport(ReplicaContext& context);
std::unique_ptr<CollectiveTransport> make_shared_memory_transport(ReplicaContext& context);
std::unique_ptr<CollectiveTransport> make_peer_actor_transport(ReplicaContext& context);

}  // namespace troupe
