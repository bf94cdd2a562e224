#pragma once
// Experiment files: the YAML a user writes for `troupe plan` / `troupe run`, parsed into
// troupe::proto::Experiment (messages/proto/experiment.proto). docs/experiments.md lists every
// key. Anything wrong — unknown keys, wrong types, missing required keys, out-of-range values,
// impossible combinations — is an invalid_argument naming the file, line:column and key path:
//   experiment.yaml:4:12: model.hidden[1]: expected a positive integer, got "abc"

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe {
class ModelRegistry;
}

namespace troupe::experiment {

/// Parses and validates YAML text; `source_name` is how errors name it. `train.step` must name a
/// step of `registry` (nullptr: ModelRegistry::with_builtins()).
proto::Experiment parse_experiment(std::string_view yaml_text,
                                   const std::string& source_name = "experiment.yaml",
                                   const ModelRegistry* registry = nullptr);

/// Reads and parses a file; errors name `path` (not_found when it cannot be read). Relative
/// `data.files` are resolved against the file's directory (so an experiment and its data move
/// together); `train.checkpoint_dir` stays relative to the working directory, like `--dir`.
proto::Experiment load_experiment(const std::string& path, const ModelRegistry* registry = nullptr);

/// The embedded demo: an MLP on synthetic MNIST-shaped data, mirrored over CPU:0 and CPU:1.
inline constexpr std::string_view kDefaultExperimentYaml = R"(# troupe's built-in demo experiment
name: mlp-demo
seed: 42
strategy:
  kind: mirrored
  devices: [CPU:0, CPU:1]
  cross_device_ops: {kind: ring, num_packs: 1}
model: {kind: mlp, input_dim: 784, hidden: [256], classes: 10}
data: {kind: synthetic_classification, examples: 60000, global_batch: 256}
optimizer: {kind: sgd, learning_rate: 0.1}
train: {steps: 1000, log_every: 50}
)";

/// kDefaultExperimentYaml parsed (source name "<default experiment>").
proto::Experiment default_experiment();

/// Steps between progress logs when train.log_every is not given.
inline constexpr int64_t kDefaultLogEvery = 50;

/// Training steps per strategy.run when train.steps_per_execution is not given.
inline constexpr int64_t kDefaultStepsPerExecution = 8;

/// data.prefetch as read while the data section is not yet resolved (not given).
inline constexpr int64_t kPrefetchAuto = -1;

/// The effective train.steps_per_execution (kDefaultStepsPerExecution when the proto holds 0).
inline int64_t steps_per_execution(const proto::TrainSpec& train) {
  return train.steps_per_execution() > 0 ? train.steps_per_execution() : kDefaultStepsPerExecution;
}

}  // namespace troupe::experiment
