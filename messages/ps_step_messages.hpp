#pragma once
// Messages between a ClusterCoordinator and a worker process's step host
// (coordinator/ps/step_host.hpp): the coordinator sends a closure by name — the worker runs the
// step registered under that name from the same experiment file — and gets its outputs back, or
// an error through messages/error_channel.hpp naming the step and the worker.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "core/tensor.hpp"
#include "messages/tensor_wire.hpp"

namespace troupe {

/// coordinator -> step host: run step `step` with `args` under step id `step_id` (the same on
/// every attempt, so the ps shards apply its updates once). Reply: ps_step_done_msg.
struct ps_run_step_msg {
  std::string step;
  uint64_t step_id = 0;
  int32_t attempt = 1;
  std::vector<Tensor> args;
  /// What the step may talk to on the coordinator's side (the SyncReplicas accumulator of sync
  /// training), or none.
  caf::actor service;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_run_step_msg& x) {
  return f(caf::meta::type_name("ps_run_step_msg"), x.step, x.step_id, x.attempt, x.args,
           x.service);
}

/// step host -> coordinator: the outputs of step `step_id`, run by worker `worker`, and how many
/// batches each of the worker's per-worker datasets (by dataset id) has drawn once this step
/// ran, counting from the start of the run (a resumed run's position included): what a
/// checkpoint records as the worker's input position.
struct ps_step_done_msg {
  uint64_t step_id = 0;
  int32_t worker = -1;
  std::vector<Tensor> outputs;
  std::vector<int64_t> batches_drawn;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_step_done_msg& x) {
  return f(caf::meta::type_name("ps_step_done_msg"), x.step_id, x.worker, x.outputs,
           x.batches_drawn);
}

}  // namespace troupe
