#include "actors/dataset_iterator.hpp"

#include <deque>
#include <memory>

#include <caf/all.hpp>

#include "core/status.hpp"
#include "messages/caf_compat.hpp"
#include "messages/input_messages.hpp"

namespace troupe {
namespace {

struct dataset_iterator_state {
  static inline const char* name = "troupe.dataset_iterator";
  std::unique_ptr<data::Iterator> iterator;
  DatasetIteratorOptions options;
  std::deque<input_step_msg> ready;  // read ahead, not yet handed out
  bool exhausted = false;            // the iterator has ended (or failed): no more next()
  int32_t failure_code = 0;          // a failed pipeline keeps answering with its error
  std::string failure_message;
  bool fill_pending = false;
  uint64_t generation = 0;
};

using dataset_iterator_actor = caf::stateful_actor<dataset_iterator_state>;

// Pulls R elements (one per replica, round-robin) from the iterator. Once the data has ended,
// every later step has no data; once it failed, every later step repeats the error.
input_step_msg read_step(dataset_iterator_state& st) {
  input_step_msg step;
  auto replicas = size_t(st.options.replicas);
  step.has_data.assign(replicas, 0);
  step.elements.resize(replicas);
  if (st.failure_code != 0) {
    step.error_code = st.failure_code;
    step.error_message = st.failure_message;
    return step;
  }
  try {
    for (size_t r = 0; r < replicas && !st.exhausted; ++r) {
      auto element = st.iterator->next();
      if (!element) {
        st.exhausted = true;
        break;
      }
      step.elements[r] = std::move(*element);
      step.has_data[r] = 1;
    }
  } catch (const Error& e) {
    st.failure_code = int32_t(e.code());
    st.failure_message = e.what();
  } catch (const std::exception& e) {
    st.failure_code = int32_t(Code::internal);
    st.failure_message = e.what();
  }
  if (st.failure_code != 0) {
    // The elements of a failing step are dropped: the error reaches the caller at this step.
    st.exhausted = true;
    step = input_step_msg{};
    step.has_data.assign(replicas, 0);
    step.elements.resize(replicas);
    step.error_code = st.failure_code;
    step.error_message = st.failure_message;
  }
  return step;
}

bool buffer_full(const dataset_iterator_state& st) {
  return int64_t(st.ready.size()) >= st.options.buffer_steps;
}

// Reading ahead happens one step per message, so pulls arriving meanwhile are served in between.
void schedule_fill(dataset_iterator_actor* self) {
  auto& st = self->state;
  if (st.fill_pending || st.exhausted || buffer_full(st)) return;
  st.fill_pending = true;
  self->send(self, input_fill_msg{st.generation});
}

input_state_msg failure(Code code, const std::string& message) {
  input_state_msg reply;
  reply.error_code = int32_t(code);
  reply.error_message = message;
  return reply;
}

input_state_msg save_state(dataset_iterator_state& st) {
  try {
    input_worker_state saved;
    saved.iterator_state = st.iterator->save();
    saved.exhausted = st.exhausted;
    saved.buffered.assign(st.ready.begin(), st.ready.end());
    input_state_msg reply;
    if (auto err = wire::to_bytes(saved, reply.state))
      return failure(Code::internal,
                     "dataset_iterator: cannot encode state: " + caf::to_string(err));
    return reply;
  } catch (const Error& e) {
    return failure(e.code(), e.what());
  }
}

input_state_msg restore_state(dataset_iterator_state& st, const std::vector<char>& bytes) {
  input_worker_state saved;
  if (auto err = wire::from_bytes(bytes, saved))
    return failure(Code::data_loss, "dataset_iterator state: " + caf::to_string(err));
  for (auto& step : saved.buffered)
    if (step.has_data.size() != size_t(st.options.replicas) ||
        step.elements.size() != size_t(st.options.replicas))
      return failure(Code::invalid_argument, "dataset_iterator state: saved for " +
                                                 std::to_string(step.has_data.size()) +
                                                 " replicas, this input worker feeds " +
                                                 std::to_string(st.options.replicas));
  try {
    st.iterator->restore(saved.iterator_state);
  } catch (const Error& e) {
    return failure(e.code(), e.what());
  }
  st.ready.assign(saved.buffered.begin(), saved.buffered.end());
  st.exhausted = saved.exhausted;
  st.failure_code = 0;
  st.failure_message.clear();
  ++st.generation;  // fills queued for the old position no longer apply
  st.fill_pending = false;
  return {};
}

caf::behavior dataset_iterator(dataset_iterator_actor* self,
                               std::shared_ptr<data::Iterator> iterator,
                               DatasetIteratorOptions options) {
  auto& st = self->state;
  st.iterator = std::make_unique<data::Iterator>(std::move(*iterator));
  st.options = options;
  schedule_fill(self);  // start reading before the first pull arrives
  return {
      [=](const input_pull_msg& pull) -> input_step_msg {
        auto& st = self->state;
        input_step_msg step;
        if (!st.ready.empty()) {
          step = std::move(st.ready.front());
          st.ready.pop_front();
        } else {
          step = read_step(st);
        }
        step.step = pull.step;
        schedule_fill(self);
        return step;
      },
      [=](const input_fill_msg& fill) {
        auto& st = self->state;
        if (fill.generation != st.generation) return;
        st.fill_pending = false;
        if (!st.exhausted && !buffer_full(st)) st.ready.push_back(read_step(st));
        schedule_fill(self);
      },
      [=](const input_save_msg&) -> input_state_msg { return save_state(self->state); },
      [=](const input_restore_msg& msg) -> input_state_msg {
        auto reply = restore_state(self->state, msg.state);
        schedule_fill(self);
        return reply;
      },
  };
}

}  // namespace

caf::actor spawn_dataset_iterator(caf::actor_system& system, const data::Dataset& dataset,
                                  DatasetIteratorOptions options) {
  if (options.replicas < 1)
    throw invalid_argument("dataset_iterator: replicas must be >= 1, got " +
                           std::to_string(options.replicas));
  if (options.buffer_steps < 1)
    throw invalid_argument("dataset_iterator: buffer size must be >= 1, got " +
                           std::to_string(options.buffer_steps));
  // Made on the caller's thread so that a pipeline that cannot start fails right here.
  auto iterator = std::make_shared<data::Iterator>(dataset.make_iterator());
  return system.spawn(dataset_iterator, std::move(iterator), options);
}

}  // namespace troupe
