#include "core/collective/shared_memory_all_reduce.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <type_traits>

#include "core/collective/chunk_layout.hpp"
#include "core/finite_scan.hpp"
#include "core/work_share.hpp"

namespace troupe {
namespace {

// Elements summed per block: the partial result of a block stays in cache while the third and
// later inputs are added to it.
constexpr int64_t kBlockElements = 16 * 1024;

int64_t round_up_8(int64_t x) { return (x + 7) / 8 * 8; }

std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

}  // namespace

int64_t outer_product_block_rows(int64_t m, int64_t n) {
  const int64_t rows =
      std::max({round_up_8((m + 13) / 14), round_up_8((4096 + n - 1) / n), int64_t(16)});
  return std::max<int64_t>(1, std::min(m, rows));
}

Tensor form_outer_product(const OuterProduct& product) {
  const int64_t k = product.lhs.shape()[0], m = product.lhs.shape()[1];
  const int64_t n = product.rhs.shape()[1];
  Tensor out(DType::float32, Shape{m, n});
  product.rows(static_cast<const float*>(product.lhs.raw_data()),
               static_cast<const float*>(product.rhs.raw_data()), k, m, n, 0, m, 0.0f,
               static_cast<float*>(out.raw_data()));
  return out;
}

std::vector<Tensor> with_products_formed(const std::vector<Tensor>& values,
                                         const std::vector<OuterProduct>& products) {
  std::vector<Tensor> all = values;
  for (auto& p : products) all.push_back(form_outer_product(p));
  return all;
}

int64_t outer_product_bytes(const std::vector<OuterProduct>& products) {
  int64_t bytes = 0;
  for (auto& p : products) bytes += p.lhs.shape()[1] * p.rhs.shape()[1] * int64_t(sizeof(float));
  return bytes;
}

SharedMemoryAllReduce::SharedMemoryAllReduce(int ranks, std::string label)
    : ranks_(ranks),
      label_(std::move(label)),
      inputs_(size_t(std::max(ranks, 0))),
      products_(size_t(std::max(ranks, 0))),
      arrived_rank_(size_t(std::max(ranks, 0)), false),
      finished_rank_(size_t(std::max(ranks, 0)), false) {
  if (ranks <= 0)
    throw invalid_argument("shared-memory all-reduce " + label_ + ": group of " +
                           std::to_string(ranks) + " ranks");
}

void SharedMemoryAllReduce::fail_locked(const std::string& why) {
  if (!failed_.load(std::memory_order_relaxed)) {
    error_ = why;
    failed_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void SharedMemoryAllReduce::abort(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  fail_locked("shared-memory all-reduce " + label_ + " aborted: " + why);
}

void SharedMemoryAllReduce::await_all(const std::atomic<int>& counter, const char* stage,
                                      std::chrono::steady_clock::time_point deadline) {
  // A replica thread that waits here runs row blocks of the others' GEMMs meanwhile: the
  // slower replica's step then ends sooner (core/work_share.hpp).
  if (spin_until_helping([&] {
        return counter.load(std::memory_order_acquire) == ranks_ ||
               failed_.load(std::memory_order_acquire);
      }) &&
      !failed_.load(std::memory_order_acquire))
    return;
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait_until(lock, deadline, [&] {
    return counter.load(std::memory_order_acquire) == ranks_ ||
           failed_.load(std::memory_order_acquire);
  });
  if (failed_.load(std::memory_order_acquire)) throw aborted(error_);
  if (counter.load(std::memory_order_acquire) == ranks_) return;
  std::vector<int> missing;
  for (int r = 0; r < ranks_; ++r)
    if (!(&counter == &arrived_ ? arrived_rank_ : finished_rank_)[size_t(r)]) missing.push_back(r);
  fail_locked("shared-memory all-reduce " + label_ + ": rank(s) " + rank_list(missing) +
              " did not " + stage + " in time");
  throw deadline_exceeded(error_);
}

Tensor SharedMemoryAllReduce::run(int rank, const Tensor& input, const SharedMemoryReduce& how,
                                  std::chrono::nanoseconds timeout) {
  if (!input.defined())
    throw invalid_argument("shared-memory all-reduce " + label_ + " rank " + std::to_string(rank) +
                           ": input tensor is undefined");
  return run(rank, std::vector<Tensor>{input}, how, timeout).reshape(input.shape());
}

Tensor SharedMemoryAllReduce::run(int rank, const std::vector<Tensor>& inputs,
                                  const SharedMemoryReduce& how, std::chrono::nanoseconds timeout) {
  return run(rank, inputs, {}, how, timeout);
}

Tensor SharedMemoryAllReduce::run(int rank, const std::vector<Tensor>& inputs,
                                  const std::vector<OuterProduct>& products,
                                  const SharedMemoryReduce& how, std::chrono::nanoseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string who = "shared-memory all-reduce " + label_ + " rank " + std::to_string(rank);
  if (!how.reduce) throw invalid_argument(who + ": no reduce function given");
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].defined())
      throw invalid_argument(who + ": input tensor " + std::to_string(k) + " is undefined");
    if (inputs[k].dtype() != inputs[0].dtype())
      throw invalid_argument(who + ": inputs mix " + std::string(dtype_name(inputs[0].dtype())) +
                             " and " + std::string(dtype_name(inputs[k].dtype())));
    counts.push_back(inputs[k].num_elements());
    total += counts.back();
  }
  const DType dtype = inputs.empty() ? DType::float32 : inputs[0].dtype();
  std::vector<std::array<int64_t, 3>> shapes;  // per product: m, n, k
  int64_t product_total = 0;
  for (size_t p = 0; p < products.size(); ++p) {
    const Tensor& lhs = products[p].lhs;
    const Tensor& rhs = products[p].rhs;
    const std::string which = who + ": outer product " + std::to_string(p);
    if (!products[p].rows) throw invalid_argument(which + ": no GEMM function given");
    if (how.mean) throw invalid_argument(which + ": outer products are summed, not averaged");
    if (dtype != DType::float32 || !lhs.defined() || !rhs.defined() ||
        lhs.dtype() != DType::float32 || rhs.dtype() != DType::float32 ||
        lhs.memory() != MemoryKind::host || rhs.memory() != MemoryKind::host ||
        lhs.shape().rank() != 2 || rhs.shape().rank() != 2 || lhs.shape()[0] != rhs.shape()[0])
      throw invalid_argument(which + ": needs float32 host matrices lhs [k, m] and rhs [k, n] " +
                             "(and float32 inputs), got lhs " + lhs.description() + ", rhs " +
                             rhs.description());
    shapes.push_back({lhs.shape()[1], rhs.shape()[1], lhs.shape()[0]});
    product_total += lhs.shape()[1] * rhs.shape()[1];
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.load(std::memory_order_relaxed)) throw aborted(error_);
    if (rank < 0 || rank >= ranks_ || arrived_rank_[size_t(rank)])
      throw invalid_argument(who + ": rank outside the group of " + std::to_string(ranks_) +
                             " or arrived twice");
    if (!output_.defined()) {
      output_ = Tensor(dtype, Shape{total + product_total});
      counts_ = counts;
      dense_elements_ = total;
      product_shapes_ = shapes;
      int64_t blocks = 0;
      for (auto& [m, n, k] : shapes) {
        first_block_.push_back(blocks);
        const int64_t rows = outer_product_block_rows(m, n);
        blocks += (m + rows - 1) / rows;
      }
      first_block_.push_back(blocks);
      block_state_.reset(new std::atomic<uint8_t>[size_t(blocks)]);
      for (int64_t b = 0; b < blocks; ++b) block_state_[size_t(b)].store(0);
    } else if (product_shapes_ != shapes) {
      auto describe = [](const std::vector<std::array<int64_t, 3>>& s) {
        std::string text = std::to_string(s.size()) + " outer product(s) [m, n, k]:";
        for (auto& [m, n, k] : s)
          text +=
              " [" + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) + "]";
        return text;
      };
      const std::string why = who + " passed " + describe(shapes) + " but an earlier rank passed " +
                              describe(product_shapes_);
      fail_locked(why);
      throw invalid_argument(why);
    }
    if (output_.dtype() != dtype || counts_ != counts) {
      auto describe = [](DType d, const std::vector<int64_t>& c) {
        std::string s =
            std::to_string(c.size()) + " " + std::string(dtype_name(d)) + " tensor(s) of [";
        for (size_t k = 0; k < c.size(); ++k) s += (k ? ", " : "") + std::to_string(c[k]);
        return s + "] elements";
      };
      const std::string why = who + " passed " + describe(dtype, counts) +
                              " but an earlier rank passed " + describe(output_.dtype(), counts_);
      fail_locked(why);
      throw invalid_argument(why);
    }
    auto& mine = inputs_[size_t(rank)];
    for (auto& t : inputs) mine.push_back(t.reshape(Shape{t.num_elements()}));
    products_[size_t(rank)] = products;
    arrived_rank_[size_t(rank)] = true;
    arrived_.fetch_add(1, std::memory_order_acq_rel);
  }
  cv_.notify_all();
  // With 2 ranks a rank adds its own products while the other is still on its way: the sum of
  // two is the same in either order, so no block waits for the other rank's term to go first.
  const bool unordered = ranks_ == 2 && !product_shapes_.empty();
  bool finite = !unordered || add_product_terms(rank, /*others_too=*/false);
  await_all(arrived_, "arrive", deadline);
  finite = sum_segment(rank, how) && finite;
  if (unordered)
    finite = add_product_terms(rank, /*others_too=*/true) && finite;
  else if (!product_shapes_.empty())
    finite = compute_product_blocks() && finite;
  if (!finite) segment_not_finite_.store(true, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_rank_[size_t(rank)] = true;
    finished_.fetch_add(1, std::memory_order_acq_rel);
  }
  cv_.notify_all();
  // Inputs stay borrowed until every rank has read them: nobody returns before the last sum.
  await_all(finished_, "finish", deadline);
  // Every rank gets this one buffer: a rank that writes into its result must copy first, or it
  // would change the others' (Tensor::raw_data copies a shared result on write). Every rank's
  // segment flag is visible now (set before its finished_ increment), so all ranks record the
  // same fact; a later all_finite of the result (train.on_nan) then needs no scan of its own.
  Finiteness known = Finiteness::unknown;
  if (is_floating(dtype))
    known = segment_not_finite_.load(std::memory_order_relaxed) ? Finiteness::not_all_finite
                                                                : Finiteness::all_finite;
  output_.buffer()->mark_shared_result(known);
  return output_;
}

