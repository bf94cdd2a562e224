#pragma once
// The first phase of every wait between replica threads: spin, then sleep. Sleeping costs the
// waker a futex call and the sleeper 20-50 us to be scheduled again (measured on 2 cores); the
// replicas of a training step usually meet within ~100 us of each other (their compute times
// jitter by that much), so a waiter that spins that long reacts at once. It yields every 64
// checks, so a runnable thread on its core (an oversubscribed group) is not starved.

#include <chrono>
#include <thread>

namespace troupe {

/// How long a waiter spins before it sleeps.
inline constexpr std::chrono::microseconds kSpinBudget{200};

/// Calls `ready()` until it returns true or `budget` has passed; returns its last answer.
template <class Ready>
bool spin_until(Ready ready, std::chrono::nanoseconds budget = kSpinBudget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (int i = 1;; ++i) {
    if (ready()) return true;
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() >= deadline) return ready();
      std::this_thread::yield();
    }
  }
}

}  // namespace troupe
