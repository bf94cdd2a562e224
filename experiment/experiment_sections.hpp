#pragma once
// The per-section readers and cross-section checks behind parse_experiment (internal).

#include "experiment/source_map.hpp"
#include "experiment/yaml_fields.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe {
class ModelRegistry;
}

namespace troupe::experiment {

/// parse_experiment on an already loaded YAML tree (the compare section applies its variants'
/// overrides to the base tree and parses each result with this, so errors point into the file).
proto::Experiment parse_experiment_tree(const YAML::Node& root, const std::string& source_name,
                                        const ModelRegistry* registry);

/// strategy: kind, devices, cross_device_ops.
void read_strategy(const Field& field, SourceMap& source, proto::StrategySpec* out);
/// The parameter_server keys of the strategy mapping (num_ps, workers, partitioner, placement,
/// mode, replicas_to_aggregate, total_num_replicas, replication); another kind with any of them
/// is refused naming the key.
void read_parameter_server(const MapFields& strategy, SourceMap& source, proto::StrategySpec* out);
/// model: kind and the sizes that kind needs.
void read_model(const Field& field, SourceMap& source, proto::ModelSpec* out);
/// data: kind, sizes, files, features.
void read_data(const Field& field, SourceMap& source, proto::DataSpec* out);
/// optimizer: kind, learning_rate and that kind's hyper-parameters.
void read_optimizer(const Field& field, SourceMap& source, proto::OptimizerSpec* out);
/// train: steps, steps per execution, logging and checkpoint cadence, and the step function, one
/// of `step_names`.
void read_train(const Field& field, SourceMap& source, const std::vector<std::string>& step_names,
                proto::TrainSpec* out);

/// eval: the evaluator's data and batch, checked against the parsed model and training data
/// (eval_section.cpp); sets experiment->eval().
void read_eval(const Field& field, SourceMap& source, proto::Experiment* experiment);

/// Checks that need more than one section (devices vs cross_device_ops, model vs data, batch vs
/// replicas, checkpoint cadence vs directory); throws naming the key that has to change.
void check_experiment(const proto::Experiment& experiment, const SourceMap& source);

/// Number of replicas the strategy section asks for (after defaults).
int replica_count(const proto::StrategySpec& strategy);

/// Width of one input example the data section produces (0 when unknown, e.g. embedding ids).
int64_t data_input_dim(const proto::DataSpec& data);
/// Elements of one example of `feature` (1 for a scalar).
int64_t feature_elements(const proto::FeatureSpec& feature);

}  // namespace troupe::experiment
