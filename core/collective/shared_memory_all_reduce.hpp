#pragma once
// One all-reduce among threads of one process that meet in shared memory. Every rank publishes
// views of its inputs (a list of tensors, read as if concatenated: a replica's gradients need no
// packing copy); once all have arrived, rank r sums segment r of every input straight into one
// result buffer; the round closes when every segment is done and each rank returns
// that same buffer. No messages and no scheduler hops: the replicas of an in-process group run
// on their own threads, so the cheapest path between them is two barriers (NCCL's shared-memory
// transport plays the same role inside a node). Between processes the ring over collective peer
// actors remains the transport.
//
// One object serves one collective (it is not reused). Waiting spins briefly, then sleeps.
// A rank that never arrives, or never finishes, ends the round for everyone with an error that
// names it; abort() ends it with the caller's reason (a replica failed elsewhere).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "core/collective/collective_algorithm.hpp"
#include "core/tensor.hpp"

namespace troupe {

/// The reduction functions (from the kernel layer) and what to do with the sum.
struct SharedMemoryReduce {
  ReduceFn reduce = nullptr;           ///< dst += src
  ReduceIntoFn reduce_into = nullptr;  ///< dst = a + b (dst may alias a or b exactly)
  bool mean = false;                   ///< divide the sum by the number of ranks
  /// Optional, 2 ranks: reduce_into that also says whether the sums are finite, so the result's
  /// finiteness costs no second pass over it (without it each block is scanned after its sum).
  ReduceIntoFiniteFn reduce_into_finite = nullptr;
  /// Optional, 2 ranks: reduce_into_finite with streaming stores, used for results of at least
  /// streaming_min_bytes (larger than the cache: their lines would be evicted unread, and the
  /// stores skip reading each line first).
  ReduceIntoFiniteFn reduce_into_finite_streaming = nullptr;
  int64_t streaming_min_bytes = 0;
};

class SharedMemoryAllReduce {
 public:
  /// `label` names the collective in errors ("collective 3 at step 7").
  SharedMemoryAllReduce(int ranks, std::string label);

  /// Rank `rank`'s part. Returns the shared result, shaped like `input`; every rank gets the
  /// same buffer, marked Buffer::shared_result (a write through a Tensor copies it first), and
  /// for float32/float64 with Buffer::finiteness known (each rank scans the blocks it writes,
  /// after the MEAN's division). Throws deadline_exceeded naming the ranks that did not arrive
  /// (or finish) within `timeout`, invalid_argument when ranks disagree on dtype or element
  /// count, aborted after abort().
  Tensor run(int rank, const Tensor& input, const SharedMemoryReduce& how,
             std::chrono::nanoseconds timeout);
  /// The same over a list of tensors of one dtype, summed as their concatenation: every rank
  /// passes as many tensors, with the same element counts in the same order. Returns the flat
  /// result (1-D, all elements, the list's order).
  Tensor run(int rank, const std::vector<Tensor>& inputs, const SharedMemoryReduce& how,
             std::chrono::nanoseconds timeout);

  /// Ends the round for every waiting and future caller with `why`.
  void abort(const std::string& why);

 private:
  /// Waits until `counter` reaches ranks_ or the round failed; throws on failure or timeout.
  void await_all(const std::atomic<int>& counter, const char* stage,
                 std::chrono::steady_clock::time_point deadline);
  /// Records the first failure and wakes everyone; call with mutex_ held.
  void fail_locked(const std::string& why);
  /// Writes segment `rank` of the result; false when a value of it is NaN or infinite (integer
  /// dtypes: always true).
  bool sum_segment(int rank, const SharedMemoryReduce& how);
  /// dst[0, n) /= ranks_ (the MEAN).
  void divide(char* dst, DType dtype, int64_t n) const;

  const int ranks_;
  const std::string label_;
  std::mutex mutex_;
  std::condition_variable cv_;
  /// Per rank, flat views of its inputs; written under mutex_ before arrival completes.
  std::vector<std::vector<Tensor>> inputs_;
  std::vector<int64_t> counts_;  ///< element count of each input (set by the first arrival)
  std::vector<bool> arrived_rank_, finished_rank_;
  Tensor output_;  ///< set by the first arrival, then only read
  std::atomic<int> arrived_{0}, finished_{0};
  std::atomic<bool> failed_{false};
  /// Set by a rank whose segment holds a NaN or Inf, before it counts itself in finished_.
  std::atomic<bool> segment_not_finite_{false};
  std::string error_;  ///< under mutex_
};

}  // namespace troupe
