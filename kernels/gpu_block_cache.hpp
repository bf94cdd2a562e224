#pragma once
// The bookkeeping of troupe's caching GPU allocator, without CUDA so that CPU builds test it.
//
// cudaMalloc is slow and cudaFree waits for the whole device, so a GPU step that gives every
// intermediate tensor fresh memory spends its time in the driver (docs/benchmarks.md, "On one
// GPU"). kernels/cuda/device_memory.cpp keeps released blocks here instead and hands them out
// again. A block released on the host may still be read or written by work queued on any stream,
// so it is reusable only after a whole-device synchronisation that *began after* its release has
// completed: every use of it was enqueued before the release, hence before that synchronisation.
// Epochs track this: a release is stamped with the current epoch, a synchronisation opens a new
// one when it begins and, once complete, frees every block stamped before it.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace troupe {

class GpuBlockCache {
 public:
  /// Blocks are handed out by exact size in units of kGranule; `capacity` bounds the bytes held
  /// (waiting or free): past it, release() refuses and the caller frees the block itself.
  static constexpr size_t kGranule = 512;
  explicit GpuBlockCache(size_t capacity) : capacity_(capacity) {}

  /// `bytes` rounded up to a whole number of granules (at least one).
  static size_t rounded(size_t bytes);

  /// A free block of exactly `bytes` (already rounded), or null when none is free.
  void* take(size_t bytes);

  /// Takes back a block of `bytes` (as allocated, rounded) that the host no longer references;
  /// false when the cache is full: the caller frees it.
  bool release(void* block, size_t bytes);

  /// A whole-device synchronisation begins: returns its ticket for synchronized().
  uint64_t synchronizing();
  /// The synchronisation that got `ticket` completed: blocks released before it began are free.
  void synchronized(uint64_t ticket);

  /// Removes and returns every free block (to give memory back to the driver, e.g. when an
  /// allocation fails); blocks still waiting for a synchronisation stay.
  std::vector<std::pair<void*, size_t>> drain_free();

  size_t bytes_held() const;

 private:
  struct Waiting {
    void* block;
    size_t bytes;
    uint64_t epoch;
  };
  mutable std::mutex mutex_;
  size_t capacity_;
  size_t held_ = 0;
  uint64_t epoch_ = 0;
  std::vector<Waiting> waiting_;
  std::unordered_map<size_t, std::vector<void*>> free_;  // by size
};

}  // namespace troupe
