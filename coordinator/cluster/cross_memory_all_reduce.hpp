#pragma once
// Large all-reduces between the processes of one host, read straight from each other's memory
// (Linux cross-memory attach: process_vm_readv). Through the shared-memory rendezvous every rank
// copies its whole value into shared memory and then sums all of it: ~5 bytes of memory traffic
// per byte of value and rank. Here the ranks only meet at the rendezvous: they swap the
// addresses of their input and output, each sums its own 1/n of the elements from the others'
// inputs (read a chunk at a time into a buffer that stays in cache), and each copies the other
// sums out of their outputs: ~2.5 bytes per byte (docs/benchmarks.md).
//
// Reading another process's memory takes the kernel's ptrace access check (the same user, and on
// hosts with Yama's ptrace_scope >= 1 more than that). Every call first tries one byte of every
// other rank and the ranks agree: when any rank cannot read, or was not allowed to
// (`allowed`), every rank returns nullopt and the caller takes the rendezvous pieces instead.

#include <chrono>
#include <cstddef>
#include <optional>

#include "coordinator/cluster/cross_memory_policy.hpp"
#include "core/tensor.hpp"
#include "net/shm_rendezvous.hpp"

namespace troupe {

/// Values smaller than this take the rendezvous pieces: below it the three meetings cost more
/// than the copies they save.
constexpr size_t kCrossMemoryMinBytes = size_t(1) << 20;

/// What a rank remembers of its group's votes. Once a call found a rank that does not offer
/// the path or cannot read the others, later calls skip the vote (two meetings) and return
/// nullopt at once: on every rank alike, for every rank saw the same vote.
struct CrossMemoryVotes {
  bool refused = false;
};

/// Every rank's `value` (same dtype and size everywhere) summed in rank order, the same bits on
/// every rank as rendezvous_all_reduce_sum; or nullopt on every rank when one of them cannot
/// read the others' memory or is not `allowed` to (recorded in `votes`, when given). Meets the
/// other ranks four times through `rendezvous` (addresses, readable, summed, copied): a rank
/// returns only when every rank has finished reading its memory. Throws like
/// ShmRendezvous::exchange, and unavailable naming the rank whose memory could not be read midway:
/// `stop`'s reason when it gives one within a second (a process that died: the group learns why as
/// its connections drop), else "rank R is down: reading its input (process P) failed: ...".
std::optional<Tensor> cross_memory_all_reduce_sum(ShmRendezvous& rendezvous, int rank,
                                                  const Tensor& value, bool allowed,
                                                  std::chrono::milliseconds timeout,
                                                  const ShmRendezvous::StopFn& stop,
                                                  CrossMemoryVotes* votes = nullptr);

}  // namespace troupe
