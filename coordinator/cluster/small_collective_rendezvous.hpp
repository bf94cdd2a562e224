#pragma once
// Whether a collective group's small all-reduces skip the actors: when every worker runs on this
// host, rank 0 offers a shared-memory rendezvous (net/shm_rendezvous.hpp), hands its name to the
// others through its collective peer actor (behind the gatekeeper, so only a member that proved
// the secret learns it), and all ranks agree to use it or not. Either every rank gets the
// rendezvous or none does: a rank that cannot open the segment never attaches, and rank 0 then
// decides against it for everyone.

#include <chrono>
#include <cstddef>
#include <memory>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "coordinator/cluster/cross_memory_all_reduce.hpp"
#include "core/collective/group_failure.hpp"
#include "core/tensor.hpp"
#include "net/shm_rendezvous.hpp"

namespace troupe {

/// Contributions above this many bytes take the ring; at or below, the rendezvous.
constexpr size_t kSmallCollectiveBytes = size_t(64) << 10;

/// Rank 0's offer, made before its peer actor starts (the actor answers its name): a fresh
/// rendezvous for `ranks` ranks with `depth` slots of `slot_bytes` each, or null when shared
/// memory is not available here.
std::shared_ptr<ShmRendezvous> offer_rendezvous(int ranks, size_t slot_bytes, int depth = 2);

/// Slots per rank of a rendezvous that carries large all-reduces: pieces in flight + 1.
constexpr int kLargeAllReduceDepth = 4;

/// `bytes` rounded up to whole 64-byte cache lines, as slots are.
constexpr size_t whole_lines(size_t bytes) { return (bytes + 63) / 64 * 64; }

/// Rank 0's offer for a multi-worker group: kLargeAllReduceDepth slots per rank, each holding a
/// small pack (`small_bytes`) or a large pack's piece (`piece_bytes`). Where shared memory
/// cannot hold that much (a container's small /dev/shm: 16 workers take 64 MiB), two slots of
/// the small size, so that small packs still meet there and large ones go in small pieces;
/// null, and a line on stderr, when not even that can be had.
std::shared_ptr<ShmRendezvous> offer_group_rendezvous(int ranks, size_t small_bytes,
                                                      size_t piece_bytes);

/// Called by every rank once its group is ready. Rank 0 passes its offer and waits (at most
/// `attach_wait`) until every rank attached, then decides; the others ask `rank0_peer` for the
/// name, attach, and wait for the decision. Returns the rendezvous to use, or null. Throws
/// unavailable with the group's failure when a rank goes down meanwhile, or when rank 0's
/// decision does not come.
std::shared_ptr<ShmRendezvous> agree_on_rendezvous(
    caf::actor_system& system, const caf::actor& rank0_peer, int rank, int ranks,
    std::shared_ptr<ShmRendezvous> offered, const GroupFailure& failure,
    std::chrono::milliseconds attach_wait = std::chrono::seconds(10));

/// Every rank's `value` (same dtype and size on every rank) summed in rank order through
/// `rendezvous`, on the calling thread: the same bits on every rank. A value larger than a slot
/// travels in slot-sized pieces, up to depth() - 1 of them posted ahead (each piece is one copy
/// into shared memory and one pass that sums it out, docs/benchmarks.md). A broken group
/// (`failure`, may be null) ends the wait with its reason; throws like ShmRendezvous::exchange
/// (per piece).
Tensor rendezvous_pieces_sum(ShmRendezvous& rendezvous, int rank, const Tensor& value,
                             std::chrono::milliseconds timeout, const GroupFailure* failure);

/// rendezvous_pieces_sum, except that values of at least kCrossMemoryMinBytes are read from the
/// other ranks' memory where every rank can and `cross_memory` is true on every rank
/// (coordinator/cluster/cross_memory_all_reduce.hpp; `votes` as there).
Tensor rendezvous_all_reduce_sum(ShmRendezvous& rendezvous, int rank, const Tensor& value,
                                 std::chrono::milliseconds timeout, const GroupFailure* failure,
                                 bool cross_memory = true, CrossMemoryVotes* votes = nullptr);

}  // namespace troupe
