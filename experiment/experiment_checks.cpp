// Checks that span sections of an experiment file; each error names the key to change.
#include "core/device_spec.hpp"
#include "experiment/experiment_sections.hpp"

namespace troupe::experiment {
namespace {

bool is_integer_dtype(const std::string& dtype) { return dtype == "int32" || dtype == "int64"; }

// What the runner feeds a model from file data: the label must be what the model's loss takes.
void check_file_label(const proto::Experiment& experiment, const SourceMap& source) {
  const auto& model = experiment.model();
  const auto& data = experiment.data();
  const auto& label = data.features().at(data.label());
  const int64_t label_width = feature_elements(label);
  if (model.kind() == "softmax" || model.kind() == "mlp") {
    if (!is_integer_dtype(label.dtype()) || label_width != 1)
      throw source.error("data.label", "a " + model.kind() +
                                           " classifier needs one int32/int64 class id per "
                                           "example, but label \"" +
                                           data.label() + "\" is " + label.dtype() + " with " +
                                           std::to_string(label_width) + " elements");
  } else if (model.kind() == "linear") {
    const int64_t units = model.units() > 0 ? model.units() : 1;
    if (label_width != units)
      throw source.error("model.units", "model.units " + std::to_string(units) +
                                            " needs a label of " + std::to_string(units) +
                                            " values per example, but label \"" + data.label() +
                                            "\" has " + std::to_string(label_width));
  } else if (model.kind() == "embedding") {
    if (data.features_size() != 2)
      throw source.error("data.features",
                         "the embedding model reads one (user, item) id feature besides the "
                         "label, got " +
                             std::to_string(data.features_size() - 1));
  }
}

// synthetic_ratings feeds (user, item) ids into the embedding model's tables: every id must
// have its row.
void check_ratings(const proto::Experiment& experiment, const SourceMap& source) {
  const auto& model = experiment.model();
  const auto& data = experiment.data();
  if (model.kind() != "embedding")
    throw source.error("data.kind", "synthetic_ratings needs the embedding model (model.kind is " +
                                        model.kind() + ")");
  if (data.users() > model.num_users())
    throw source.error("data.users", "data.users " + std::to_string(data.users()) +
                                         " makes user ids the table cannot hold (model.num_users " +
                                         std::to_string(model.num_users()) + ")");
  if (data.items() > model.num_items())
    throw source.error("data.items", "data.items " + std::to_string(data.items()) +
                                         " makes item ids the table cannot hold (model.num_items " +
                                         std::to_string(model.num_items()) + ")");
}

}  // namespace

int replica_count(const proto::StrategySpec& strategy) {
  return strategy.devices_size() > 0 ? strategy.devices_size() : 1;
}

void check_experiment(const proto::Experiment& experiment, const SourceMap& source) {
  const auto& strategy = experiment.strategy();
  const auto& model = experiment.model();
  const auto& data = experiment.data();
  if (strategy.cross_device_ops().kind() == "nccl") {
    for (int i = 0; i < strategy.devices_size(); ++i) {
      auto spec = DeviceSpec::parse(strategy.devices(i));
      if (spec.device_type.value_or("CPU") != "GPU")
        throw source.error("strategy.cross_device_ops.kind",
                           "nccl needs GPU devices, but devices[" + std::to_string(i) + "] is " +
                               strategy.devices(i) + " (use ring for CPU replicas)");
    }
  }
  int64_t replicas = replica_count(strategy);
  if (data.distribute() == "from_function" && data.global_batch() % replicas != 0)
    throw source.error("data.global_batch",
                       "distribute: from_function splits the batch evenly, but global_batch " +
                           std::to_string(data.global_batch()) + " is not divisible by " +
                           std::to_string(replicas) + " replicas");
  if (data.kind() == "synthetic_classification" && model.kind() == "linear")
    throw source.error("data.kind",
                       "synthetic_classification needs a softmax or mlp model "
                       "(model.kind is linear; use synthetic_regression)");
  if (data.kind() == "synthetic_regression" && (model.kind() == "softmax" || model.kind() == "mlp"))
    throw source.error("data.kind", "synthetic_regression needs a linear model (model.kind is " +
                                        model.kind() + ")");
  if (data.kind() == "synthetic_ratings") check_ratings(experiment, source);
  if (data.kind() == "tfrecord" || data.kind() == "csv") check_file_label(experiment, source);
  if (model.kind() == "embedding") return;  // ids index tables: no feature width to compare
  int64_t width = data_input_dim(data);
  if (width != 0 && width != model.input_dim())
    throw source.error("model.input_dim", "model.input_dim " + std::to_string(model.input_dim()) +
                                              " does not match the data's input width " +
                                              std::to_string(width));
  if (data.classes() != 0 && data.classes() != model.classes())
    throw source.error("model.classes", "model.classes " + std::to_string(model.classes()) +
                                            " does not match data.classes " +
                                            std::to_string(data.classes()));
}

}  // namespace troupe::experiment
