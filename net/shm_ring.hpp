#pragma once
// A one-way byte ring in a POSIX shared-memory segment, for the collective data plane between
// processes of one host (what NCCL's and MPI's shared-memory transports do): the sender copies
// into the ring, the receiver copies out, no kernel socket buffers, no system call per chunk
// while both sides are busy. One writer and one reader, each in its own process.
//
// Synchronisation: monotonically growing byte counters `head` (written) and `tail` (consumed);
// a side that has to wait spins briefly, then sleeps on a futex in the segment (process-shared)
// with a short timeout, after which the caller's `alive` check runs (the peer process may be
// gone: the ring itself cannot tell). The creator unlinks the name once the peer has mapped it,
// so a segment outlives neither process.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace troupe {

/// How a blocking ring transfer ended.
enum class RingIo { ok, idle, stalled, closed };

class ShmRing {
 public:
  /// Creates a fresh segment with `capacity` data bytes under a random name (creator side).
  static ShmRing create(size_t capacity);
  /// Maps the segment `name` created by the peer; throws unavailable naming it on failure.
  static ShmRing open(const std::string& name);

  ShmRing(ShmRing&& other) noexcept;
  ShmRing& operator=(ShmRing&& other) noexcept;
  ~ShmRing();

  const std::string& name() const { return name_; }
  size_t capacity() const { return capacity_; }
  /// Removes the name (the mapping stays); called by the creator once the peer has mapped it.
  void unlink();

  /// Called while waiting, every few milliseconds: false ends the wait as `closed`.
  using AliveFn = std::function<bool()>;
  /// Writes all `size` bytes, publishing every few hundred KiB so that the reader copies out
  /// while the writer copies in; `stalled` when the reader took nothing for `timeout_ms`.
  RingIo write(const void* data, size_t size, int timeout_ms, const AliveFn& alive);
  /// Writes `a` then `b` only when both fit now, without waiting; false (nothing written) when
  /// they do not. Lets a sender put a small frame in place instead of waking a writer thread.
  bool try_write(const void* a, size_t a_size, const void* b, size_t b_size);
  /// Reads exactly `size` bytes. With `idle_ok` a wait before the first byte never stalls (it
  /// returns `idle` after `timeout_ms` so the caller can check for shutdown).
  RingIo read(void* data, size_t size, int timeout_ms, bool idle_ok, const AliveFn& alive);
  /// Marks the ring closed and wakes both sides (local shutdown).
  void close();

 private:
  struct Control;
  ShmRing() = default;
  void map(int fd, bool create, size_t capacity);

  std::string name_;
  Control* control_ = nullptr;
  char* data_ = nullptr;
  size_t capacity_ = 0, mapped_ = 0;
  bool linked_ = false;
};

}  // namespace troupe
