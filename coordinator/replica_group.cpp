#include "coordinator/replica_group.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "actors/replica.hpp"

namespace troupe {

ReplicaGroup::ReplicaGroup(caf::actor_system& system, int replicas, ReplicaGroupOptions options)
    : system_(system),
      options_(options),
      shared_(std::make_shared<ReplicaGroupShared>(replicas, options.merge_timeout)) {
  if (replicas < 1) throw invalid_argument("a replica group needs at least one replica");
  actors_ = spawn_worker(system_, shared_);
  try {
    for (int r = 0; r < replicas; ++r)
      replicas_.push_back(start_replica_thread(system_, r, shared_, actors_.barrier,
                                               actors_.peers[size_t(r)], options.flush_denormals));
  } catch (...) {
    shared_->steps.close();
    for (auto& t : replicas_) t.join();
    caf::anon_send_exit(actors_.worker, caf::exit_reason::user_shutdown);
    throw;
  }
}

ReplicaGroup::~ReplicaGroup() {
  // Closing the exchange ends every replica thread once it is idle; joining waits for a replica
  // still inside a step that timed out, whose task refers to the strategy being destroyed. The
  // worker (and with it the barrier) stays up meanwhile, so its merge_calls still get answers.
  shared_->steps.close();
  for (auto& t : replicas_) t.join();
  // CAF 0.17's actor_system destructor waits for every actor: the worker takes its barrier
  // and peers down with it.
  caf::anon_send_exit(actors_.worker, caf::exit_reason::user_shutdown);
}

void ReplicaGroup::wait_idle() { shared_->steps.wait_idle(); }

std::vector<std::vector<Tensor>> ReplicaGroup::run(ReplicaTask task,
                                                   std::vector<std::vector<Tensor>> args) {
  if (!unusable_.empty()) throw failed_precondition(unusable_);
  if (auto failure = shared_->group_failure(); !failure.empty())
    throw failed_precondition("the replica group cannot run another step: " + failure);
  const int n = size();
  if (int(args.size()) != n)
    throw invalid_argument("run: " + std::to_string(args.size()) + " argument lists for " +
                           std::to_string(n) + " replicas");
  uint64_t step = ++step_;
  auto shared_task = std::make_shared<const ReplicaTask>(std::move(task));
  shared_->steps.open(step);
  for (int r = 0; r < n; ++r)
    shared_->steps.post(r, StepOrder{step, shared_task, std::move(args[size_t(r)])});
  auto reports = shared_->steps.collect(options_.step_timeout);

  std::vector<std::vector<Tensor>> outputs(static_cast<size_t>(n));
  std::vector<std::pair<int, Status>> errors;  // (replica, error)
  std::string missing;
  for (int r = 0; r < n; ++r) {
    auto& report = reports[size_t(r)];
    if (!report)
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    else if (!report->status.ok())
      errors.emplace_back(r, std::move(report->status));
    else
      outputs[size_t(r)] = std::move(report->outputs);
  }
  if (!missing.empty()) {
    const std::string what = "step " + std::to_string(step) + ": replica(s) [" + missing +
                             "] did not finish within " +
                             std::to_string(options_.step_timeout.count()) + " ms";
    // The slow replicas still run this step and would take the next one late, if at all.
    unusable_ = "the replica group cannot run another step: " + what +
                " and may still be running it (destroy the strategy, which waits for them, and "
                "create a new one)";
    throw deadline_exceeded(what);
  }
  if (!errors.empty()) {
    // Report the root cause first: errors that merely echo another replica's failure are
    // 'aborted'; the replica that actually threw carries its own code.
    std::stable_sort(errors.begin(), errors.end(), [](const auto& a, const auto& b) {
      return (a.second.code() != Code::aborted) > (b.second.code() != Code::aborted);
    });
    const auto& [root_replica, root] = errors.front();
    std::vector<int> others;
    for (size_t i = 1; i < errors.size(); ++i) others.push_back(errors[i].first);
    std::sort(others.begin(), others.end());
    std::string message = "step " + std::to_string(step) + " failed on replica " +
                          std::to_string(root_replica) + ": " + root.message();
    if (!others.empty()) {
      message += " (replica(s) [";
      for (size_t i = 0; i < others.size(); ++i)
        message += (i ? ", " : "") + std::to_string(others[i]);
      message += "] failed too)";
    }
    throw Error(root.code(), message);
  }
  return outputs;
}

}  // namespace troupe
