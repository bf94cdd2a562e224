#pragma once
// Distributed variables (spec variables.md §1-2.8): one component Variable per replica, kept
// identical on write (MirroredVariable: sync ON_WRITE/AUTO) or aggregated on read
// (SyncOnReadVariable: ON_READ). Reads and writes look at the calling thread's context
// (replica, cross-replica, update) exactly as the spec's R-READ and R-UPD rules say.
// A DistributedVariable is a cheap handle; copies share the components.

#include <memory>
#include <string>
#include <vector>

#include "coordinator/distributed_values.hpp"
#include "coordinator/variable.hpp"
#include "coordinator/variable_options.hpp"

namespace troupe {

class Strategy;

/// A variable with one component per replica of its strategy.
class DistributedVariable {
 public:
  /// Used by Strategy::create_variable; validates sync and aggregation (spec R-CREATE-4/5).
  DistributedVariable(Strategy& strategy, std::vector<Variable> components, Sync sync,
                      Aggregation aggregation);

  /// Common name (component 0's name).
  const std::string& name() const;
  Sync sync() const { return state_->sync; }
  Aggregation aggregation() const { return state_->aggregation; }
  bool is_mirrored() const { return state_->sync == Sync::on_write; }
  DType dtype() const { return state_->components[0].dtype(); }
  const Shape& shape() const { return state_->components[0].shape(); }
  Strategy& strategy() const { return *state_->strategy; }
  std::vector<std::string> devices() const;

  /// Components in replica order (component i belongs to replica i).
  std::vector<Variable>& components() { return state_->components; }
  const std::vector<Variable>& components() const { return state_->components; }

  /// The value this context reads (R-READ-ONWRITE / R-READ-ONREAD).
  Tensor value() const;
  /// Every component's current value, as Mirrored (ON_WRITE) or PerReplica (ON_READ).
  DistributedValues values() const;

  void assign(const Tensor& x);
  void assign_add(const Tensor& x);
  void assign_sub(const Tensor& x);
  /// Cross-replica assign from a Mirrored value (component-wise); a PerReplica value, or any
  /// distributed value in replica context, is rejected (spec §2.6, T-UPD-4).
  void assign(const DistributedValues& x);
  void scatter_update(const Tensor& indices, const Tensor& rows);
  void scatter_add(const Tensor& indices, const Tensor& rows);
  void scatter_sub(const Tensor& indices, const Tensor& rows);

  /// What a checkpoint stores: the primary (ON_WRITE) or the aggregated value (ON_READ, R-SAVE-4).
  Tensor save_value() const;
  /// Restores every component from one saved tensor; ON_READ SUM divides by the replica count
  /// so the sum survives (R-SAVE-3/4).
  void restore(const Tensor& saved);

 private:
  enum class Write { assign, add, sub, scatter_update, scatter_add, scatter_sub };
  void write(Write kind, const std::vector<Tensor>& args);
  void write_replica(Write kind, const std::vector<Tensor>& args);
  void write_cross_replica(Write kind, const std::vector<Tensor>& args);
  void apply(Variable& component, Write kind, const std::vector<Tensor>& args) const;

  struct State {
    Strategy* strategy;
    std::vector<Variable> components;
    Sync sync;
    Aggregation aggregation;
  };
  std::shared_ptr<State> state_;
};

}  // namespace troupe
