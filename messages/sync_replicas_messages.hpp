#pragma once
// Messages between a worker's step and the SyncReplicas accumulator (coordinator/ps/
// sync_replicas.hpp), which lives with the coordinator: workers in other processes send them
// across the middleman, so they are in the wire's type list.

#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "messages/tensor_wire.hpp"

namespace troupe {

/// worker -> accumulator: gradients computed at global step `local_step`, one per variable
/// (indices undefined for a dense gradient). Reply: sync_offer_reply_msg.
struct sync_offer_msg {
  int64_t local_step = 0;
  std::vector<Tensor> values;
  std::vector<Tensor> indices;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sync_offer_msg& x) {
  return f(caf::meta::type_name("sync_offer_msg"), x.local_step, x.values, x.indices);
}

/// accumulator -> worker: dropped (stale), accepted, or accepted and completing the step (apply
/// the mean in values / indices, then report the step applied).
struct sync_offer_reply_msg {
  bool accepted = false;
  bool apply = false;
  int64_t global_step = 0;
  std::vector<Tensor> values;
  std::vector<Tensor> indices;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sync_offer_reply_msg& x) {
  return f(caf::meta::type_name("sync_offer_reply_msg"), x.accepted, x.apply, x.global_step,
           x.values, x.indices);
}

}  // namespace troupe
