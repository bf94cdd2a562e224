#pragma once
// The step id of the step the calling thread is running (0 = none). A ClusterCoordinator worker
// runs one step at a time on its thread and sets it around the step function, so every update
// the step sends to a ps shard carries the step's id — the same id on a rescheduled attempt —
// and the shards apply it exactly once. Variables are shared by every worker of the process, so
// the id cannot live in the variable.

#include <cstdint>

namespace troupe {

/// The calling thread's current step id (0 outside any ScopedStepId).
inline uint64_t& current_step_id() {
  thread_local uint64_t id = 0;
  return id;
}

/// `explicit_id` when set, else the calling thread's current step id.
inline uint64_t effective_step_id(uint64_t explicit_id) {
  return explicit_id != 0 ? explicit_id : current_step_id();
}

/// Sets the calling thread's step id for its lifetime, restoring the previous one after.
class ScopedStepId {
 public:
  explicit ScopedStepId(uint64_t id) : previous_(current_step_id()) { current_step_id() = id; }
  ~ScopedStepId() { current_step_id() = previous_; }
  ScopedStepId(const ScopedStepId&) = delete;
  ScopedStepId& operator=(const ScopedStepId&) = delete;

 private:
  uint64_t previous_;
};

}  // namespace troupe