bool SharedMemoryAllReduce::sum_segment(int rank, const SharedMemoryReduce& how) {
  const ElementRange segment = split_evenly(dense_elements_, ranks_)[size_t(rank)];
  const DType dtype = output_.dtype();
  const size_t elem = dtype_size(dtype);
  auto at = [&](const Tensor& t, int64_t i) {
    return static_cast<const char*>(t.raw_data()) + size_t(i) * elem;
  };
  // Input k covers [offset, offset + counts_[k]) of the result; sum its part of the segment.
  // Whether the result is finite is learnt on the way: with 2 ranks in the sum's own pass
  // (reduce_into_finite; a second read of each block cost the 1 MiB all-reduce 30 %), otherwise
  // by a scan of each block right after its last write, while it is still in cache.
  bool finite = true;
  ReduceIntoFiniteFn sum_and_check = how.reduce_into_finite;
  if (how.reduce_into_finite_streaming && how.streaming_min_bytes > 0 &&
      dense_elements_ * int64_t(elem) >= how.streaming_min_bytes)
    sum_and_check = how.reduce_into_finite_streaming;
  int64_t offset = 0;
  for (size_t k = 0; k < counts_.size(); offset += counts_[k], ++k) {
    const int64_t first = std::max(segment.begin, offset);
    const int64_t last = std::min(segment.end(), offset + counts_[k]);
    for (int64_t b = first; b < last; b += kBlockElements) {
      const int64_t n = std::min(kBlockElements, last - b);
      const int64_t i = b - offset;  // position within input k
      char* dst = static_cast<char*>(output_.raw_data_in_place()) + size_t(b) * elem;
      bool checked = false;
      if (ranks_ == 1) {
        std::memcpy(dst, at(inputs_[0][k], i), size_t(n) * elem);
      } else if (ranks_ == 2 && sum_and_check) {
        if (!sum_and_check(dst, at(inputs_[0][k], i), at(inputs_[1][k], i), dtype, n))
          finite = false;
        checked = true;
      } else if (how.reduce_into) {
        how.reduce_into(dst, at(inputs_[0][k], i), at(inputs_[1][k], i), dtype, n);
      } else {
        std::memcpy(dst, at(inputs_[0][k], i), size_t(n) * elem);
        how.reduce(dst, at(inputs_[1][k], i), dtype, n);
      }
      for (int r = 2; r < ranks_; ++r) how.reduce(dst, at(inputs_[size_t(r)][k], i), dtype, n);
      if (how.mean) divide(dst, dtype, n);  // halving a finite sum leaves it finite
      if (!checked && finite) finite = host_values_finite(dst, dtype, n);
    }
  }
  return finite;
}

