#include "core/buffer.hpp"

#include <cstdlib>
#include <new>

namespace troupe {

std::shared_ptr<Buffer> Buffer::allocate_host(size_t bytes) {
  constexpr size_t kAlign = 64;
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = rounded == 0 ? nullptr : std::aligned_alloc(kAlign, rounded);
  if (rounded != 0 && p == nullptr) throw std::bad_alloc();
  return std::make_shared<Buffer>(p, bytes, MemoryKind::host, 0, [](void* q) { std::free(q); });
}

Buffer::Buffer(void* data, size_t bytes, MemoryKind kind, int device_index, Deleter deleter)
    : data_(data), bytes_(bytes), kind_(kind), device_index_(device_index),
      deleter_(std::move(deleter)) {}

Buffer::~Buffer() {
  if (deleter_ && data_) deleter_(data_);
}

}  // namespace troupe
