#include "core/data/input_context.hpp"

#include "core/status.hpp"

namespace troupe::data {

InputContext::InputContext(int64_t pipelines, int64_t id, int64_t replicas)
    : num_input_pipelines_(pipelines), input_pipeline_id_(id), num_replicas_in_sync_(replicas) {
  if (pipelines < 1)
    throw invalid_argument("InputContext: num_input_pipelines must be >= 1, got " +
                           std::to_string(pipelines));
  if (id < 0 || id >= pipelines)
    throw invalid_argument("InputContext: input_pipeline_id " + std::to_string(id) +
                           " outside [0, " + std::to_string(pipelines) + ")");
  if (replicas < 1)
    throw invalid_argument("InputContext: num_replicas_in_sync must be >= 1, got " +
                           std::to_string(replicas));
}

int64_t InputContext::get_per_replica_batch_size(int64_t global_batch_size) const {
  if (global_batch_size % num_replicas_in_sync_ != 0)
    throw invalid_argument("The global batch size (" + std::to_string(global_batch_size) +
                           ") is not divisible by num_replicas_in_sync (" +
                           std::to_string(num_replicas_in_sync_) + ")");
  return global_batch_size / num_replicas_in_sync_;
}

std::string InputContext::to_string() const {
  return "tf.distribute.InputContext(input pipeline id " + std::to_string(input_pipeline_id_) +
         ", total: " + std::to_string(num_input_pipelines_) + ")";
}

std::vector<InputContext> input_contexts_for_workers(int64_t workers, int64_t replicas) {
  if (workers < 1) throw invalid_argument("input contexts: should have at least one worker");
  std::vector<InputContext> out;
  for (int64_t i = 0; i < workers; ++i) out.emplace_back(workers, i, replicas);
  return out;
}

}  // namespace troupe::data
