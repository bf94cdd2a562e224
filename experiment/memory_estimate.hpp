#pragma once
// How much host memory a run needs, worked out from the experiment alone, so that `plan` prints
// it and parsing refuses an experiment that cannot fit (instead of `run` dying with a bare
// std::bad_alloc seconds in), naming the key that makes it large.

#include <cstdint>
#include <string>

#include "experiment/source_map.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe::experiment {

/// Bytes of one run, by what holds them (over all replicas).
struct MemoryEstimate {
  int64_t parameters = 0;   ///< one copy of every variable per replica
  int64_t slots = 0;        ///< the optimizer's slots (momentum, Adam's m and v, ...) per replica
  int64_t gradients = 0;    ///< each replica's gradients and their reduced sum
  int64_t activations = 0;  ///< forward and backward values of one per-replica batch, per replica
  int64_t input = 0;  ///< the batch in use, data.prefetch batches ahead, the first-epoch cache
  int64_t total = 0;  ///< the sum
  std::string largest_key;  ///< the key behind the largest part ("model.hidden", ...)
};

/// The estimate for a parsed experiment (its sections already checked).
MemoryEstimate estimate_memory(const proto::Experiment& experiment);

/// Read-ahead the default data.prefetch may hold at most (unless one batch is larger).
inline constexpr int64_t kDefaultPrefetchBytes = int64_t(64) << 20;

/// data.prefetch when not given: two strategy.run chunks of global batches (2 x
/// train.steps_per_execution), so the input worker produces the next chunk on its own thread
/// while the replicas train this one (with fewer, the loop waits for input between chunks);
/// capped at kDefaultPrefetchBytes of batches, and at least 1.
int64_t default_prefetch(const proto::Experiment& experiment);

/// Repeated synthetic training data keeps its first epoch when it fits in this many bytes (the
/// demo's 60,000 MNIST-shaped examples take 180 MiB): later epochs copy the examples instead of
/// drawing their normals again, with the same bytes (docs/input.md).
inline constexpr int64_t kSyntheticCacheBudget = int64_t(256) << 20;

/// Bytes of the first-epoch cache a run keeps: examples x (float32 features + label) for
/// synthetic data without shuffle that fits kSyntheticCacheBudget, else 0.
int64_t synthetic_cache_bytes(const proto::Experiment& experiment);

/// Memory a run may use: TROUPE_MEMORY_BYTES when set (tests), else /proc/meminfo's MemTotal;
/// 0 when neither can be read (then nothing is refused).
int64_t available_memory_bytes();

/// Throws (through `source`, pointing at the largest key) when the estimate exceeds `available`:
/// "needs about 80.0 GiB (...) but this machine has 15.5 GiB". Does nothing for available 0.
void check_memory(const proto::Experiment& experiment, const SourceMap& source, int64_t available);

/// "1.5 GiB", "300.0 MiB", "12 KiB", "17 B".
std::string format_bytes(int64_t bytes);

}  // namespace troupe::experiment
