#include "coordinator/distributed_dataset.hpp"

#include "coordinator/strategy.hpp"
#include "core/data/auto_shard.hpp"
#include "core/data/rebatch.hpp"
#include "core/status.hpp"

namespace troupe {
namespace {

// With several input workers an empty batch can always turn up, so the batch dimension is
// dynamic in the distributed spec (spec §2.8.6).
data::ElementSpec distributed_spec(data::ElementSpec spec, int64_t num_workers) {
  if (num_workers > 1)
    for (auto& component : spec)
      if (!component.dims.empty()) component.dims[0] = data::kUnknownDim;
  return spec;
}

}  // namespace

DistributedDataset::DistributedDataset(caf::actor_system& system, DistributedIteratorConfig config,
                                       std::vector<data::AutoShardPolicy> applied_policies,
                                       std::vector<std::string> warnings)
    : system_(&system),
      config_(std::move(config)),
      applied_policies_(std::move(applied_policies)),
      warnings_(std::move(warnings)) {}

DistributedIterator DistributedDataset::make_iterator() const {
  return DistributedIterator(*system_, config_);
}

DistributedStepCursor DistributedDataset::begin() const {
  return DistributedStepCursor(std::make_shared<DistributedIterator>(*system_, config_));
}

namespace {

// The end-of-data count of every worker: one component per local replica, this worker's count
// on the first, summed across all replicas of all workers.
std::function<int64_t(int64_t)> count_across_workers(Strategy& strategy) {
  return [&strategy, devices = strategy.extended().worker_devices()](int64_t mine) {
    std::vector<Tensor> counts(devices.size(), Tensor::from_scalar<int64_t>(0));
    counts[0] = Tensor::from_scalar<int64_t>(mine);
    return strategy.reduce(ReduceOp::sum, PerReplica(counts, devices)).scalar<int64_t>();
  };
}

// This process is worker i of W (MultiWorkerMirroredStrategy across processes): it builds only
// its own clone — the same rebatch and auto-shard as input worker i in one process — and the
// end-of-data count is summed across workers through the strategy.
DistributedDataset distribute_across_workers(caf::actor_system& system, Strategy& strategy,
                                             const data::Dataset& dataset, InputOptions options) {
  const int64_t w = strategy.num_workers(), i = strategy.worker_index();
  const int64_t n = strategy.num_replicas_in_sync();
  if (options.num_input_workers != 0 && options.num_input_workers != w)
    throw invalid_argument("InputOptions: num_input_workers is " +
                           std::to_string(options.num_input_workers) + ", but the cluster has " +
                           std::to_string(w) + " workers (one input worker each)");
  plan_input_workers(n, options, /*from_function=*/false);  // the options' own checks
  DistributedIteratorConfig config;
  config.replicas_per_worker = strategy.num_local_replicas();
  config.devices = strategy.extended().worker_devices();
  config.options = options;
  config.strategy = &strategy;
  auto clone = data::rebatch_for_worker(dataset, w, n, i);
  auto sharded = data::auto_shard_dataset(clone, w, i, n);
  std::vector<std::string> warnings;
  if (!sharded.warning.empty())
    warnings.push_back("worker " + std::to_string(i) + ": " + sharded.warning);
  config.worker_datasets.push_back(sharded.dataset);
  config.element_spec = distributed_spec(sharded.dataset.element_spec(), w);
  config.count_across_workers = count_across_workers(strategy);
  config.num_workers = strategy.num_workers();
  return DistributedDataset(system, std::move(config), {sharded.applied}, std::move(warnings));
}

// distribute_datasets_from_function on worker i of W: one pipeline, built from its InputContext.
DistributedDataset from_function_across_workers(caf::actor_system& system, Strategy& strategy,
                                                const DatasetFn& dataset_fn, InputOptions options) {
  const int64_t w = strategy.num_workers(), i = strategy.worker_index();
  const int64_t n = strategy.num_replicas_in_sync();
  if (options.experimental_replication_mode == InputReplicationMode::per_replica)
    throw unimplemented("distribute_datasets_from_function: PER_REPLICA input across " +
                        std::to_string(w) + " workers is not supported (PER_WORKER is)");
  plan_input_workers(n, options, /*from_function=*/true);
  DistributedIteratorConfig config;
  config.replicas_per_worker = strategy.num_local_replicas();
  config.devices = strategy.extended().worker_devices();
  config.options = options;
  config.strategy = &strategy;
  config.worker_datasets.push_back(dataset_fn(data::InputContext(w, i, n)));
  config.element_spec = distributed_spec(config.worker_datasets.back().element_spec(), w);
  config.count_across_workers = count_across_workers(strategy);
  config.num_workers = strategy.num_workers();
  return DistributedDataset(system, std::move(config), {data::AutoShardPolicy::off}, {});
}

}  // namespace

DistributedDataset experimental_distribute_dataset(caf::actor_system& system, Strategy& strategy,
                                                   const data::Dataset& dataset,
                                                   InputOptions options) {
  if (data::compute_batch_size(dataset) != data::kNoBatchFound && strategy.num_workers() > 1)
    return distribute_across_workers(system, strategy, dataset, options);
  const int64_t n = strategy.num_replicas_in_sync();
  auto plan = plan_input_workers(n, options, /*from_function=*/false);
  if (data::compute_batch_size(dataset) == data::kNoBatchFound)
    throw invalid_argument(
        "experimental_distribute_dataset: the input dataset was never batched (reached its "
        "source without encountering a batch); call batch(global_batch_size) on it before it "
        "can be split across " +
        std::to_string(n) + " replicas");
  DistributedIteratorConfig config;
  config.replicas_per_worker = plan.replicas_per_worker;
  config.devices = strategy.extended().worker_devices();
  config.options = options;
  config.strategy = &strategy;
  std::vector<data::AutoShardPolicy> applied;
  std::vector<std::string> warnings;
  for (int64_t i = 0; i < plan.num_workers; ++i) {
    auto clone = data::rebatch_for_worker(dataset, plan.num_workers, n, i);
    auto sharded = data::auto_shard_dataset(clone, plan.num_workers, i, n);
    applied.push_back(sharded.applied);
    if (!sharded.warning.empty())
      warnings.push_back("input worker " + std::to_string(i) + ": " + sharded.warning);
    config.worker_datasets.push_back(sharded.dataset);
  }
  config.element_spec =
      distributed_spec(config.worker_datasets.front().element_spec(), plan.num_workers);
  return DistributedDataset(system, std::move(config), std::move(applied), std::move(warnings));
}

DistributedDataset distribute_datasets_from_function(caf::actor_system& system, Strategy& strategy,
                                                     const DatasetFn& dataset_fn,
                                                     InputOptions options) {
  if (!dataset_fn) throw invalid_argument("distribute_datasets_from_function: no dataset_fn");
  if (strategy.num_workers() > 1)
    return from_function_across_workers(system, strategy, dataset_fn, options);
  const int64_t n = strategy.num_replicas_in_sync();
  auto plan = plan_input_workers(n, options, /*from_function=*/true);
  DistributedIteratorConfig config;
  config.replicas_per_worker = plan.replicas_per_worker;
  config.devices = strategy.extended().worker_devices();
  config.options = options;
  config.strategy = &strategy;
  for (const auto& context : data::input_contexts_for_workers(plan.num_workers, n))
    config.worker_datasets.push_back(dataset_fn(context));
  // Spec §2.9: the element spec comes from the last dataset built.
  config.element_spec =
      distributed_spec(config.worker_datasets.back().element_spec(), plan.num_workers);
  std::vector<data::AutoShardPolicy> applied(size_t(plan.num_workers), data::AutoShardPolicy::off);
  return DistributedDataset(system, std::move(config), std::move(applied), {});
}

}  // namespace troupe
