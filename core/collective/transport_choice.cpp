#include "core/collective/transport_choice.hpp"

namespace troupe {

std::string_view transport_name(Transport transport) {
  switch (transport) {
    case Transport::identity: return "identity";
    case Transport::shared_memory: return "shared_memory";
    case Transport::peer_actors: return "peer_actors";
    case Transport::one_thread_sum: return "one_thread_sum";
    case Transport::local_algorithm: return "local_algorithm";
    case Transport::merge_call: return "merge_call";
    case Transport::nccl: return "nccl";
    case Transport::cross_worker: return "cross_worker";
  }
  return "unknown";
}

Transport choose_transport(const TransportQuery& q) {
  if (q.workers > 1)
    return q.one_thread_holds_all ? Transport::cross_worker : Transport::merge_call;
  if (q.replicas <= 1) return Transport::identity;
  const auto algorithm = q.algorithm;
  const bool ring = algorithm == CrossDeviceOpKind::collective_all_reduce;
  if (q.one_thread_holds_all) {
    if (algorithm == CrossDeviceOpKind::nccl_all_reduce) return Transport::nccl;
    return ring ? Transport::one_thread_sum : Transport::local_algorithm;
  }
  // GPU values reach NCCL (or the op's refusal by name) through merge_call, on one thread.
  if (!q.values_on_host) return Transport::merge_call;
  if (ring && q.shared_memory_allowed) return Transport::shared_memory;
  const bool has_state_machine = ring || algorithm == CrossDeviceOpKind::hierarchical_copy;
  if (has_state_machine && q.bytes >= q.peer_threshold_bytes) return Transport::peer_actors;
  return Transport::merge_call;
}

}  // namespace troupe
