#include "coordinator/ps/parameter_server_strategy.hpp"

#include "coordinator/colocation.hpp"
#include "coordinator/ps/parameter_server_storage.hpp"
#include "coordinator/ps/sharded_storage.hpp"
#include "core/device_spec.hpp"
#include "core/status.hpp"

namespace troupe {
namespace {

std::shared_ptr<PlacementPolicy> resolve_placement(const ParameterServerStrategyOptions& options,
                                                   int64_t num_ps) {
  if (!options.placement_policy) return make_placement(options.placement, num_ps);
  if (options.placement_policy->num_tasks() != num_ps)
    throw invalid_argument("ParameterServerStrategy: the placement policy spans " +
                           std::to_string(options.placement_policy->num_tasks()) +
                           " ps tasks, the cluster has " + std::to_string(num_ps));
  return options.placement_policy;
}

std::vector<caf::actor> checked_shards(std::vector<caf::actor> shards) {
  if (shards.empty())
    throw invalid_argument("ParameterServerStrategy needs at least one ps shard, got none");
  for (size_t k = 0; k < shards.size(); ++k)
    if (!shards[k])
      throw invalid_argument("ParameterServerStrategy: ps shard " + std::to_string(k) +
                             " is not a valid actor handle");
  return shards;
}

int64_t checked_replication(int64_t replication, size_t num_ps) {
  if (replication < 1 || replication > 2)
    throw invalid_argument("ParameterServerStrategy: replication " + std::to_string(replication) +
                           " is not supported (1: no backup, 2: a backup of every shard)");
  if (replication > int64_t(num_ps))
    throw invalid_argument("ParameterServerStrategy: replication " + std::to_string(replication) +
                           " needs at least as many ps tasks, the cluster has " +
                           std::to_string(num_ps) + " (num_ps)");
  return replication;
}

// The client of every storage; with replication 2 it has told each shard its backup, or, when
// it attaches to shards the coordinator set up, only learns the backups (so that its requests
// fail over) and leaves the shards as they are.
std::shared_ptr<const PsClient> make_client(caf::actor_system& system,
                                            const std::vector<caf::actor>& shards,
                                            const ParameterServerStrategyOptions& options) {
  auto client = std::make_shared<PsClient>(system, options.request_timeout);
  if (!options.shard_names.empty()) client->name_shards(shards, options.shard_names);
  const int64_t replication = options.replication;
  if (replication == 2 && options.attach)
    client->learn_backups(shards);
  else if (replication == 2)
    client->replicate(shards);
  if (options.prepare_client) options.prepare_client(*client);
  return client;
}

PsVariablePlacement placement_of(const ShardedVariable& v) {
  PsVariablePlacement p{v.name(), v.shape(), v.dtype(), false, true, "", {}};
  for (size_t i = 0; i < v.layout().num_shards(); ++i) {
    const ShardInfo& s = v.layout().shard(i);
    p.parts.push_back({s.name, s.shape, s.offset, v.tasks()[i]});
  }
  return p;
}

PsVariablePlacement placement_of(const ParameterServerStorage& v) {
  return {v.name(),
          v.shape(),
          v.dtype(),
          false,
          false,
          "",
          {{v.name(), v.shape(), std::vector<int64_t>(v.shape().rank(), 0), v.task()}}};
}

}  // namespace

ParameterServerStrategy::ParameterServerStrategy(caf::actor_system& system,
                                                 std::vector<caf::actor> ps_shards,
                                                 ParameterServerStrategyOptions options)
    : Strategy("ParameterServerStrategy", &system, {canonicalize("/device:CPU:0")},
               std::make_unique<ReductionToOneDevice>(default_kernels()), default_kernels(),
               options.timeouts),
      system_(&system),
      ps_shards_(checked_shards(std::move(ps_shards))),
      replication_(checked_replication(options.replication, ps_shards_.size())),
      client_(make_client(system, ps_shards_, options)),
      partitioner_(std::move(options.partitioner)),
      placement_(resolve_placement(options, int64_t(ps_shards_.size()))),
      attach_(options.attach) {}

std::vector<PsVariablePlacement> ParameterServerStrategy::placements() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return placements_;
}

std::shared_ptr<VariableStorage> ParameterServerStrategy::make_variable_storage(
    const std::string& name, const Tensor& initial, const VariableOptions& options) {
  if (!initial.defined())
    throw invalid_argument("ParameterServerStrategy: variable '" + name + "' needs a value");
  if (!current_colocation().empty()) return make_colocated(name, initial, current_colocation());
  std::shared_ptr<VariableStorage> storage;
  PsVariablePlacement placement;
  if (!options.trainable) {
    // Not trained by workers: it stays with the coordinator and takes no ps task's turn.
    storage = Strategy::make_variable_storage(name, initial, options);
    placement = {name, initial.shape(), initial.dtype(), true, false, "", {}};
  } else {
    const int64_t shards = shard_count_for(partitioner_ ? &partitioner_ : nullptr, initial.shape(),
                                           initial.dtype(), false, name);
    std::lock_guard<std::mutex> lock(mutex_);
    if (shards > 1) {
      auto sharded = std::make_shared<ShardedStorage>(ShardedVariable::create(
          client_, ps_shards_, *placement_, name, initial, shards, !attach_));
      placement = placement_of(sharded->sharded());
      storage = sharded;
    } else {
      const int64_t task = placement_->place({name, initial.shape(), initial.dtype()});
      auto single = attach_ ? std::make_shared<ParameterServerStorage>(
                                  client_, ps_shards_[size_t(task)], task, name, initial.dtype(),
                                  initial.shape())
                            : ParameterServerStorage::create(client_, ps_shards_[size_t(task)],
                                                             task, name, initial);
      placement = placement_of(*single);
      storage = single;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  storages_[name] = storage;
  placements_.push_back(std::move(placement));
  return storage;
}

std::shared_ptr<VariableStorage> ParameterServerStrategy::make_colocated(const std::string& name,
                                                                         const Tensor& initial,
                                                                         const std::string& with) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = storages_.find(with);
  if (it == storages_.end())
    throw invalid_argument("ParameterServerStrategy: variable '" + name +
                           "' is to be colocated with '" + with +
                           "', which this strategy did not create");
  std::shared_ptr<VariableStorage> storage;
  PsVariablePlacement placement;
  if (auto* sharded = dynamic_cast<ShardedStorage*>(it->second.get())) {
    auto s = std::make_shared<ShardedStorage>(
        ShardedVariable::create_colocated(client_, sharded->sharded(), name, initial, !attach_));
    placement = placement_of(s->sharded());
    storage = s;
  } else if (auto* single = dynamic_cast<ParameterServerStorage*>(it->second.get())) {
    auto s =
        attach_ ? std::make_shared<ParameterServerStorage>(client_, single->shard(), single->task(),
                                                           name, initial.dtype(), initial.shape())
                : ParameterServerStorage::create(client_, single->shard(), single->task(), name,
                                                 initial);
    placement = placement_of(*s);
    storage = s;
  } else {
    // Beside a coordinator variable: on the coordinator too.
    storage = Strategy::make_variable_storage(name, initial, {});
    placement = {name, initial.shape(), initial.dtype(), true, false, "", {}};
  }
  placement.colocated_with = with;
  storages_[name] = storage;
  placements_.push_back(std::move(placement));
  return storage;
}

}  // namespace troupe
