#pragma once
// Who takes part in a multi-worker strategy's collectives, in rank order: the chief (when the
// cluster has one) and then every worker by index, as TF's CollectiveAllReduceStrategy orders
// its group. A task's rank is its id_in_cluster.

#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/host_port.hpp"

namespace troupe {

struct CollectiveMember {
  std::string name;  ///< "/job:worker/task:1"
  HostPort address;
};

/// The chief and the workers of `cluster`, chief first, workers by index (sparse holes skipped).
std::vector<CollectiveMember> collective_members(const ClusterSpec& cluster);

}  // namespace troupe
