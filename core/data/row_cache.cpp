#include "core/data/row_cache.hpp"

#include <sys/mman.h>

#include <cstring>
#include <exception>
#include <new>
#include <numeric>
#include <thread>

#include "core/buffer.hpp"

namespace troupe::data {
namespace {

constexpr size_t kAlign = 64;  // a cache line: each component's rows start on one

size_t align_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

size_t RowCache::bytes_needed(int64_t rows, const std::vector<size_t>& component_bytes) {
  return size_t(rows) * std::accumulate(component_bytes.begin(), component_bytes.end(), size_t(0));
}

RowCache::RowCache(int64_t rows, std::vector<size_t> component_bytes)
    : rows_(rows), component_bytes_(std::move(component_bytes)) {
  if (rows < 0) throw invalid_argument("RowCache: negative row count " + std::to_string(rows));
  size_t total = 0;
  for (size_t bytes : component_bytes_) {
    component_offsets_.push_back(total);
    total = align_up(total + size_t(rows) * bytes, kAlign);
  }
  constexpr size_t kHugePage = size_t(2) << 20;
  mapped_bytes_ = align_up(total, kHugePage);
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
  for (size_t c = 0; c < component_bytes_.size(); ++c)
    std::memcpy(dst[c], row_address(c, i), component_bytes_[c]);
  return true;
}

void RowCache::store(int64_t i, const RowDestination& src) {
  if (i < 0 || i >= rows_) return;
  uint8_t expected = kEmpty;
  if (!state_[i].compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel)) return;
  for (size_t c = 0; c < component_bytes_.size(); ++c)
    std::memcpy(row_address(c, i), src[c], component_bytes_[c]);
  state_[i].store(kReady, std::memory_order_release);
  kept_.fetch_add(1, std::memory_order_release);  // all_kept() acquires it
}

void RowCache::compute_range(const Compute& compute, int64_t begin, int64_t end) {
  RowDestination dst(component_bytes_.size());
  for (int64_t i = begin; i < end; ++i) {
    uint8_t expected = kEmpty;
    if (!state_[i].compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel)) continue;
    for (size_t c = 0; c < dst.size(); ++c) dst[c] = row_address(c, i);
    try {
      compute(i, dst);
    } catch (...) {
      state_[i].store(kEmpty, std::memory_order_release);
      throw;
    }
    state_[i].store(kReady, std::memory_order_release);
    kept_.fetch_add(1, std::memory_order_release);  // all_kept() acquires it
  }
}

void RowCache::materialize(const Compute& compute, int threads) {
  if (materialized_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(materialize_mutex_);
  if (materialized_.load(std::memory_order_relaxed)) return;
  const int64_t n = std::max<int64_t>(1, std::min<int64_t>(threads, rows_));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::vector<std::thread> helpers;
  auto range = [&](int64_t t) {
    try {
      compute_range(compute, rows_ * t / n, rows_ * (t + 1) / n);
    } catch (...) {
      errors[size_t(t)] = std::current_exception();
    }
  };
  for (int64_t t = 1; t < n; ++t) helpers.emplace_back(range, t);
  range(0);  // the calling thread takes the first range
  for (auto& h : helpers) h.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);  // unmarked: a later call tries again
  materialized_.store(true, std::memory_order_release);
}

bool RowCache::all_kept(int64_t begin, int64_t count) const {
  if (kept_.load(std::memory_order_acquire) == rows_) return true;
  for (int64_t i = begin; i < begin + count; ++i)
    if (state_[i].load(std::memory_order_acquire) != kReady) return false;
  return true;
}

std::optional<Element> RowCache::view_rows(int64_t begin, int64_t count, const ElementSpec& spec) {
  if (begin < 0 || count <= 0 || begin + count > rows_ || spec.size() != component_bytes_.size() ||
      !all_kept(begin, count))
    return std::nullopt;
  auto self = shared_from_this();
  Element out;
  for (size_t c = 0; c < spec.size(); ++c) {
    const size_t bytes = size_t(count) * component_bytes_[c];
    // The Buffer owns nothing: it holds the cache alive while any batch views it.
    auto buffer = std::make_shared<Buffer>(row_address(c, begin), bytes, MemoryKind::host, 0,
                                           [self](void*) {});
    buffer->mark_shared_result();
    std::vector<int64_t> dims = spec[c].dims;
    dims.insert(dims.begin(), count);
    out.emplace_back(spec[c].dtype, Shape(dims), std::move(buffer));
  }
  return out;
}

}  // namespace troupe::data
