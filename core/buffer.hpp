#pragma once
// Memory behind tensors. Shared ownership: a tensor handed to another actor in the same process
// shares its Buffer, so nothing is copied; clone() is the only way to get a private copy.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace troupe {

/// Where a buffer's bytes live.
enum class MemoryKind : uint8_t { host = 0, gpu = 1 };

/// What is known about the float values in a buffer: nothing (the default, and always for a
/// buffer that can still change), that every one is finite, or that at least one is NaN or
/// infinite. Known only for shared results, whose producer scanned the bytes as it wrote them.
enum class Finiteness : uint8_t { unknown = 0, all_finite = 1, not_all_finite = 2 };

/// A block of bytes with an owner-supplied release function.
class Buffer {
 public:
  using Deleter = std::function<void(void*)>;

  /// 64-byte aligned host memory (cache line / AVX-512 friendly), uninitialised.
  static std::shared_ptr<Buffer> allocate_host(size_t bytes);

  /// Adopts memory allocated elsewhere (e.g. cudaMalloc in kernels/cuda); `deleter` frees it.
  Buffer(void* data, size_t bytes, MemoryKind kind, int device_index, Deleter deleter);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  MemoryKind kind() const { return kind_; }
  int device_index() const { return device_index_; }

  /// Marks the bytes as one result read by several owners (an all-reduce result handed to every
  /// replica of a group): from now on a Tensor's mutable access copies them first.
  void mark_shared_result() { shared_result_.store(true, std::memory_order_release); }
  /// The same, recording what the producer learnt about the values as it wrote them. Only a
  /// shared result carries the fact: its bytes never change again (every write goes to a copy,
  /// whose fresh buffer knows nothing), so the fact stays true for the buffer's life. Callable
  /// again (every rank of a collective marks the one buffer) with the same fact, or with
  /// unknown, which keeps what is known; a different known fact throws failed_precondition.
  void mark_shared_result(Finiteness known);
  /// True once mark_shared_result() was called: writers must copy (copy-on-write).
  bool shared_result() const { return shared_result_.load(std::memory_order_acquire); }
  /// What mark_shared_result recorded; unknown for every other buffer. Describes the whole
  /// buffer: a view of part of it may be finite where the buffer is not.
  Finiteness finiteness() const { return Finiteness(finiteness_.load(std::memory_order_acquire)); }

 private:
  void* data_;
  size_t bytes_;
  MemoryKind kind_;
  int device_index_;
  Deleter deleter_;
  std::atomic<bool> shared_result_{false};
  std::atomic<uint8_t> finiteness_{uint8_t(Finiteness::unknown)};
};

}  // namespace troupe
