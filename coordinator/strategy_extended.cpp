#include "coordinator/strategy_extended.hpp"

#include "coordinator/context.hpp"
#include "coordinator/distributed_variable.hpp"
#include "coordinator/strategy.hpp"
#include "core/device_spec.hpp"

namespace troupe {

// ---- Destinations -------------------------------------------------------------------------------

Destinations::Destinations(const char* device) : Destinations(std::string(device)) {}
Destinations::Destinations(std::string device) : devices{canonicalize(device)} {}
Destinations::Destinations(std::vector<std::string> list) {
  for (auto& d : list) devices.push_back(canonicalize(d));
}
Destinations::Destinations(const DistributedValues& value) : devices(value.devices()) {
  if (devices.empty()) throw invalid_argument("destinations: the value has no devices");
}
Destinations::Destinations(const DistributedVariable& variable) : devices(variable.devices()) {}

// ---- StrategyExtended ---------------------------------------------------------------------------

StrategyExtended::StrategyExtended(Strategy& strategy, std::vector<std::string> devices,
                                   std::unique_ptr<CrossDeviceOps> cross_device_ops)
    : strategy_(strategy),
      devices_(std::move(devices)),
      cross_device_ops_(std::move(cross_device_ops)) {
  if (devices_.empty()) throw invalid_argument("a strategy needs at least one device");
  host_device_ = canonicalize("/device:CPU:0", devices_[0]);
}

void StrategyExtended::require_cross_replica(const char* api) const {
  if (get_replica_context())
    throw failed_precondition(std::string(api) +
                              " may only be called in cross-replica context (inside a merge_call "
                              "or outside run()), not in a replica function");
}

Mirrored StrategyExtended::reduce_to(ReduceOp op, const ValueArg& value,
                                     const Destinations& destinations) {
  require_cross_replica("reduce_to");
  const int n = strategy_.num_replicas_in_sync();
  if (!value.is_distributed()) {
    // reduce_non_distributed_value (spec §2.10): identical copies cannot be summed meaningfully.
    if (op == ReduceOp::sum && n > 1)
      throw invalid_argument("a non-distributed value can not be reduced with SUM across " +
                             std::to_string(n) + " replicas (it would count each copy)");
    return cross_device_ops_->broadcast(value.tensor(), destinations.devices);
  }
  const auto& dv = value.distributed();
  if (dv.is_mirrored() && op == ReduceOp::mean) return Mirrored(dv.values(), dv.devices());
  return cross_device_ops_->reduce(op, dv, destinations.devices);
}

std::vector<Mirrored> StrategyExtended::batch_reduce_to(
    ReduceOp op, const std::vector<std::pair<ValueArg, Destinations>>& pairs) {
  require_cross_replica("batch_reduce_to");
  std::vector<ReducePair> distributed;
  for (auto& [value, destinations] : pairs) {
    if (!value.is_distributed() || (value.distributed().is_mirrored() && op == ReduceOp::mean)) {
      // Per-value shortcuts keep their own semantics; only true reductions are fused.
      std::vector<Mirrored> out;
      for (auto& [v, d] : pairs) out.push_back(reduce_to(op, v, d));
      return out;
    }
    distributed.push_back({value.distributed(), destinations.devices});
  }
  return cross_device_ops_->batch_reduce(op, distributed);
}

std::vector<Mirrored> StrategyExtended::batch_all_reduce(ReduceOp op,
                                                         const std::vector<PerReplica>& values) {
  std::vector<ReducePair> pairs;
  for (auto& v : values) pairs.push_back({v, v.devices()});
  return cross_device_ops_->batch_reduce(op, pairs);
}

std::vector<Tensor> StrategyExtended::update(DistributedVariable& var, const UpdateFn& fn,
                                             const std::vector<ValueArg>& args, bool group) {
  if (ReplicaContext* replica = get_replica_context()) {
    // _replica_ctx_update: merge the arguments; identical ones collapse, differing ones stay
    // PerReplica and are rejected below, as upstream.
    std::vector<Tensor> mine;
    for (auto& a : args) {
      if (a.is_distributed())
        throw invalid_argument("update: distributed values can not be passed in replica context");
      mine.push_back(a.tensor());
    }
    auto results = replica->merge_call(
        [&var, fn, group](Strategy& s, const std::vector<PerReplica>& merged) {
          std::vector<ValueArg> collapsed;
          for (auto& pr : merged) {
            bool same = true;
            for (auto& t : pr.values()) same = same && t.bitwise_equal(pr.primary());
            collapsed.push_back(same ? ValueArg(pr.primary()) : ValueArg(pr));
          }
          auto out = s.extended().update(var, fn, collapsed, group);
          return std::vector<DistributedValues>{PerReplica(out)};  // replica r gets result r
        },
        mine, "update/" + var.name());
    return results;
  }
  auto& components = var.components();
  const size_t n = components.size();
  for (auto& a : args)
    if (a.is_distributed() && !a.distributed().is_mirrored())
      throw invalid_argument("update of '" + var.name() +
                             "': PerReplica arguments are not allowed (" +
                             a.distributed().description() + ")");
  std::vector<Tensor> results;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Tensor> mine;
    for (auto& a : args) mine.push_back(a.for_replica(i, n));
    UpdateContextGuard in_update{static_cast<int>(i)};
    results.push_back(fn(components[i], mine));
  }
  (void)group;  // in-place updates complete before return: group=true and false behave alike
  return results;
}

}  // namespace troupe
