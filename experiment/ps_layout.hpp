#pragma once
// Where the parameter_server strategy of an experiment puts each variable, worked out without
// starting a cluster: the same partitioner, placement and creation order as
// ParameterServerStrategy (model variables in order, then the optimizer's slots, each beside its
// variable), so `troupe plan` shows what `troupe run` creates.

#include <vector>

#include "core/ps/partitioners.hpp"
#include "experiment/plan.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe::experiment {

/// The partitioner strategy.partitioner names (empty function: none).
Partitioner make_experiment_partitioner(const proto::PartitionerSpec& spec);

/// `variables` (the model's, in creation order) with their parts, followed by the optimizer's
/// slot variables `<name>/<slot>` placed beside them.
std::vector<PlannedVariable> plan_ps_variables(const proto::Experiment& experiment,
                                               std::vector<PlannedVariable> variables);

}  // namespace troupe::experiment
