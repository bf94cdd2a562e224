#pragma once
// The partial-batch rule of the distributed iterator (spec §2.8.4): when the data runs out in the
// middle of a step, replicas without data still take part with an empty batch (leading dimension
// 0), so every replica runs the same step and collectives stay matched.

#include <cstdint>
#include <optional>
#include <vector>

#include "core/data/element.hpp"

namespace troupe::data {

/// How many replicas of a step got data (the value all-reduced across workers).
int64_t count_replicas_with_data(const std::vector<std::optional<Element>>& per_replica);

/// The step's per-replica values: a replica's own element, or a dummy from `spec` (zeros, leading
/// and unknown dimensions 0). Returns nullopt when no replica has data (end of the data).
std::optional<std::vector<Element>> fill_missing_replicas(
    const std::vector<std::optional<Element>>& per_replica, const ElementSpec& spec);

/// `replicas` dummies from `spec`: what a worker without data feeds its replicas while another
/// worker still has some.
std::vector<Element> empty_replicas(size_t replicas, const ElementSpec& spec);

/// Splits one global batch (possibly short) over num_replicas as the rebatch would on a single
/// worker: replica k takes the next batch_sizes_for_worker(global_batch_size, 1, N, 0)[k] rows;
/// replicas past the end of the data get views of 0 rows.
std::vector<Element> split_global_batch(const Element& batch, int64_t global_batch_size,
                                        int64_t num_replicas);

}  // namespace troupe::data
