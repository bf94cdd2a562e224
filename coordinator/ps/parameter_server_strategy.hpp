#pragma once
// ParameterServerStrategy (TF2's ParameterServerStrategyV2, spec cluster-and-ps.md §7.3,
// variables.md §2.14): variables created under scope() live on ps_shard actors. The strategy is
// the coordinator's view of the cluster — it is built from the shards' actor handles, spawned in
// this actor system (an in-process cluster) or reached across processes (handles from TF_CONFIG),
// the same constructor for both.
//  - A trainable variable goes to the ps task its placement picks (round-robin by creation order
//    by default, R-V2-VAR-1); when the partitioner splits it (R-PS-SHARD-CRITERIA) it becomes a
//    ShardedVariable whose parts are placed one by one (R-V2-VAR-4).
//  - A non-trainable variable stays on the coordinator and does not advance the placement.
//  - A variable created in a ColocateVariablesWith scope (an optimizer's slot) goes where that
//  variable
//    lives, part by part for a sharded one, so the optimizer step runs on the shard.
// Steps run on workers through a ClusterCoordinator (coordinator/ps/cluster_coordinator.hpp);
// run() on the strategy itself executes on the coordinator's one replica.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "coordinator/ps/ps_client.hpp"
#include "coordinator/strategy.hpp"
#include "core/ps/partitioners.hpp"
#include "core/ps/placement.hpp"

namespace troupe {

/// How ParameterServerStrategy places and splits variables.
struct ParameterServerStrategyOptions {
  /// Splits variables along axis 0 (empty: no variable is split).
  Partitioner partitioner;
  /// "round_robin" or "greedy" (by byte size); ignored when `placement_policy` is set.
  std::string placement = "round_robin";
  /// A user policy (UserPlacement or any other); must span the strategy's ps tasks.
  std::shared_ptr<PlacementPolicy> placement_policy;
  /// 1: one copy of each variable; 2: primary-backup — ps task k's variables have a backup on
  /// task (k + 1) % num_ps, updated before the primary acknowledges, and clients fail over to
  /// it when task k goes away (coordinator/ps/ps_client.hpp). At most num_ps.
  int64_t replication = 1;
  /// What errors call ps task k (e.g. "'ps:0' (/job:ps/task:0)"); empty: "ps shard" alone.
  std::vector<std::string> shard_names;
  /// Timeout of each request to a shard.
  std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
  /// The variables already live on the shards, created by the coordinator with the same
  /// partitioner and placement: a worker process attaches to them (nothing is created; the same
  /// creation order gives the same parts on the same tasks). With replication 2 such a strategy
  /// only learns the backups (PsClient::learn_backups): the coordinator set them up.
  bool attach = false;
  /// Runs on the strategy's client before any variable exists: a process that reaches the ps
  /// tasks across the network registers their bulk connections here (use_ps_bulk), so that its
  /// gathers, pushes and applies of enough bytes leave CAF. Empty: every request through CAF.
  std::function<void(PsClient&)> prepare_client;
  StrategyOptions timeouts;
};

/// One part of a variable on a ps task (a whole variable is its own single part).
struct PsVariablePart {
  std::string name;
  Shape shape;
  std::vector<int64_t> offset;
  int64_t task = 0;
};

/// Where a variable created by the strategy lives: on ps parts, or on the coordinator.
struct PsVariablePlacement {
  std::string name;
  Shape shape;
  DType dtype = DType::float32;
  bool on_coordinator = false;  ///< non-trainable: kept on the coordinator, `parts` empty
  bool sharded = false;         ///< a ShardedVariable (parts named <name>/part_<i>)
  std::string colocated_with;   ///< the variable it was placed beside ("" if none)
  std::vector<PsVariablePart> parts;
};

class ParameterServerStrategy : public Strategy {
 public:
  /// `ps_shards[k]` is ps task k. Throws invalid_argument when there is no shard, a handle is
  /// invalid, the placement is unknown or spans another number of tasks, or the replication is
  /// not 1 or 2 or above the number of ps tasks.
  ParameterServerStrategy(caf::actor_system& system, std::vector<caf::actor> ps_shards,
                          ParameterServerStrategyOptions options = {});

  int64_t num_ps() const { return int64_t(ps_shards_.size()); }
  int64_t replication() const { return replication_; }
  const std::vector<caf::actor>& ps_shards() const { return ps_shards_; }
  std::shared_ptr<const PsClient> client() const { return client_; }
  caf::actor_system& system() const { return *system_; }
  /// Every variable created so far, in creation order.
  std::vector<PsVariablePlacement> placements() const;

 protected:
  std::shared_ptr<VariableStorage> make_variable_storage(const std::string& name,
                                                         const Tensor& initial,
                                                         const VariableOptions& options) override;

 private:
  std::shared_ptr<VariableStorage> make_colocated(const std::string& name, const Tensor& initial,
                                                  const std::string& with);

  caf::actor_system* system_;
  std::vector<caf::actor> ps_shards_;
  int64_t replication_;
  std::shared_ptr<const PsClient> client_;
  Partitioner partitioner_;
  std::shared_ptr<PlacementPolicy> placement_;
  bool attach_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<VariableStorage>> storages_;
  std::vector<PsVariablePlacement> placements_;
};

}  // namespace troupe
