#include "coordinator/input_workers.hpp"

#include "core/status.hpp"

namespace troupe {

const char* input_replication_mode_name(InputReplicationMode mode) {
  return mode == InputReplicationMode::per_worker ? "PER_WORKER" : "PER_REPLICA";
}

InputWorkerPlan plan_input_workers(int64_t num_replicas_in_sync, const InputOptions& options,
                                   bool from_function) {
  const int64_t n = num_replicas_in_sync;
  if (n < 1) throw invalid_argument("input workers: the strategy should have at least one worker");
  bool per_replica = options.experimental_replication_mode == InputReplicationMode::per_replica;
  if (per_replica && !from_function)
    throw unimplemented(
        "experimental_distribute_dataset does not support InputReplicationMode PER_REPLICA; "
        "use distribute_datasets_from_function for per-replica pipelines");
  if (options.experimental_place_dataset_on_device && !per_replica)
    throw invalid_argument(
        "InputOptions: experimental_place_dataset_on_device requires replication mode "
        "PER_REPLICA, got PER_WORKER");
  if (options.experimental_place_dataset_on_device && options.experimental_fetch_to_device)
    throw invalid_argument(
        "InputOptions: experimental_place_dataset_on_device cannot be combined with "
        "experimental_fetch_to_device");
  // 0: no read-ahead, each step is read when asked for.
  if (options.experimental_per_replica_buffer_size < 0)
    throw invalid_argument("InputOptions: experimental_per_replica_buffer_size must be >= 0, got " +
                           std::to_string(options.experimental_per_replica_buffer_size));
  if (options.num_input_workers < 0)
    throw invalid_argument("InputOptions: num_input_workers must be >= 0, got " +
                           std::to_string(options.num_input_workers));
  if (options.request_timeout.count() <= 0)
    throw invalid_argument("InputOptions: request_timeout must be positive");
  int64_t w = per_replica ? n : (options.num_input_workers == 0 ? 1 : options.num_input_workers);
  if (per_replica && options.num_input_workers != 0 && options.num_input_workers != n)
    throw invalid_argument("InputOptions: PER_REPLICA has one input worker per replica (" +
                           std::to_string(n) + "), but num_input_workers is " +
                           std::to_string(options.num_input_workers));
  if (n % w != 0)
    throw invalid_argument("num_replicas_in_sync (" + std::to_string(n) +
                           ") must be divisible by the number of input workers (" +
                           std::to_string(w) + ")");
  return {w, n / w};
}

}  // namespace troupe
