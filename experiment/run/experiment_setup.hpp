#pragma once
// What `troupe run` builds from an experiment description: the strategy, the model and optimizer
// configurations (the input pipeline is experiment_input.hpp).

#include <memory>

#include <caf/fwd.hpp>

#include "coordinator/collectives/worker_collective.hpp"
#include "coordinator/strategy.hpp"
#include "messages/proto/experiment.pb.h"
#include "train/model.hpp"
#include "train/optimizer.hpp"

namespace troupe {

/// The strategy the experiment names (mirrored / multi_worker_mirrored / one_device / default)
/// with its cross-device op. `workers`: the cluster this process is a worker of (troupe server);
/// null runs every replica here. Only multi_worker_mirrored spans several workers: another kind
/// with more than one worker is refused, naming strategy.kind.
std::unique_ptr<Strategy> make_experiment_strategy(
    caf::actor_system& system, const proto::Experiment& experiment,
    std::shared_ptr<WorkerCollective> workers = nullptr);
/// The replica groups' options the experiment asks for: train.flush_denormals.
StrategyOptions make_strategy_options(const proto::Experiment& experiment);
/// Model factory input from the model (and data) sections.
ModelConfig make_model_config(const proto::Experiment& experiment);
/// Optimizer hyper-parameters from the optimizer section.
OptimizerConfig make_optimizer_config(const proto::OptimizerSpec& spec);

}  // namespace troupe
