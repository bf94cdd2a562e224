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

std::shared_ptr<SharedMemoryAllReduce> ReplicaGroupShared::rendezvous(uint64_t step,
                                                                      int64_t instance) {
  std::lock_guard<std::mutex> lock(rendezvous_mutex_);
  for (auto it = rendezvous_.begin(); it != rendezvous_.end();)
    it = it->second.step < step ? rendezvous_.erase(it) : std::next(it);
  auto& entry = rendezvous_[instance];
  if (!entry.group) {
    entry.step = step;
    entry.group = std::make_shared<SharedMemoryAllReduce>(
        size(), "collective " + std::to_string(instance) + " at step " + std::to_string(step));
    if (aborted_step_ == step) entry.group->abort(aborted_why_);
  }
  auto group = entry.group;
  if (++entry.claims == size()) rendezvous_.erase(instance);
  return group;
}

void ReplicaGroupShared::abort_collectives(uint64_t step, const std::string& why) {
  std::lock_guard<std::mutex> lock(rendezvous_mutex_);
  aborted_step_ = step;
  aborted_why_ = why;
  for (auto& [instance, entry] : rendezvous_)
    if (entry.step == step) entry.group->abort(why);
}

}  // namespace troupe
