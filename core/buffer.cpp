#include "core/buffer.hpp"

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace troupe {
namespace {

constexpr size_t kAlign = 64;
// Smaller blocks are malloc's business. 256 KiB, not 1 MiB: an MLP's 0.8 MB gradients and
// all-reduce results, allocated every step, had cost 20+ page faults per step (malloc trims and
// maps blocks of that size back and forth), and the jitter that adds to one replica's step is
// time every other replica waits at the next all-reduce.
constexpr size_t kPooledMin = size_t(256) << 10;
constexpr size_t kPoolCap = size_t(512) << 20;  // bytes kept for reuse, at most

/// Reuses large host blocks. glibc hands blocks above 32 MiB straight to mmap and back to
/// munmap, so every fresh 64 MiB tensor paid ~16k page faults (measured: a 64 MiB all-reduce
/// spent most of its time faulting in new result buffers). Freed large blocks wait here, by
/// size, up to kPoolCap bytes. The one process-wide piece of core, like malloc itself.
class LargeBlockPool {
 public:
  void* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(bytes);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= bytes;
    return p;
  }
  void give(void* p, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + bytes <= kPoolCap) {
        free_[bytes].push_back(p);
        cached_ += bytes;
        return;
      }
    }
    std::free(p);
  }

 private:
  std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0;
};

LargeBlockPool& large_blocks() {
  static LargeBlockPool* pool = new LargeBlockPool;  // never destroyed: buffers may outlive main
  return *pool;
}

}  // namespace

std::shared_ptr<Buffer> Buffer::allocate_host(size_t bytes) {
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (rounded >= kPooledMin) {
    rounded = (rounded + kPooledMin - 1) / kPooledMin * kPooledMin;  // few distinct sizes
    void* p = large_blocks().take(rounded);
    if (!p) p = std::aligned_alloc(kAlign, rounded);
    if (!p) throw std::bad_alloc();
    return std::make_shared<Buffer>(p, bytes, MemoryKind::host, 0,
                                    [rounded](void* q) { large_blocks().give(q, rounded); });
  }
  void* p = rounded == 0 ? nullptr : std::aligned_alloc(kAlign, rounded);
  if (rounded != 0 && p == nullptr) throw std::bad_alloc();
  return std::make_shared<Buffer>(p, bytes, MemoryKind::host, 0, [](void* q) { std::free(q); });
}

Buffer::Buffer(void* data, size_t bytes, MemoryKind kind, int device_index, Deleter deleter)
    : data_(data),
      bytes_(bytes),
      kind_(kind),
      device_index_(device_index),
      deleter_(std::move(deleter)) {}

void Buffer::mark_shared_result(Finiteness known) {
  // The fact is stored before the flag is raised: a reader that sees the buffer shared sees it.
  if (known != Finiteness::unknown) {
    uint8_t expected = uint8_t(Finiteness::unknown);
    if (!finiteness_.compare_exchange_strong(expected, uint8_t(known), std::memory_order_acq_rel) &&
        expected != uint8_t(known)) {
      auto name = [](uint8_t f) {
        return f == uint8_t(Finiteness::all_finite) ? "all finite" : "not all finite";
      };
      throw failed_precondition("shared result of " + std::to_string(bytes_) + " bytes: marked " +
                                name(uint8_t(known)) + " but already known " + name(expected) +
                                " (its bytes cannot have changed)");
    }
  }
  mark_shared_result();
}

Buffer::~Buffer() {
  if (deleter_ && data_) deleter_(data_);
}

}  // namespace troupe
