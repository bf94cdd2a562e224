#pragma once
// Rebatch arithmetic of experimental_distribute_dataset (spec §2.7.6): how a dataset batched by
// the global batch size G is cut into per-replica batches on each of W workers with R replicas.

#include <cstdint>
#include <vector>

#include "core/data/dataset.hpp"

namespace troupe::data {

/// Worker i's cycle of per-replica batch sizes: worker 0's [f+1]*c + [f]*(N-c) (N = W*R,
/// f = G/N, c = G%N) rotated left by i*R. Each list sums to G, one global step across all workers
/// sums to G, sizes differ by at most one, and sizes are 0 when G < N (T10).
std::vector<int64_t> batch_sizes_for_worker(int64_t global_batch_size, int64_t num_workers,
                                            int64_t replicas_per_worker, int64_t worker_index);

/// batch_sizes given as a tensor (TF passes a scalar or vector): its values; ValueError-style
/// invalid_argument "expected a scalar or a vector" for rank > 1.
std::vector<int64_t> batch_sizes_from_tensor(const Tensor& batch_sizes);

/// Static leading dimension of _RebatchDataset's output (T9): the single size when all sizes
/// are equal and no partial batch is possible, kUnknownDim otherwise. `input_batch_dim` is the
/// input's first known leading dimension or kUnknownDim.
int64_t rebatch_static_batch_dim(const std::vector<int64_t>& batch_sizes, int64_t input_batch_dim,
                                 bool drop_remainder);

/// TF's compute_batch_size: the common static leading dimension of every component, -1 when
/// they are known but differ or cannot be worked out, kNoBatchFound when the pipeline never
/// batched.
int64_t compute_batch_size(const Dataset& dataset);

/// The per-worker clone's rebatch stage (_make_rebatch_fn applied to worker `worker_index`):
/// rebatch(batch_sizes_for_worker(...)).prefetch(R), or legacy_rebatch(N).prefetch(R) when the
/// batch size is unknown. Throws invalid_argument when N % W != 0 or the input was never batched.
Dataset rebatch_for_worker(const Dataset& dataset, int64_t num_workers,
                           int64_t num_replicas_in_sync, int64_t worker_index);

}  // namespace troupe::data