bool SharedMemoryAllReduce::add_block_term(int64_t block, int rank, bool first, bool last) {
  const size_t p = size_t(std::upper_bound(first_block_.begin(), first_block_.end(), block) -
                          first_block_.begin() - 1);
  const auto [m, n, k] = product_shapes_[p];
  const int64_t rows = outer_product_block_rows(m, n);
  const int64_t begin = (block - first_block_[p]) * rows, end = std::min(m, begin + rows);
  int64_t offset = dense_elements_;
  for (size_t q = 0; q < p; ++q) offset += product_shapes_[q][0] * product_shapes_[q][1];
  float* out = static_cast<float*>(output_.raw_data_in_place()) + offset;
  const OuterProduct& term = products_[size_t(rank)][p];
  term.rows(static_cast<const float*>(term.lhs.raw_data()),
            static_cast<const float*>(term.rhs.raw_data()), k, m, n, begin, end,
            first ? 0.0f : 1.0f, out);
  // The block's sum is complete and still in cache: scan it now.
  return !last || host_values_finite(out + begin * n, DType::float32, (end - begin) * n);
}

bool SharedMemoryAllReduce::compute_product_blocks() {
  bool finite = true;
  const int64_t blocks = first_block_.back();
  for (int64_t b; (b = next_block_.fetch_add(1, std::memory_order_relaxed)) < blocks;)
    for (int r = 0; r < ranks_; ++r)
      finite = add_block_term(b, r, r == 0, r + 1 == ranks_) && finite;
  return finite;
}

