#pragma once
// `troupe run` of an experiment whose strategy is parameter_server: an in-process cluster —
// strategy.num_ps ps_shard actors and strategy.workers worker actors in this process — trained
// through a ClusterCoordinator (coordinator/ps/cluster_coordinator.hpp, train/ps_trainer.hpp).
// One run step is one closure per worker, each on its own share of data.global_batch
// (global_batch / workers examples from that worker's pipeline); async mode applies every
// closure's gradients, sync mode averages replicas_to_aggregate of them per update. Progress,
// metrics.csv, TensorBoard events and checkpoints are written as for the other strategies.

#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "coordinator/ps/cluster_coordinator.hpp"
#include "coordinator/ps/parameter_server_strategy.hpp"
#include "experiment/run/experiment_runner.hpp"
#include "messages/proto/experiment.pb.h"
#include "train/ps_trainer.hpp"

namespace troupe {

/// The processes of a parameter_server run across processes, as its coordinator sees them.
struct PsRemoteCluster {
  std::vector<caf::actor> shards;   ///< ps task k's shard, in task order
  std::vector<caf::actor> workers;  ///< worker w's step host (experiment/run/ps_worker_host.hpp)
};

/// Runs `experiment` (strategy.kind parameter_server). Checkpoints (every
/// train.checkpoint_every steps and at the end) hold every variable and slot pulled from the
/// shards and optimizer/iterations. Throws unimplemented naming what this run cannot do yet:
/// --resume, a timeline, train.on_nan other than stop, steps_per_execution, another train.step,
/// or running as one worker of a multi_worker_mirrored `troupe server` cluster. With
/// `options.ps_cluster` the variables are created on its shards and the steps run on its
/// workers (whose count must match strategy.num_ps and strategy.workers); the run ends by
/// counting the steps applied at the shards.
RunSummary run_ps_experiment(caf::actor_system& system, const proto::Experiment& experiment,
                             const RunOptions& options);

/// The ParameterServerStrategy options of the strategy section (partitioner, placement).
ParameterServerStrategyOptions make_ps_strategy_options(const proto::ParameterServerSpec& spec);

/// Worker `worker`'s iterator over its shard of the training data: global_batch / workers
/// examples per element, {features, labels}; out_of_range at the end.
ElementFn make_ps_worker_input(const proto::Experiment& experiment, int worker);

/// The training options of the strategy section (mode, replicas_to_aggregate, ...).
PsTrainingOptions make_ps_training_options(const proto::ParameterServerSpec& spec);

}  // namespace troupe
