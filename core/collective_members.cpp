#include "core/collective_members.hpp"

namespace troupe {

std::vector<CollectiveMember> collective_members(const ClusterSpec& cluster) {
  std::vector<CollectiveMember> members;
  for (const char* job : {"chief", "worker"}) {
    if (!cluster.has_job(job)) continue;
    for (int index : cluster.task_indices(job)) {
      const std::string field = std::string("cluster.") + job + "[" + std::to_string(index) + "]";
      members.push_back(
          {task_name(job, index), HostPort::parse(cluster.task_address(job, index), field)});
    }
  }
  return members;
}

}  // namespace troupe
