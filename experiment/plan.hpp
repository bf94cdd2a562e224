#pragma once
// What an experiment will do, worked out without training: replicas and their devices, how each
// input worker splits the global batch, and every variable the model creates with its size and
// per-replica components. Printed by `troupe plan`.

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "experiment/memory_estimate.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe::experiment {

/// One replica of the strategy and its canonical device string.
struct PlannedReplica {
  int id = 0;
  std::string device;
};

/// One input worker and the per-replica batch sizes it produces each step.
struct PlannedInputWorker {
  int id = 0;
  std::vector<int64_t> per_replica_batch_sizes;
  int64_t batch_size = 0;  ///< sum of per_replica_batch_sizes
  int64_t prefetch = 1;    ///< steps this worker produces ahead of the training loop
};

/// One copy of a variable on one replica's device.
struct PlannedComponent {
  std::string name;  ///< `<name>` on replica 0, `<name>/replica_<i>` on replica i
  std::string device;
};

/// One part of a variable on a ps task (strategy parameter_server); a variable the partitioner
/// does not split is one part named like it.
struct PlannedPart {
  std::string name;  ///< `<name>/part_<i>` when split, else `<name>`
  Shape shape;
  std::vector<int64_t> offset;  ///< first element of the part in the whole variable
  int64_t task = 0;             ///< ps task index
  std::string device;           ///< "/job:ps/replica:0/task:<k>/device:CPU:0"
};

/// A model variable: its full-size layout and where its copies live.
struct PlannedVariable {
  std::string name;
  DType dtype = DType::float32;
  Shape shape;
  int64_t bytes = 0;  ///< bytes of one copy
  std::vector<PlannedComponent> components;
  std::vector<PlannedPart> parts;  ///< parameter_server: the parts on the ps tasks
  std::string colocated_with;      ///< parameter_server: an optimizer slot's variable
};

/// The whole plan of one experiment.
struct ExperimentPlan {
  std::string name;
  std::string strategy;          ///< "mirrored", "one_device", "default"
  std::string cross_device_ops;  ///< "" when the strategy does not reduce across devices
  int64_t global_batch = 0;
  int64_t steps_per_execution = 0;  ///< training steps per strategy.run (after the default)
  std::string distribute;           ///< "dataset" or "from_function" (data.distribute)
  std::string on_nan;               ///< train.on_nan: "stop", "skip_step" or "ignore"
  bool flush_denormals = true;      ///< train.flush_denormals (core/float_mode.hpp)
  std::vector<PlannedReplica> replicas;
  std::vector<PlannedInputWorker> input_workers;
  std::vector<PlannedVariable> variables;
  int64_t parameters = 0;        ///< elements of all variables (one copy each)
  int64_t variable_bytes = 0;    ///< bytes of all variables (one copy each)
  MemoryEstimate memory;         ///< what the run needs (estimate_memory)
  int64_t available_memory = 0;  ///< what this machine has (available_memory_bytes; 0: unknown)
};

/// Variables (name, dtype, shape) the model section creates, in creation order.
std::vector<PlannedVariable> model_variables(const proto::ModelSpec& model);

/// Plans an experiment (already validated by parse_experiment).
ExperimentPlan make_plan(const proto::Experiment& experiment);

/// One-line JSON: {"name":..., "steps_per_execution":..., "replicas":[...], "input_workers":[...],
/// "variables":[...], ...}.
std::string plan_to_json(const ExperimentPlan& plan);
/// Human-readable tables of the same content.
std::string plan_to_table(const ExperimentPlan& plan);

}  // namespace troupe::experiment
