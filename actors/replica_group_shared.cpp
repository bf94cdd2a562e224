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

}  // namespace troupe
