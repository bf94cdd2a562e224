#pragma once
// Futex waits and wakes on 32-bit words that live in process-shared memory (a futex on a
// MAP_SHARED page works across processes), and the spin-loop hint. Shared by the ring and the
// rendezvous of the collective data plane.

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <ctime>

namespace troupe::shm {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex words must be plain");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "counters are shared between processes");

inline uint32_t* futex_word(std::atomic<uint32_t>& word) {
  return reinterpret_cast<uint32_t*>(&word);
}

/// Sleeps while `word` holds `expected`, at most `ms` milliseconds (spurious wake-ups happen).
inline void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, int ms) {
  timespec ts{ms / 1000, long(ms % 1000) * 1000000L};
  ::syscall(SYS_futex, futex_word(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

/// Wakes every sleeper on `word`, in any process.
inline void futex_wake(std::atomic<uint32_t>& word) {
  ::syscall(SYS_futex, futex_word(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace troupe::shm
