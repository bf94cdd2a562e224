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
// A SUM may also take outer products lhs^T rhs, the weight gradients of dense layers, which no
// rank forms alone: their rows are cut into blocks that the ranks claim as they come, each block
// one GEMM per rank accumulated in the result (beta = 1 after the first), so the sum happens in
// the GEMM's own pass, while the rows are in cache, and a faster rank takes more of the blocks.
//
// One object serves one collective (it is not reused). Waiting spins briefly, then sleeps.
// A rank that never arrives, or never finishes, ends the round for everyone with an error that
// names it; abort() ends it with the caller's reason (a replica failed elsewhere).

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/collective/collective_algorithm.hpp"
#include "core/tensor.hpp"

namespace troupe {

/// Rows [row_begin, row_end) of lhs^T rhs (lhs [k, m], rhs [k, n], row-major) plus beta times
/// what `out` holds there; `out` is the whole [m, n] product. A GEMM of the kernel layer.
using ProductRowsFn = void (*)(const float* lhs, const float* rhs, int64_t k, int64_t m, int64_t n,
                               int64_t row_begin, int64_t row_end, float beta, float* out);

/// lhs^T rhs over one rank's rows: lhs [k, m] (a dense layer's inputs), rhs [k, n] (the gradient
/// at its outputs); float32, host, row-major. `rows` computes it: the GEMM the replica's kernels
/// use. A caller passes a product only where that GEMM's row blocks, accumulated rank after
/// rank, give each rank's whole product summed in rank order bit for bit (kernels/cpu_gemm.hpp
/// probes it), so results do not depend on the path.
struct OuterProduct {
  Tensor lhs, rhs;
  ProductRowsFn rows = nullptr;
};

/// The whole product lhs^T rhs as a new [m, n] tensor (one GEMM): for paths that sum values.
Tensor form_outer_product(const OuterProduct& product);
/// `values` followed by every product formed: what a transport without products sums instead.
std::vector<Tensor> with_products_formed(const std::vector<Tensor>& values,
                                         const std::vector<OuterProduct>& products);
/// Bytes of the products' [m, n] float32 sums (what an all-reduce of them moves).
int64_t outer_product_bytes(const std::vector<OuterProduct>& products);

/// Rows per block of an [m, n] outer product in the all-reduce: about 14 blocks (each still
/// runs at ~95 % of the whole GEMM's rate), at least 16 rows and 4096 elements, a multiple of 8.
int64_t outer_product_block_rows(int64_t m, int64_t n);

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
  /// The same followed by `products` (float32, SUM only): the flat result holds the inputs'
  /// sums, then each product's [m, n] sum. Every rank passes products of the same [m, n] in the
  /// same order, each over the same number of rows k. Row blocks (outer_product_block_rows) are
  /// computed by whichever rank claims them, every rank's GEMM in rank order: the caller makes
  /// sure the kernel gives those blocks the bits of each rank's whole product summed in rank order.
  Tensor run(int rank, const std::vector<Tensor>& inputs, const std::vector<OuterProduct>& products,
             const SharedMemoryReduce& how, std::chrono::nanoseconds timeout);

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
  /// Adds rank `rank`'s term to product row block `block` (beta 0 when `first`); scans the block
  /// when `last`. False when the scan found a NaN or infinity.
  bool add_block_term(int64_t block, int rank, bool first, bool last);
  /// More than 2 ranks: claims row blocks and adds every rank's term, in rank order, until none
  /// is left. False when a value of them is NaN or infinite.
  bool compute_product_blocks();
  /// 2 ranks: adds this rank's terms to every block, and with `others_too` the other rank's as
  /// well, in whichever order the blocks come free, until all those are in. False when a
  /// completed block holds a NaN or infinity.
  bool add_product_terms(int rank, bool others_too);
  /// dst[0, n) /= ranks_ (the MEAN).
  void divide(char* dst, DType dtype, int64_t n) const;

  const int ranks_;
  const std::string label_;
  std::mutex mutex_;
  std::condition_variable cv_;
  /// Per rank, flat views of its inputs; written under mutex_ before arrival completes.
  std::vector<std::vector<Tensor>> inputs_;
  std::vector<int64_t> counts_;  ///< element count of each input (set by the first arrival)
  int64_t dense_elements_ = 0;   ///< the inputs' part of the result (set by the first arrival)
  /// Per rank, its outer products; written under mutex_ before arrival completes.
  std::vector<std::vector<OuterProduct>> products_;
  /// Per product: [m, n, k] (set by the first arrival), and the first block's index.
  std::vector<std::array<int64_t, 3>> product_shapes_;
  std::vector<int64_t> first_block_;  ///< per product, then the total number of blocks
  std::atomic<int64_t> next_block_{0};
  std::unique_ptr<std::atomic<uint8_t>[]> block_state_;  ///< 2 ranks: per block (see .cpp)
  std::vector<bool> arrived_rank_, finished_rank_;
  Tensor output_;  ///< set by the first arrival, then only read
  std::atomic<int> arrived_{0}, finished_{0};
  std::atomic<bool> failed_{false};
  /// Set by a rank whose segment holds a NaN or Inf, before it counts itself in finished_.
  std::atomic<bool> segment_not_finite_{false};
  std::string error_;  ///< under mutex_
};

}  // namespace troupe
