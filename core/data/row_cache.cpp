#include "core/data/row_cache.hpp"

#include <sys/mman.h>

#include <cstring>
#include <new>
#include <numeric>

namespace troupe::data {

size_t RowCache::bytes_needed(int64_t rows, const std::vector<size_t>& component_bytes) {
  return size_t(rows) * std::accumulate(component_bytes.begin(), component_bytes.end(), size_t(0));
}

RowCache::RowCache(int64_t rows, std::vector<size_t> component_bytes)
    : rows_(rows), component_bytes_(std::move(component_bytes)) {
  if (rows < 0) throw invalid_argument("RowCache: negative row count " + std::to_string(rows));
  row_bytes_ = bytes_needed(1, component_bytes_);
  constexpr size_t kHugePage = size_t(2) << 20;
  mapped_bytes_ = (size_t(rows) * row_bytes_ + kHugePage - 1) / kHugePage * kHugePage;
  if (mapped_bytes_ > 0) {
    void* p =
        mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, mapped_bytes_, MADV_HUGEPAGE);  // a hint: without huge pages it still works
    bytes_ = static_cast<char*>(p);
  }
  state_.reset(new std::atomic<uint8_t>[size_t(rows)]);
  for (int64_t i = 0; i < rows; ++i) state_[i].store(kEmpty, std::memory_order_relaxed);
}

RowCache::~RowCache() {
  if (bytes_) munmap(bytes_, mapped_bytes_);
}

bool RowCache::read(int64_t i, const RowDestination& dst) const {
  if (i < 0 || i >= rows_ || state_[i].load(std::memory_order_acquire) != kReady) return false;
  const char* row = bytes_ + size_t(i) * row_bytes_;
  for (size_t c = 0; c < component_bytes_.size(); ++c) {
    std::memcpy(dst[c], row, component_bytes_[c]);
    row += component_bytes_[c];
  }
  return true;
}

void RowCache::store(int64_t i, const RowDestination& src) {
  if (i < 0 || i >= rows_) return;
  uint8_t expected = kEmpty;
  if (!state_[i].compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel)) return;
  char* row = bytes_ + size_t(i) * row_bytes_;
  for (size_t c = 0; c < component_bytes_.size(); ++c) {
    std::memcpy(row, src[c], component_bytes_[c]);
    row += component_bytes_[c];
  }
  state_[i].store(kReady, std::memory_order_release);
}

}  // namespace troupe::data
