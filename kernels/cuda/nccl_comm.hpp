#pragma once
// NCCL communicators for the GPUs of one process (ncclCommInitAll): the fast path a GPU replica
// group uses for all-reduce instead of the actor-based collectives.

#include <cstdint>
#include <vector>

#include "core/dtype.hpp"

struct ncclComm;  // NCCL's opaque communicator (ncclComm_t is ncclComm*)

namespace troupe {

/// One NCCL communicator per local device; rank r drives devices[r].
class NcclCommunicators {
 public:
  /// Initialises communicators for `devices` (CUDA ordinals, distinct, non-empty).
  explicit NcclCommunicators(std::vector<int> devices);
  ~NcclCommunicators();
  NcclCommunicators(const NcclCommunicators&) = delete;
  NcclCommunicators& operator=(const NcclCommunicators&) = delete;

  /// Number of ranks (devices).
  int size() const { return int(comms_.size()); }
  /// CUDA device of rank `rank`.
  int device(int rank) const { return devices_.at(size_t(rank)); }

  /// Enqueues a sum all-reduce of `count` elements for one rank on `stream` (a cudaStream_t).
  /// Every rank must make the same call; from one thread, wrap the calls in group_start/end.
  void all_reduce_sum(int rank, const void* send, void* recv, int64_t count, DType dtype,
                      void* stream) const;
  /// Enqueues the all-reduce for every rank at once (one thread driving all devices).
  void all_reduce_sum_all(const std::vector<const void*>& send, const std::vector<void*>& recv,
                          int64_t count, DType dtype, const std::vector<void*>& streams) const;

  /// ncclGroupStart / ncclGroupEnd, for single-threaded multi-device calls.
  static void group_start();
  static void group_end();

 private:
  std::vector<int> devices_;
  std::vector<ncclComm*> comms_;
};

}  // namespace troupe
