#include "actors/replica_group_shared.hpp"

namespace troupe {

uint64_t ReplicaGroupShared::add_task(ReplicaTask task) {
  std::lock_guard<std::mutex> lock(tasks_mutex_);
  uint64_t id = next_task_id_++;
  tasks_.emplace(id, std::move(task));
  return id;
}

ReplicaTask ReplicaGroupShared::task(uint64_t id) const {
  std::lock_guard<std::mutex> lock(tasks_mutex_);
  auto it = tasks_.find(id);
  if (it == tasks_.end())
    throw not_found("replica task " + std::to_string(id) + " is not registered");
  return it->second;
}

void ReplicaGroupShared::remove_task(uint64_t id) {
  std::lock_guard<std::mutex> lock(tasks_mutex_);
  tasks_.erase(id);
}

Tensor ReplicaGroupShared::collective_output(uint64_t step, int64_t instance, DType dtype,
                                             int64_t count) {
  std::lock_guard<std::mutex> lock(outputs_mutex_);
  for (auto it = outputs_.begin(); it != outputs_.end();)
    it = it->second.step < step ? outputs_.erase(it) : std::next(it);
  auto& entry = outputs_[instance];
  if (!entry.buffer.defined()) {
    entry.step = step;
    entry.buffer = Tensor(dtype, Shape{count});
  }
  Tensor buffer = entry.buffer;
  if (buffer.dtype() != dtype || buffer.num_elements() != count)
    throw invalid_argument("collective " + std::to_string(instance) +
                           ": replicas disagree on its "
                           "input (" +
                           buffer.description() + " vs " + std::to_string(count) + " " +
                           std::string(dtype_name(dtype)) + " elements)");
  if (++entry.claims == size()) outputs_.erase(instance);
  return buffer;
}

}  // namespace troupe
