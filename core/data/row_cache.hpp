#pragma once
// The rows of an indexed source kept after they were first computed, so that later epochs of a
// repeated dataset copy them instead of computing them again (synthetic data: ~1 ns per Philox
// normal against ~0.1 ns per float copied). Shared by every iterator over the same source.
//
// Each component's rows are kept contiguously (component-major), so once a run of rows is kept a
// batch of them can be handed out as views of the cache's memory with no copy at all
// (view_rows()); materialize() computes every row up front, on all cores, for that purpose.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/data/dataset.hpp"

namespace troupe::data {

class RowCache : public std::enable_shared_from_this<RowCache> {
 public:
  /// Writes row i into the given memory (one pointer per component).
  using Compute = std::function<void(int64_t, const RowDestination&)>;

  /// Room for `rows` rows of components of `component_bytes` bytes each. The memory is reserved,
  /// not touched: pages are only faulted in as rows are stored, in 2 MiB huge pages where the
  /// kernel allows (4 KiB pages cost the demo's 180 MiB cache 46,000 page faults).
  RowCache(int64_t rows, std::vector<size_t> component_bytes);
  ~RowCache();
  RowCache(const RowCache&) = delete;
  RowCache& operator=(const RowCache&) = delete;
  /// Bytes of rows a cache of this shape holds (what a budget is compared with).
  static size_t bytes_needed(int64_t rows, const std::vector<size_t>& component_bytes);

  /// Copies row i into dst and returns true when it is stored; false otherwise.
  bool read(int64_t i, const RowDestination& dst) const;
  /// Keeps row i, read from `src` (the destinations just written), unless it is already kept
  /// or being kept by another thread. The bytes are the same either way: rows are pure
  /// functions of their index.
  void store(int64_t i, const RowDestination& src);

  /// Computes every row not yet kept straight into the cache, on `threads` threads, each over
  /// a contiguous range of rows (so each faults in its own pages). Runs once: later calls, and
  /// calls racing the first, return when the first has finished. An exception from `compute`
  /// leaves the rows it did not finish unkept and propagates (a later call tries again; not
  /// std::call_once, whose retry after an exception hangs with libstdc++'s pthread_once).
  void materialize(const Compute& compute, int threads);

  /// Rows [begin, begin + count) as one batch: per component a tensor of shape
  /// [count, <component dims of `spec`>] viewing the cache's memory, when every one of those rows
  /// is kept; nullopt otherwise. The views keep the cache alive and are copy-on-write (marked
  /// shared results), so a consumer that writes into its batch never changes the cache. The
  /// cache must be owned by a shared_ptr.
  std::optional<Element> view_rows(int64_t begin, int64_t count, const ElementSpec& spec);

 private:
  enum : uint8_t { kEmpty = 0, kWriting = 1, kReady = 2 };
  char* row_address(size_t component, int64_t i) const {
    return bytes_ + component_offsets_[component] + size_t(i) * component_bytes_[component];
  }
  bool all_kept(int64_t begin, int64_t count) const;
  /// Computes rows [begin, end) that nobody else keeps or is keeping.
  void compute_range(const Compute& compute, int64_t begin, int64_t end);

  int64_t rows_;
  std::vector<size_t> component_bytes_;
  std::vector<size_t> component_offsets_;  ///< start of each component's rows, 64-byte aligned
  size_t mapped_bytes_ = 0;
  char* bytes_ = nullptr;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  std::atomic<int64_t> kept_{0};  ///< rows in state kReady
  std::mutex materialize_mutex_;
  std::atomic<bool> materialized_{false};
};

}  // namespace troupe::data
