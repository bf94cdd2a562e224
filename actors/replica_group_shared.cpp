#include "actors/replica_group_shared.hpp"

namespace troupe {

Tensor MergePort::shared_memory_all_reduce(const std::vector<Tensor>& inputs,
                                           const std::vector<OuterProduct>& products) {
  return shared_memory_all_reduce(with_products_formed(inputs, products), false);
}

Tensor ReplicaGroupShared::collective_output(uint64_t step, int64_t instance, DType dtype,
                                             int64_t count) {
  std::lock_guard<std::mutex> lock(collectives_mutex_);
  Tensor buffer =
      outputs_.claim(step, instance, size(), [&] { return Tensor(dtype, Shape{count}); });
  if (buffer.dtype() != dtype || buffer.num_elements() != count)
    throw invalid_argument("collective " + std::to_string(instance) +
                           ": replicas disagree on its input (" + buffer.description() + " vs " +
                           std::to_string(count) + " " + std::string(dtype_name(dtype)) +
                           " elements)");
  return buffer;
}

std::shared_ptr<SharedMemoryAllReduce> ReplicaGroupShared::rendezvous(uint64_t step,
                                                                      int64_t instance) {
  std::lock_guard<std::mutex> lock(collectives_mutex_);
  return rendezvous_.claim(step, instance, size(), [&] {
    auto group = std::make_shared<SharedMemoryAllReduce>(
        size(), "collective " + std::to_string(instance) + " at step " + std::to_string(step));
    if (aborted_step_ == step) group->abort(aborted_why_);
    if (!group_failure_.empty()) group->abort(group_failure_);
    return group;
  });
}

void ReplicaGroupShared::fail_group(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(collectives_mutex_);
    if (group_failure_.empty()) group_failure_ = why;
    rendezvous_.for_each([&](auto& group) { group->abort(why); });
  }
  for (auto& slot : slots) slot.fail_waiting(Status(Code::unavailable, why));
}

std::string ReplicaGroupShared::group_failure() const {
  std::lock_guard<std::mutex> lock(collectives_mutex_);
  return group_failure_;
}

void ReplicaGroupShared::abort_collectives(uint64_t step, const std::string& why) {
  std::lock_guard<std::mutex> lock(collectives_mutex_);
  aborted_step_ = step;
  aborted_why_ = why;
  rendezvous_.for_step(step, [&](auto& group) { group->abort(why); });
}

}  // namespace troupe