bool SharedMemoryAllReduce::add_product_terms(int rank, bool others_too) {
  // block_state_: bit r = rank r's term is in the block, kBusy = a rank is adding a term now.
  constexpr uint8_t kBusy = 4;
  const int64_t blocks = first_block_.back();
  bool finite = true;
  for (bool open = true; open && !failed_.load(std::memory_order_acquire);) {
    open = false;
    for (int term_rank : {rank, 1 - rank}) {
      if (term_rank != rank && !others_too) continue;
      const uint8_t bit = uint8_t(1u << term_rank);
      for (int64_t i = 0; i < blocks; ++i) {
        // Rank 0 walks up, rank 1 down: they meet once instead of queueing behind each other.
        const int64_t b = rank == 0 ? i : blocks - 1 - i;
        auto& state = block_state_[size_t(b)];
        uint8_t s = state.load(std::memory_order_acquire);
        if (s & bit) continue;
        if ((s & kBusy) ||
            !state.compare_exchange_strong(s, uint8_t(s | kBusy), std::memory_order_acq_rel)) {
          open = true;
          continue;
        }
        const bool first = (s & 3) == 0;
        finite = add_block_term(b, term_rank, first, !first) && finite;
        state.store(uint8_t(s | bit), std::memory_order_release);
      }
    }
  }
  return finite;
}

void SharedMemoryAllReduce::divide(char* dst, DType dtype, int64_t n) const {
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = reinterpret_cast<T*>(dst);
    if constexpr (std::is_floating_point_v<T>) {
      const T factor = T(1.0 / double(ranks_));
      for (int64_t i = 0; i < n; ++i) p[i] *= factor;
    } else {
      for (int64_t i = 0; i < n; ++i) p[i] /= T(ranks_);
    }
  });
}

}  // namespace troupe
