#pragma once
// The input side of `troupe run`: the data section's examples as (features, labels), and how
// they reach the replicas — one pipeline batched by the global batch and split by
// experimental_distribute_dataset (`distribute: dataset`), or one pipeline per input worker
// built from its InputContext by distribute_datasets_from_function (`distribute:
// from_function`). `prefetch` sets how many steps each input worker produces ahead.

#include <vector>

#include <caf/fwd.hpp>

#include "coordinator/distributed_dataset.hpp"
#include "core/data/dataset.hpp"
#include "core/data/input_context.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe {

/// Unbatched (features, label) examples of the data section: synthetic, TFRecord or CSV. File
/// features besides the label are flattened, cast to float32 and concatenated in the order the
/// file lists them (data.feature_order); a regression label becomes float32. `data.examples`
/// keeps the first that many examples of files. Synthetic examples that batch() computes are kept
/// for later repeats when all of them fit in `cache_bytes` (0: none kept).
data::Dataset make_examples_dataset(const proto::Experiment& experiment, int64_t cache_bytes = 0);

/// One training pipeline: `examples` sharded to this input pipeline when there are several,
/// shuffled when asked (seeded), repeated forever and batched by `batch` with the remainder
/// dropped, so every step is full. Synthetic data keeps its first epoch for the repeats when it
/// fits in 256 MiB (docs/input.md).
data::Dataset make_training_pipeline(const proto::Experiment& experiment,
                                     const data::InputContext& context, int64_t batch);

/// data.auto_shard as the policy experimental_distribute_dataset shards across workers by
/// (AUTO when unset).
data::AutoShardPolicy auto_shard_policy(const proto::DataSpec& data);

/// InputOptions of the run: `data.prefetch` steps read ahead by each input worker, on top of
/// `base` (tests pass more input workers than one process has).
InputOptions make_input_options(const proto::Experiment& experiment, InputOptions base = {});

/// The distributed input of a run, and the InputContexts its dataset function was called with
/// (empty for `distribute: dataset`, one per input worker for `from_function`).
struct ExperimentInput {
  DistributedDataset dataset;
  std::vector<data::InputContext> contexts;
};

/// Distributes the experiment's data over `strategy` as `data.distribute` says; for
/// `from_function` each input worker's pipeline is batched by the per-replica batch
/// global_batch / num_replicas (TF InputContext::get_per_replica_batch_size).
ExperimentInput make_experiment_input(caf::actor_system& system, Strategy& strategy,
                                      const proto::Experiment& experiment, InputOptions base = {});

}  // namespace troupe
