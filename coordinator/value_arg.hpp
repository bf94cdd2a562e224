#pragma once
// An argument handed to Strategy::run or StrategyExtended::update: the same tensor for every
// replica, or a distributed value that each replica (component) takes its own part of
// (select_replica in TensorFlow's terms).

#include <optional>

#include "coordinator/distributed_values.hpp"

namespace troupe {

/// A tensor or a distributed value.
class ValueArg {
 public:
  ValueArg(Tensor tensor) : tensor_(std::move(tensor)) {}                // NOLINT: implicit
  ValueArg(DistributedValues value) : distributed_(std::move(value)) {}  // NOLINT: implicit
  ValueArg(PerReplica value) : distributed_(std::move(value)) {}         // NOLINT: implicit
  ValueArg(Mirrored value) : distributed_(std::move(value)) {}           // NOLINT: implicit

  bool is_distributed() const { return distributed_.has_value(); }
  const DistributedValues& distributed() const { return *distributed_; }
  const Tensor& tensor() const { return tensor_; }
  /// Replica r's view: component r of a distributed value (which must have n components),
  /// else the tensor itself.
  Tensor for_replica(size_t r, size_t n) const;

 private:
  Tensor tensor_;
  std::optional<DistributedValues> distributed_;
};

}  // namespace troupe
