#pragma once
// A worker process of a parameter_server experiment across processes (TF2's worker task): it
// attaches to the variables and slots the coordinator created on the ps shards (the same
// partitioner and placement, in the same order, give the same parts on the same tasks),
// registers the experiment's train_step on a StepHost and makes its own per-worker dataset
// (worker w reads shard w of the data). Its step host actor runs the closures the coordinator
// sends, against this process's own connections to the shards.

#include <functional>
#include <memory>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "coordinator/ps/parameter_server_strategy.hpp"
#include "coordinator/ps/step_host.hpp"
#include "messages/proto/experiment.pb.h"
#include "train/ps_trainer.hpp"

namespace troupe {

class PsWorkerHost {
 public:
  /// Worker `worker` of `experiment` (strategy.kind parameter_server) over `ps_shards` (task
  /// order). Throws invalid_argument when the shard count is not strategy.num_ps or the index
  /// is not below strategy.workers.
  /// `prepare_client`: ParameterServerStrategyOptions::prepare_client of its strategy (a worker
  /// process registers the ps tasks' bulk connections there).
  PsWorkerHost(caf::actor_system& system, const proto::Experiment& experiment, int worker,
               std::vector<caf::actor> ps_shards,
               std::function<void(PsClient&)> prepare_client = {});
  /// Stops the step host actor and waits until it is gone (a step it runs uses the trainer).
  ~PsWorkerHost();
  PsWorkerHost(const PsWorkerHost&) = delete;
  PsWorkerHost& operator=(const PsWorkerHost&) = delete;

  /// The step host actor: what a coordinator sends closures to (publish it behind a gatekeeper
  /// for a coordinator in another process).
  const caf::actor& actor() const { return actor_; }
  /// The client its steps reach the shards with.
  const PsClient& ps_client() const { return *strategy_->client(); }

 private:
  caf::actor_system* system_;
  std::unique_ptr<ParameterServerStrategy> strategy_;
  std::shared_ptr<StepHost> host_;
  std::unique_ptr<PsTrainer> trainer_;
  caf::actor actor_;
};

}  // namespace troupe
