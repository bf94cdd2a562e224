#pragma once
// How the values of one all-reduce travel between replicas: the one decision, as a pure function
// of where the replicas are, where the values are, how big they are and which algorithm the
// strategy uses. ReplicaContext::all_reduce, the optimizer's apply path and the cross-device ops
// inside merge_call all ask it, so the transport is chosen in one place and can be named in
// results and traces.

#include <cstdint>
#include <string_view>

#include "core/collective/algorithm_choice.hpp"

namespace troupe {

/// What carries an all-reduce.
enum class Transport {
  identity,         ///< one replica: the value is its own sum
  shared_memory,    ///< replicas of one process meet in memory, each sums a segment in place
  peer_actors,      ///< every replica drives its collective peer actor (ring / tree messages)
  one_thread_sum,   ///< one thread holds every value and sums them (inside merge_call)
  local_algorithm,  ///< one thread runs every rank's state machine (inside merge_call)
  merge_call,       ///< the replicas hand their values to merge_call, which reduces them
  nccl,             ///< NCCL on the replicas' GPUs
  /// several workers (processes): one thread sums this worker's replicas, then the sum is
  /// all-reduced with the other workers through this worker's collective peer actor
  cross_worker,
};

/// "identity", "shared_memory", "peer_actors", "one_thread_sum", "local_algorithm",
/// "merge_call", "nccl", "cross_worker".
std::string_view transport_name(Transport transport);

/// Where an all-reduce is asked for, and of what.
struct TransportQuery {
  CrossDeviceOpKind algorithm = CrossDeviceOpKind::collective_all_reduce;
  int replicas = 1;            ///< replicas in sync in this process
  int workers = 1;             ///< workers (processes) taking part, each with `replicas`
  bool values_on_host = true;  ///< every value is in host memory (else on GPUs)
  int64_t bytes = 0;           ///< total bytes of the values
  /// The caller is one thread that holds every replica's values (a merge function), rather
  /// than each replica on its own thread.
  bool one_thread_holds_all = false;
  /// AllReduceOptions::shared_memory: replicas of one process may meet in shared memory.
  bool shared_memory_allowed = true;
  /// AllReduceOptions::peer_threshold_bytes: from this size replicas drive their peer actors.
  int64_t peer_threshold_bytes = 256 << 10;
};

/// The transport for `query`:
///  - several workers: merge_call from replica threads (this worker's replicas meet there), and
///    cross_worker inside the merge function;
///  - one replica: identity;
///  - one thread holding every value (a merge function): nccl for NcclAllReduce (GPU values),
///    one_thread_sum for CollectiveAllReduce (the ring's messages would only reorder the same
///    additions), local_algorithm for the other state machines;
///  - replica threads with GPU values: merge_call (NCCL then runs on one thread inside it);
///  - replica threads, CollectiveAllReduce with shared memory allowed: shared_memory;
///  - replica threads, at least peer_threshold_bytes, ring or hierarchical: peer_actors;
///  - otherwise merge_call (one hop; cheapest for small values).
Transport choose_transport(const TransportQuery& query);

}  // namespace troupe
