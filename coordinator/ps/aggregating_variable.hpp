#pragma once
// AggregatingVariable (spec variables.md R-AGG, cluster-and-ps.md R-PS-WRAP): a variable that
// lives once — on a parameter-server shard — while a worker runs several replicas. Replica-context
// updates meet in merge_call, are aggregated (SUM, MEAN, ONLY_FIRST_REPLICA) and reach the
// variable as one update per step; NONE is refused there, since the replicas' updates could not
// be combined. Cross-replica updates go straight to the variable.

#include <memory>
#include <string>

#include "coordinator/variable_storage.hpp"
#include "core/aggregation.hpp"

namespace troupe {

class Strategy;

/// One-copy variable shared by the replicas of a strategy, aggregating their updates.
class AggregatingVariable {
 public:
  /// `inner` must hold exactly one copy (invalid_argument naming it otherwise).
  AggregatingVariable(Strategy& strategy, std::shared_ptr<VariableStorage> inner,
                      Aggregation aggregation);

  const std::string& name() const { return inner_->name(); }
  Aggregation aggregation() const { return aggregation_; }
  /// The wrapped variable (TF's get()).
  VariableStorage& get() const { return *inner_; }
  /// The current value of the wrapped variable.
  Tensor value() const { return inner_->read(0); }

  void assign(const Tensor& x) { update(VariableWrite::assign, x); }
  void assign_add(const Tensor& x) { update(VariableWrite::add, x); }
  void assign_sub(const Tensor& x) { update(VariableWrite::sub, x); }

 private:
  void update(VariableWrite kind, const Tensor& x);

  Strategy* strategy_;
  std::shared_ptr<VariableStorage> inner_;
  Aggregation aggregation_;
};

}  // namespace troupe
