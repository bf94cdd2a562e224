#pragma once
// `troupe run` of an experiment whose strategy is parameter_server: an in-process cluster —
// strategy.num_ps ps_shard actors and strategy.workers worker actors in this process — trained
// through a ClusterCoordinator (coordinator/ps/cluster_coordinator.hpp, train/ps_trainer.hpp).
// One run step is one closure per worker, each on its own share of data.global_batch
// (global_batch / workers examples from that worker's pipeline); async mode applies every
// closure's gradients, sync mode averages replicas_to_aggregate of them per update. Progress,
// metrics.csv, TensorBoard events and checkpoints are written as for the other strategies.

#include <caf/fwd.hpp>

#include "coordinator/ps/parameter_server_strategy.hpp"
#include "experiment/run/experiment_runner.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe {

/// Runs `experiment` (strategy.kind parameter_server). Checkpoints (every
/// train.checkpoint_every steps and at the end) hold every variable and slot pulled from the
/// shards and optimizer/iterations. Throws unimplemented naming what this run cannot do yet:
/// --resume, a timeline, train.on_nan other than stop, steps_per_execution, another train.step,
/// or running as one worker of a `troupe server` cluster.
RunSummary run_ps_experiment(caf::actor_system& system, const proto::Experiment& experiment,
                             const RunOptions& options);

/// The ParameterServerStrategy options of the strategy section (partitioner, placement).
ParameterServerStrategyOptions make_ps_strategy_options(const proto::ParameterServerSpec& spec);

}  // namespace troupe
