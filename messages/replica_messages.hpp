#pragma once
// Messages between the caller of Strategy::run, replica actors and the merge_call barrier.
// They carry ids, never code: the callables they name stay in the process that registered them.

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "messages/tensor_wire.hpp"

namespace troupe {

/// Caller -> replica: run task `task` for `step` with this replica's arguments.
struct run_step_msg {
  uint64_t step = 0;
  uint64_t task = 0;
  std::vector<Tensor> args;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_step_msg& x) {
  return f(caf::meta::type_name("run_step_msg"), x.step, x.task, x.args);
}

/// Replica -> caller: the step's outputs.
struct step_result_msg {
  uint64_t step = 0;
  int32_t replica = 0;
  std::vector<Tensor> outputs;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, step_result_msg& x) {
  return f(caf::meta::type_name("step_result_msg"), x.step, x.replica, x.outputs);
}

/// Replica -> caller: the step failed on this replica (code is a troupe::Code value).
struct step_error_msg {
  uint64_t step = 0;
  int32_t replica = 0;
  int32_t code = 0;
  std::string message;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, step_error_msg& x) {
  return f(caf::meta::type_name("step_error_msg"), x.step, x.replica, x.code, x.message);
}

/// Replica -> barrier: arrived at merge_call number `call` of `step` with `tag`.
struct merge_arrival_msg {
  uint64_t step = 0;
  uint32_t call = 0;
  std::string tag;
  int32_t replica = 0;
  std::vector<Tensor> args;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, merge_arrival_msg& x) {
  return f(caf::meta::type_name("merge_arrival_msg"), x.step, x.call, x.tag, x.replica, x.args);
}

/// Replica -> barrier: the step function returned (after `merge_calls` merge_calls) or threw.
struct replica_done_msg {
  uint64_t step = 0;
  int32_t replica = 0;
  uint32_t merge_calls = 0;
  bool failed = false;
  std::string what;  ///< the error when failed
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_done_msg& x) {
  return f(caf::meta::type_name("replica_done_msg"), x.step, x.replica, x.merge_calls, x.failed,
           x.what);
}

/// Barrier -> itself: the round (step, call) has been open for the merge timeout.
struct merge_timeout_msg {
  uint64_t step = 0;
  uint32_t call = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, merge_timeout_msg& x) {
  return f(caf::meta::type_name("merge_timeout_msg"), x.step, x.call);
}

}  // namespace troupe
