#pragma once
// InputOptions (tf.distribute.InputOptions) and how they decide the input workers of a
// distributed dataset (spec §2.7.3): how many pipelines there are and how many replicas each
// feeds. In one process a MirroredStrategy has one input worker feeding every replica; tests and
// callers may ask for W workers explicitly to exercise the multi-worker rebatch and auto-shard
// rules.

#include <chrono>
#include <cstdint>
#include <string>

namespace troupe {

/// Whether one pipeline feeds all replicas of a worker or each replica has its own.
enum class InputReplicationMode { per_worker, per_replica };

/// "PER_WORKER" / "PER_REPLICA".
const char* input_replication_mode_name(InputReplicationMode mode);

/// Options of experimental_distribute_dataset / distribute_datasets_from_function.
struct InputOptions {
  InputReplicationMode experimental_replication_mode = InputReplicationMode::per_worker;
  /// Run each pipeline on its replica's device (needs PER_REPLICA and no fetch_to_device).
  bool experimental_place_dataset_on_device = false;
  /// Copy elements to the replicas' devices ahead of use: an input worker feeding GPU replicas
  /// copies each element to its replica's GPU on its reader thread as it reads ahead
  /// (DatasetIteratorOptions::place). CPU replicas compute on host memory: nothing to copy.
  bool experimental_fetch_to_device = true;
  /// Steps each input worker reads ahead of demand (one element per replica per step); 0 reads
  /// each step only when it is asked for.
  int64_t experimental_per_replica_buffer_size = 1;
  /// Input workers; 0 = the strategy's own (one per process: 1 for MirroredStrategy).
  int64_t num_input_workers = 0;
  /// How long the coordinator waits for an input worker's answer before failing.
  std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
};

/// The input workers chosen for a dataset: W pipelines, R = N / W replicas each.
struct InputWorkerPlan {
  int64_t num_workers = 1;
  int64_t replicas_per_worker = 1;
};

/// Checks `options` and plans the input workers for N = num_replicas_in_sync replicas. Throws
/// unimplemented for PER_REPLICA unless `from_function`, invalid_argument for conflicting
/// placement options, a buffer size < 1, W < 0, or N not divisible by W (naming both).
InputWorkerPlan plan_input_workers(int64_t num_replicas_in_sync, const InputOptions& options,
                                   bool from_function);

}  // namespace troupe
