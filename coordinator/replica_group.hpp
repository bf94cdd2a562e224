#pragma once
// A group of replica threads (one per device) and the worker actor that supervises their
// merge_call barrier and collective peers, in this process.
// run() sends every replica its step, then collects one result or error from each: a failure
// anywhere becomes one troupe::Error that names the replica(s), never a hang. A replica that
// misses the step timeout cannot be stopped (it is a thread inside user code): the group then
// refuses further steps, and its destructor waits for that replica to end before returning,
// so no task outlives the strategy it refers to.

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "actors/replica_group_shared.hpp"
#include "actors/worker.hpp"

namespace troupe {

/// Options of a replica group.
struct ReplicaGroupOptions {
  std::chrono::milliseconds merge_timeout{std::chrono::seconds(60)};  ///< per merge_call round
  std::chrono::milliseconds step_timeout{std::chrono::minutes(10)};   ///< per run() call
  bool flush_denormals = true;  ///< replica threads flush subnormal floats (core/float_mode.hpp)
};

/// N replica threads plus their worker.
class ReplicaGroup {
 public:
  ReplicaGroup(caf::actor_system& system, int replicas, ReplicaGroupOptions options = {});
  ~ReplicaGroup();
  ReplicaGroup(const ReplicaGroup&) = delete;
  ReplicaGroup& operator=(const ReplicaGroup&) = delete;

  int size() const { return int(replicas_.size()); }
  /// Runs `task` on every replica (replica r gets args[r]); returns outputs by replica. After a
  /// step timeout the group is unusable: this and every later run() throw failed_precondition.
  std::vector<std::vector<Tensor>> run(ReplicaTask task, std::vector<std::vector<Tensor>> args);
  /// Why the group cannot run steps any more (a step timed out, naming the slow replicas);
  /// empty while it can.
  const std::string& unusable_reason() const { return unusable_; }
  /// Blocks until no replica runs a task, a timed-out one included.
  void wait_idle();
  /// The worker and the actors it supervises (the barrier, the collective peers).
  const WorkerActors& actors() const { return actors_; }

 private:
  caf::actor_system& system_;
  ReplicaGroupOptions options_;
  std::shared_ptr<ReplicaGroupShared> shared_;
  WorkerActors actors_;                // the worker and the barrier and peers it supervises
  std::vector<std::thread> replicas_;  // one thread per replica, joined by the destructor
  uint64_t step_ = 0;
  std::string unusable_;  // set once a step timed out
};

}  // namespace troupe
