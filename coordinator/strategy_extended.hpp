#pragma once
// StrategyExtended (tf.distribute.StrategyExtended): the cross-replica building blocks that
// merge functions and optimizers use — reduce_to, batch_reduce_to, update.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/cross_device_ops.hpp"
#include "coordinator/value_arg.hpp"

namespace troupe {

class DistributedVariable;
class Strategy;
class Variable;

/// Where a reduction's result goes: devices named directly or taken from a value or variable.
struct Destinations {
  Destinations(const char* device);                   // NOLINT: implicit, like TF's strings
  Destinations(std::string device);                   // NOLINT
  Destinations(std::vector<std::string> devices);     // NOLINT
  Destinations(const DistributedValues& value);       // NOLINT
  Destinations(const DistributedVariable& variable);  // NOLINT (the variable is not modified)
  std::vector<std::string> devices;
};

/// The per-component function of update(): (component, its arguments) -> a result tensor
/// (return an undefined Tensor when there is nothing to return).
using UpdateFn = std::function<Tensor(Variable&, const std::vector<Tensor>&)>;

/// Lower-level API of a strategy.
class StrategyExtended {
 public:
  StrategyExtended(Strategy& strategy, std::vector<std::string> devices,
                   std::unique_ptr<CrossDeviceOps> cross_device_ops);

  /// Canonical devices, one per replica.
  const std::vector<std::string>& worker_devices() const { return devices_; }
  /// The host CPU device of this worker (where Strategy::reduce puts its result).
  const std::string& host_device() const { return host_device_; }
  CrossDeviceOps& cross_device_ops() { return *cross_device_ops_; }

  /// Reduces `value` to `destinations` (cross-replica or default context only; spec §2.10).
  Mirrored reduce_to(ReduceOp op, const ValueArg& value, const Destinations& destinations);
  /// Reduces every pair; fused where the cross-device op can (spec §2.11).
  std::vector<Mirrored> batch_reduce_to(
      ReduceOp op, const std::vector<std::pair<ValueArg, Destinations>>& pairs);
  /// All-reduce of per-replica values over their own devices (ReplicaContext::all_reduce).
  std::vector<Mirrored> batch_all_reduce(ReduceOp op, const std::vector<PerReplica>& values);
  /// Runs fn once per component of `var` in update context (spec §2.13); Mirrored args are
  /// unwrapped per component, PerReplica args are rejected. Returns per-component results, and
  /// only after every component was updated (group=true semantics).
  std::vector<Tensor> update(DistributedVariable& var, const UpdateFn& fn,
                             const std::vector<ValueArg>& args = {}, bool group = true);

 private:
  void require_cross_replica(const char* api) const;

  Strategy& strategy_;
  std::vector<std::string> devices_;
  std::string host_device_;
  std::unique_ptr<CrossDeviceOps> cross_device_ops_;
};

}  // namespace troupe
