#include "coordinator/ps/aggregating_variable.hpp"

#include "coordinator/context.hpp"
#include "coordinator/distributed_values.hpp"
#include "coordinator/replica_context.hpp"
#include "coordinator/strategy.hpp"
#include "kernels/ops.hpp"

namespace troupe {

AggregatingVariable::AggregatingVariable(Strategy& strategy, std::shared_ptr<VariableStorage> inner,
                                         Aggregation aggregation)
    : strategy_(&strategy), inner_(std::move(inner)), aggregation_(aggregation) {
  if (!inner_) throw invalid_argument("AggregatingVariable needs a variable to wrap");
  if (inner_->copies() != 1)
    throw invalid_argument("AggregatingVariable wraps a variable that lives once; '" +
                           inner_->name() + "' has " + std::to_string(inner_->copies()) +
                           " copies");
}

void AggregatingVariable::update(VariableWrite kind, const Tensor& x) {
  ReplicaContext* ctx = get_replica_context();
  if (!ctx) return inner_->write(0, kind, {x});  // cross-replica: no aggregation
  if (aggregation_ == Aggregation::none)
    throw invalid_argument(
        "AggregatingVariable '" + name() +
        "' cannot be updated in replica context with aggregation NONE: the replicas' updates "
        "cannot be combined into one. Create it with aggregation SUM, MEAN or "
        "ONLY_FIRST_REPLICA, or update it in cross-replica context (merge_call or "
        "extended().update)");
  auto inner = inner_;
  const Aggregation agg = aggregation_;
  ctx->merge_call(
      [inner, kind, agg](Strategy& s, const std::vector<PerReplica>& merged) {
        const auto& values = merged.at(0).values();
        Tensor aggregated = values.at(0);
        if (agg != Aggregation::only_first_replica) {
          Ops ops(*s.kernels());
          aggregated = Tensor(values[0].dtype(), values[0].shape());
          ops.sum_n(values, aggregated);
          if (agg == Aggregation::mean)
            ops.scale(aggregated, 1.0 / double(values.size()), aggregated);
        }
        inner->write(0, kind, {aggregated});  // one update per step
        return std::vector<DistributedValues>{};
      },
      {x}, "aggregate/" + name());
}

}  // namespace troupe
