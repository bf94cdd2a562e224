#pragma once
// The merge_call rounds of one replica group, decided in shared memory by the replica threads
// themselves: an arriving replica (or one that ends its step) takes the group's lock and asks
// core/merge_barrier, so the exact errors of unequal calls, tag mismatches and failures stay
// where they were decided before. The replica that completes a round runs the merge on its own
// thread and answers the others: no actor message lies on the path of a round (it cost 33-52 us
// of each with 4 replicas). The barrier actor only times rounds: it is told when a round opens
// while no timer runs, and its timer re-arms itself while rounds keep opening.

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/handoff.hpp"
#include "core/merge_barrier.hpp"
#include "core/status.hpp"
#include "core/tensor.hpp"

namespace troupe {

/// Runs a merge function once: takes every replica's arguments (outer index = replica) and
/// returns every replica's results (outer index = replica).
using MergeRunner =
    std::function<std::vector<std::vector<Tensor>>(std::vector<std::vector<Tensor>> by_replica)>;

/// What a replica parked at merge_call gets back, for the round (step, call) it answers: the
/// replica takes only the answer of the round it waits in (a late answer of a round it gave up
/// on must not be taken for the next one).
struct MergeOutcome {
  std::vector<Tensor> values;
  Status status;
  uint64_t step = 0;
  uint32_t call = 0;
};

/// Where one replica parks in a merge_call round and its answer arrives.
struct MergeSlot {
  Handoff<MergeOutcome> reply;  ///< the replica completing the round (or an error) puts

  /// Waits until `deadline` for the answer of round (step, call) and takes it; answers of
  /// other rounds (late ones, of a round whose wait timed out) are dropped. nullopt on timeout.
  std::optional<MergeOutcome> take_answer(uint64_t step, uint32_t call,
                                          std::chrono::steady_clock::time_point deadline);
  /// Answers the round this replica waits in (if any), and every later one, with `why`.
  void fail_waiting(const Status& why);

 private:
  std::mutex waiting_mutex;
  std::optional<std::pair<uint64_t, uint32_t>> waiting;  // the round being waited for
  std::optional<Status> failed;                          // the group failed: answer at once
};

/// What an arrival leaves to the arriving replica's thread.
struct MergeTurn {
  /// The arrival completed the round: run `runner` (replica 0's merge function) on `args`
  /// and answer `replicas` (the caller among them) for round (step, call).
  bool run_merge = false;
  MergeRunner runner;
  std::vector<std::vector<Tensor>> args;  ///< by replica
  std::vector<int> replicas;
  /// A round opened while no timer runs: the caller tells the barrier actor to time it.
  bool arm_timer = false;
};

/// The merge_call rounds of a group of `replicas`; every member is called from any thread.
class MergeRounds {
 public:
  MergeRounds(std::vector<MergeSlot>& slots, std::chrono::milliseconds timeout);

  /// Replica `replica` arrives at merge_call `call` of `step` with `tag`, its arguments and its
  /// merge function (replica 0's is the one that runs). An error for a parked replica goes to
  /// its slot; the caller then waits in its slot unless the turn says it runs the merge.
  MergeTurn arrive(int replica, uint64_t step, uint32_t call, const std::string& tag,
                   std::vector<Tensor> args, MergeRunner runner);
  /// Replica `replica` returned from `step` after `merge_calls` merge_calls.
  void finished(int replica, uint64_t step, uint32_t merge_calls);
  /// Replica `replica` threw from `step`.
  void failed(int replica, uint64_t step, const std::string& what);
  /// The barrier's timer fired (or a replica asked for one): fails the open round when it has
  /// waited the whole timeout. Returns when the timer must fire next; nullopt when no round
  /// opened since the last firing (the next round to open asks again).
  std::optional<std::chrono::steady_clock::duration> timer_fired();

 private:
  void apply(MergeBarrier::Decision d);  // under mutex_: delivers a fail decision
  void answer(int replica, MergeOutcome outcome);

  std::vector<MergeSlot>& slots_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  MergeBarrier logic_;
  std::vector<std::vector<Tensor>> args_;  // per replica, for the open round
  MergeRunner zero_runner_;                // replica 0's merge function for the open round
  // Per replica, the round (step, call) it last arrived at: every answer names it, and the
  // replica takes only the answer of the round it waits in.
  std::vector<std::pair<uint64_t, uint32_t>> arrived_round_;
  std::chrono::steady_clock::time_point opened_;  // when the open round opened
  uint64_t rounds_opened_ = 0, rounds_opened_at_last_firing_ = 0;
  bool timer_pending_ = false;
};

}  // namespace troupe
