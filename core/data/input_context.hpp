#pragma once
// InputContext (spec §2.10): what distribute_datasets_from_function tells a user's dataset
// function about its place among the input pipelines.

#include <cstdint>
#include <string>
#include <vector>

namespace troupe::data {

/// Position of one input pipeline in the cluster.
class InputContext {
 public:
  /// Throws invalid_argument unless 0 <= id < pipelines and replicas >= 1.
  explicit InputContext(int64_t num_input_pipelines = 1, int64_t input_pipeline_id = 0,
                        int64_t num_replicas_in_sync = 1);
  int64_t num_input_pipelines() const { return num_input_pipelines_; }
  int64_t input_pipeline_id() const { return input_pipeline_id_; }
  int64_t num_replicas_in_sync() const { return num_replicas_in_sync_; }
  /// global / num_replicas_in_sync; throws invalid_argument naming both when not divisible.
  int64_t get_per_replica_batch_size(int64_t global_batch_size) const;
  /// "tf.distribute.InputContext(input pipeline id 0, total: 1)".
  std::string to_string() const;
  bool operator==(const InputContext& o) const {
    return num_input_pipelines_ == o.num_input_pipelines_ &&
           input_pipeline_id_ == o.input_pipeline_id_ &&
           num_replicas_in_sync_ == o.num_replicas_in_sync_;
  }

 private:
  int64_t num_input_pipelines_, input_pipeline_id_, num_replicas_in_sync_;
};

/// One context per input worker, in worker order (T7): (W, i, N) for i in [0, W).
std::vector<InputContext> input_contexts_for_workers(int64_t num_input_workers,
                                                     int64_t num_replicas_in_sync);

}  // namespace troupe::data
