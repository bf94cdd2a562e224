#pragma once
// Messages between a DistributedIterator (coordinator) and its dataset_iterator actors, one per
// input worker. A step is one element per replica of that worker, handed out round-robin; a
// replica whose data has ended gets no element (has_data 0) and the coordinator fills in a dummy.

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "messages/tensor_wire.hpp"

namespace troupe {

/// Coordinator -> dataset_iterator: hand out the next step (the coordinator's step counter,
/// echoed back so a stale reply is recognised).
struct input_pull_msg {
  uint64_t step = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, input_pull_msg& x) {
  return f(caf::meta::type_name("input_pull_msg"), x.step);
}

/// dataset_iterator -> coordinator: one element per replica of the worker. elements[r] is empty
/// when has_data[r] is 0. A non-zero error_code (a troupe::Code) means the pipeline failed at
/// this step; error_message then names the problem (file, byte offset, ...).
struct input_step_msg {
  uint64_t step = 0;
  std::vector<uint8_t> has_data;
  std::vector<std::vector<Tensor>> elements;
  int32_t error_code = 0;
  std::string error_message;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, input_step_msg& x) {
  return f(caf::meta::type_name("input_step_msg"), x.step, x.has_data, x.elements, x.error_code,
           x.error_message);
}

/// Coordinator -> dataset_iterator: steps it was handed but did not use, in stream order. They
/// go back to the front of the read-ahead, so the next pulls and a saved position see them again.
struct input_unpull_msg {
  std::vector<input_step_msg> steps;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, input_unpull_msg& x) {
  return f(caf::meta::type_name("input_unpull_msg"), x.steps);
}

/// dataset_iterator -> itself: read one more step ahead if the buffer has room.
struct input_fill_msg {
  uint64_t generation = 0;  ///< bumped by restore so fills of an old position are dropped
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, input_fill_msg& x) {
  return f(caf::meta::type_name("input_fill_msg"), x.generation);
}

/// Coordinator -> dataset_iterator: report the position of the steps handed out so far.
struct input_save_msg {
  uint64_t request = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, input_save_msg& x) {
  return f(caf::meta::type_name("input_save_msg"), x.request);
}

/// A dataset_iterator's position: the core/data iterator's state plus the steps it had read
/// ahead but not handed out (so a restore hands them out next, exactly as the original would).
struct input_worker_state {
  std::string iterator_state;
  bool exhausted = false;
  std::vector<input_step_msg> buffered;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, input_worker_state& x) {
  return f(caf::meta::type_name("input_worker_state"), x.iterator_state, x.exhausted, x.buffered);
}

/// Coordinator -> dataset_iterator: continue from `state` (bytes of an input_worker_state).
struct input_restore_msg {
  std::vector<char> state;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, input_restore_msg& x) {
  return f(caf::meta::type_name("input_restore_msg"), x.state);
}

/// dataset_iterator -> coordinator: reply to save (state filled) or restore (state empty);
/// a non-zero error_code (troupe::Code) says it failed and why.
struct input_state_msg {
  std::vector<char> state;
  int32_t error_code = 0;
  std::string error_message;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, input_state_msg& x) {
  return f(caf::meta::type_name("input_state_msg"), x.state, x.error_code, x.error_message);
}

}  // namespace troupe
