#pragma once
// Distributed input (spec §2.7, §2.9): experimental_distribute_dataset splits a dataset batched
// by the global batch size into per-replica batches (rebatch rule, then auto-shard across input
// workers); distribute_datasets_from_function calls the user's function once per input worker
// with its InputContext. Both give a DistributedDataset whose iterators hand out PerReplica
// batches through dataset_iterator actors.

#include <functional>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "coordinator/distributed_iterator.hpp"
#include "coordinator/input_workers.hpp"
#include "core/data/dataset.hpp"
#include "core/data/input_context.hpp"

namespace troupe {

class Strategy;

/// The per-worker pipelines of a distributed dataset, ready to iterate.
class DistributedDataset {
 public:
  DistributedDataset(caf::actor_system& system, DistributedIteratorConfig config,
                     std::vector<data::AutoShardPolicy> applied_policies,
                     std::vector<std::string> warnings);

  /// A fresh iterator from the beginning (iter(dataset)); its actors live as long as it does.
  DistributedIterator make_iterator() const;
  /// for (const auto& step : dataset): a fresh iterator's steps (one PerReplica per component).
  DistributedStepCursor begin() const;
  DistributedStepCursor end() const { return {}; }
  /// Per-replica element spec; the batch dimension is unknown with more than one input worker
  /// (a partial step can always give some replica an empty batch).
  const data::ElementSpec& element_spec() const { return config_.element_spec; }
  int64_t num_input_workers() const { return int64_t(config_.worker_datasets.size()); }
  int64_t replicas_per_worker() const { return config_.replicas_per_worker; }
  int64_t num_replicas_in_sync() const { return int64_t(config_.devices.size()); }
  /// Each input worker's pipeline (after rebatch and auto-shard), worker order.
  const std::vector<data::Dataset>& worker_datasets() const { return config_.worker_datasets; }
  /// The auto-shard policy actually applied per worker (AUTO resolves to FILE or DATA).
  const std::vector<data::AutoShardPolicy>& applied_auto_shard_policies() const {
    return applied_policies_;
  }
  /// Why AUTO fell back to DATA, per worker where it did.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  caf::actor_system* system_;
  DistributedIteratorConfig config_;
  std::vector<data::AutoShardPolicy> applied_policies_;
  std::vector<std::string> warnings_;
};

/// Distributes `dataset` (batched by the global batch size) over `strategy`'s replicas: one
/// clone per input worker, rebatch_for_worker then auto_shard_dataset (spec §2.7.6). Throws
/// invalid_argument for an unbatched input or N not divisible by W, unimplemented for
/// PER_REPLICA options. `system` runs the dataset_iterator actors.
DistributedDataset experimental_distribute_dataset(caf::actor_system& system, Strategy& strategy,
                                                   const data::Dataset& dataset,
                                                   InputOptions options = {});

/// A user function building one input worker's pipeline from its InputContext.
using DatasetFn = std::function<data::Dataset(const data::InputContext&)>;

/// Calls `dataset_fn` once per input worker with InputContext(W, i, N) (T7); each returned
/// dataset must be batched per replica, and each of the worker's R replicas takes one batch per
/// step. No rebatching or sharding happens. PER_REPLICA gives one input worker per replica.
DistributedDataset distribute_datasets_from_function(caf::actor_system& system, Strategy& strategy,
                                                     const DatasetFn& dataset_fn,
                                                     InputOptions options = {});

}  // namespace troupe
