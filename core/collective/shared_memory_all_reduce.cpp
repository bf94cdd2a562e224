#include "core/collective/shared_memory_all_reduce.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <type_traits>

#include "core/collective/chunk_layout.hpp"

namespace troupe {
namespace {

// Elements summed per block: the partial result of a block stays in cache while the third and
// later inputs are added to it.
constexpr int64_t kBlockElements = 16 * 1024;
// Spin iterations before sleeping (as Handoff): a round usually completes within microseconds.
constexpr int kSpins = 4096;

std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

}  // namespace

SharedMemoryAllReduce::SharedMemoryAllReduce(int ranks, std::string label)
    : ranks_(ranks),
      label_(std::move(label)),
      inputs_(size_t(std::max(ranks, 0))),
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
  for (int i = 0; i < kSpins; ++i) {
    if (counter.load(std::memory_order_acquire) == ranks_) return;
    if (failed_.load(std::memory_order_acquire)) break;
    if (i % 64 == 63) std::this_thread::yield();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait_until(lock, deadline, [&] {
    return counter.load(std::memory_order_acquire) == ranks_ ||
           failed_.load(std::memory_order_acquire);
  });
  if (failed_.load(std::memory_order_acquire)) throw aborted(error_);
  if (counter.load(std::memory_order_acquire) == ranks_) return;
  std::vector<int> missing;
  for (int r = 0; r < ranks_; ++r)
    if (&counter == &arrived_ ? !inputs_[size_t(r)].defined() : !finished_rank_[size_t(r)])
      missing.push_back(r);
  fail_locked("shared-memory all-reduce " + label_ + ": rank(s) " + rank_list(missing) +
              " did not " + stage + " in time");
  throw deadline_exceeded(error_);
}

Tensor SharedMemoryAllReduce::run(int rank, const Tensor& input, const SharedMemoryReduce& how,
                                  std::chrono::nanoseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string who = "shared-memory all-reduce " + label_ + " rank " + std::to_string(rank);
  if (!input.defined()) throw invalid_argument(who + ": input tensor is undefined");
  if (!how.reduce) throw invalid_argument(who + ": no reduce function given");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.load(std::memory_order_relaxed)) throw aborted(error_);
    if (rank < 0 || rank >= ranks_ || inputs_[size_t(rank)].defined())
      throw invalid_argument(who + ": rank outside the group of " + std::to_string(ranks_) +
                             " or arrived twice");
    if (!output_.defined()) {
      output_ = Tensor(input.dtype(), Shape{input.num_elements()});
    } else if (output_.dtype() != input.dtype() || output_.num_elements() != input.num_elements()) {
      const std::string why = who + " passed " + input.description() + " but an earlier rank " +
                              "passed " + std::to_string(output_.num_elements()) + " " +
                              std::string(dtype_name(output_.dtype())) + " elements";
      fail_locked(why);
      throw invalid_argument(why);
    }
    inputs_[size_t(rank)] = input.reshape(Shape{input.num_elements()});
    arrived_.fetch_add(1, std::memory_order_acq_rel);
  }
  cv_.notify_all();
  await_all(arrived_, "arrive", deadline);
  sum_segment(rank, how);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_rank_[size_t(rank)] = true;
    finished_.fetch_add(1, std::memory_order_acq_rel);
  }
  cv_.notify_all();
  // Inputs stay borrowed until every rank has read them: nobody returns before the last sum.
  await_all(finished_, "finish", deadline);
  return output_.reshape(input.shape());
}

void SharedMemoryAllReduce::sum_segment(int rank, const SharedMemoryReduce& how) {
  const ElementRange segment = split_evenly(output_.num_elements(), ranks_)[size_t(rank)];
  const DType dtype = output_.dtype();
  const size_t elem = dtype_size(dtype);
  auto at = [&](Tensor& t, int64_t i) {
    return static_cast<char*>(t.raw_data()) + size_t(i) * elem;
  };
  for (int64_t b = segment.begin; b < segment.end(); b += kBlockElements) {
    const int64_t n = std::min(kBlockElements, segment.end() - b);
    char* dst = at(output_, b);
    if (ranks_ == 1) {
      std::memcpy(dst, at(inputs_[0], b), size_t(n) * elem);
    } else if (how.reduce_into) {
      how.reduce_into(dst, at(inputs_[0], b), at(inputs_[1], b), dtype, n);
    } else {
      std::memcpy(dst, at(inputs_[0], b), size_t(n) * elem);
      how.reduce(dst, at(inputs_[1], b), dtype, n);
    }
    for (int k = 2; k < ranks_; ++k) how.reduce(dst, at(inputs_[size_t(k)], b), dtype, n);
    if (how.mean) {
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
  }
}

}  // namespace troupe
