#include "coordinator/replica_group.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "actors/barrier.hpp"
#include "actors/collective_peer.hpp"
#include "actors/replica.hpp"
#include "messages/collective_messages.hpp"
#include "messages/replica_messages.hpp"

namespace troupe {

ReplicaGroup::ReplicaGroup(caf::actor_system& system, int replicas, ReplicaGroupOptions options)
    : system_(system),
      options_(options),
      shared_(std::make_shared<ReplicaGroupShared>(replicas, options.merge_timeout)) {
  if (replicas < 1) throw invalid_argument("a replica group needs at least one replica");
  barrier_ = spawn_barrier(system_, shared_);
  for (int r = 0; r < replicas; ++r) peers_.push_back(spawn_collective_peer(system_));
  for (int r = 0; r < replicas; ++r) {
    caf::anon_send(peers_[size_t(r)], collective_peers_msg{r, peers_});
    replicas_.push_back(spawn_replica(system_, r, shared_, barrier_, peers_[size_t(r)]));
  }
}

ReplicaGroup::~ReplicaGroup() {
  // Explicit exits: CAF 0.17's actor_system destructor waits for every actor, and a detached
  // replica blocked in receive would otherwise keep it waiting forever.
  for (auto& r : replicas_) caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(barrier_, caf::exit_reason::user_shutdown);
  // Peers hold each other's handles: without explicit exits they would keep each other alive.
  for (auto& p : peers_) caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

std::vector<std::vector<Tensor>> ReplicaGroup::run(ReplicaTask task,
                                                   std::vector<std::vector<Tensor>> args) {
  const int n = size();
  if (int(args.size()) != n)
    throw invalid_argument("run: " + std::to_string(args.size()) + " argument lists for " +
                           std::to_string(n) + " replicas");
  uint64_t id = shared_->add_task(std::move(task));
  uint64_t step = ++step_;
  caf::scoped_actor self{system_};
  for (int r = 0; r < n; ++r)
    self->send(replicas_[size_t(r)], run_step_msg{step, id, std::move(args[size_t(r)])});

  std::vector<std::vector<Tensor>> outputs(static_cast<size_t>(n));
  std::vector<bool> reported(static_cast<size_t>(n), false);
  std::vector<step_error_msg> errors;
  bool timed_out = false;
  int received = 0;
  self->receive_while([&] { return received < n && !timed_out; })(
      [&](step_result_msg& m) {
        if (m.step != step) return;  // a late answer of an earlier, timed-out step
        outputs[size_t(m.replica)] = std::move(m.outputs);
        reported[size_t(m.replica)] = true;
        ++received;
      },
      [&](step_error_msg& m) {
        if (m.step != step) return;
        reported[size_t(m.replica)] = true;
        errors.push_back(std::move(m));
        ++received;
      },
      caf::after(options_.step_timeout) >> [&] { timed_out = true; });
  shared_->remove_task(id);

  if (timed_out) {
    std::string missing;
    for (int r = 0; r < n; ++r)
      if (!reported[size_t(r)]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    throw deadline_exceeded("step " + std::to_string(step) + ": replica(s) [" + missing +
                            "] did not finish within " +
                            std::to_string(options_.step_timeout.count()) + " ms");
  }
  if (!errors.empty()) {
    // Report the root cause first: errors that merely echo another replica's failure are
    // 'aborted'; the replica that actually threw carries its own code.
    std::stable_sort(errors.begin(), errors.end(), [](const auto& a, const auto& b) {
      return (a.code != int32_t(Code::aborted)) > (b.code != int32_t(Code::aborted));
    });
    const auto& root = errors.front();
    std::vector<int32_t> others;
    for (size_t i = 1; i < errors.size(); ++i) others.push_back(errors[i].replica);
    std::sort(others.begin(), others.end());
    std::string message = "step " + std::to_string(step) + " failed on replica " +
                          std::to_string(root.replica) + ": " + root.message;
    if (!others.empty()) {
      message += " (replica(s) [";
      for (size_t i = 0; i < others.size(); ++i)
        message += (i ? ", " : "") + std::to_string(others[i]);
      message += "] failed too)";
    }
    throw Error(Code(root.code), message);
  }
  return outputs;
}

}  // namespace troupe
