#pragma once
// The bookkeeping of merge_call, without I/O: which replicas have arrived at which
// (step, call index, tag), when a round is complete, and — the point of it — the exact error when
// replicas disagree, fail, finish early or never arrive. The barrier actor only routes messages
// and runs the merge; every decision is made (and unit-tested) here. Spec: mirrored.md §2.9, §2.14.

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace troupe {

/// Decisions of a merge_call barrier over `n` replicas.
class MergeBarrier {
 public:
  enum class Action {
    wait,       ///< nothing to do until more replicas report
    run_merge,  ///< every replica arrived: run the merge once, reply to `replicas`
    fail,       ///< deliver `error` to `replicas` (the ones parked at the barrier)
  };
  struct Decision {
    Action action = Action::wait;
    std::vector<int> replicas;
    std::string error;
    Code code = Code::aborted;  ///< deadline_exceeded for timeouts
  };

  explicit MergeBarrier(int replicas);

  /// Replica `replica` reached merge_call number `call` (0-based) of `step` with `tag`.
  Decision arrive(int replica, uint64_t step, uint32_t call, const std::string& tag);
  /// Replica `replica` returned from the step function after `merge_calls` merge_calls.
  Decision finished(int replica, uint64_t step, uint32_t merge_calls);
  /// Replica `replica` threw from the step function.
  Decision failed(int replica, uint64_t step, const std::string& what);
  /// The timer armed when round (step, call) opened fired after `waited_ms`.
  Decision timeout(uint64_t step, uint32_t call, int64_t waited_ms);

  /// True while some replica is parked (a timer for the round should be running).
  bool round_open() const { return !waiting_.empty(); }
  uint64_t step() const { return step_; }
  uint32_t call() const { return call_; }

 private:
  void start_step(uint64_t step);
  Decision fail_waiting(std::string error, int also = -1, Code code = Code::aborted);
  std::string describe_round() const;

  int n_;
  uint64_t step_ = 0;
  bool step_started_ = false;
  uint32_t call_ = 0;  // call index of the open (or next) round
  std::string tag_;
  std::vector<int> waiting_;         // replicas parked in the open round, arrival order
  std::vector<int> finished_calls_;  // per replica: merge_calls when it finished, -1 if running
  std::string step_error_;           // set once the step failed: later arrivals fail fast
};

}  // namespace troupe
