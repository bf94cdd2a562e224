#include "kernels/gpu_block_cache.hpp"

#include <algorithm>

namespace troupe {

size_t GpuBlockCache::rounded(size_t bytes) {
  return std::max<size_t>(1, (bytes + kGranule - 1) / kGranule) * kGranule;
}

void* GpuBlockCache::take(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = free_.find(bytes);
  if (it == free_.end() || it->second.empty()) return nullptr;
  void* block = it->second.back();
  it->second.pop_back();
  held_ -= bytes;
  return block;
}

bool GpuBlockCache::release(void* block, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (held_ + bytes > capacity_) return false;
  held_ += bytes;
  waiting_.push_back({block, bytes, epoch_});
  return true;
}

uint64_t GpuBlockCache::synchronizing() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ++epoch_;
}

void GpuBlockCache::synchronized(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto done = std::stable_partition(waiting_.begin(), waiting_.end(),
                                    [&](const Waiting& w) { return w.epoch >= ticket; });
  for (auto it = done; it != waiting_.end(); ++it) free_[it->bytes].push_back(it->block);
  waiting_.erase(done, waiting_.end());
}

std::vector<std::pair<void*, size_t>> GpuBlockCache::drain_free() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<void*, size_t>> out;
  for (auto& [bytes, blocks] : free_)
    for (void* b : blocks) out.emplace_back(b, bytes);
  for (auto& b : out) held_ -= b.second;
  free_.clear();
  return out;
}

size_t GpuBlockCache::bytes_held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_;
}

}  // namespace troupe
