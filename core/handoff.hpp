#pragma once
// A one-slot, many-round handoff from one producer to one waiting thread.
// The replica threads of a MirroredStrategy park here while the barrier actor gathers a
// merge_call; waking them must be far cheaper than a CAF blocking receive (60-180 us measured),
// so the waiter spins first (core/spin_wait.hpp) and only then sleeps on a condition variable.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "core/spin_wait.hpp"

namespace troupe {

/// Carries one value per round from a producer to the thread that waits for it.
template <class T>
class Handoff {
 public:
  /// Publishes `value` for the current round and wakes the waiter.
  void put(T value) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      value_ = std::move(value);
      ready_.store(true, std::memory_order_release);
    }
    cv_.notify_one();
  }

  /// Waits up to `timeout` for the round's value and takes it; nullopt on timeout.
  std::optional<T> take(std::chrono::nanoseconds timeout) {
    if (spin_until([&] { return ready_.load(std::memory_order_acquire); })) return take_ready();
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [&] { return ready_.load(std::memory_order_acquire); }))
      return std::nullopt;
    ready_.store(false, std::memory_order_relaxed);
    return std::exchange(value_, std::nullopt);
  }

 private:
  std::optional<T> take_ready() {
    std::lock_guard<std::mutex> lock(mutex_);
    ready_.store(false, std::memory_order_relaxed);
    return std::exchange(value_, std::nullopt);
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<bool> ready_{false};
  std::optional<T> value_;
};

}  // namespace troupe
