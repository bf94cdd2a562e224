#pragma once
// Auto-sharding across input workers (spec §2.7.7): a rewrite of the pipeline graph chosen by the
// dataset's AutoShardPolicy.

#include <cstdint>
#include <string>

#include "core/data/dataset.hpp"

namespace troupe::data {

/// The rewritten pipeline and what was actually applied.
struct AutoShardResult {
  Dataset dataset;
  /// OFF, FILE or DATA (AUTO resolves to one of the last two; HINT stays HINT).
  AutoShardPolicy applied;
  /// Non-empty when AUTO fell back from FILE to DATA: says why.
  std::string warning;
};

/// Shards `dataset` for worker `index` of `num_shards` by its own policy:
/// OFF: unchanged. FILE: each reader source reads files index, index + num_shards, ...; throws
/// not_found when a source is not file-based or has fewer files than workers. DATA: shard() just
/// before a final prefetch, and rebatch stages become legacy_rebatch(num_replicas) because
/// rebatch does not compose with data sharding. AUTO: FILE, falling back to DATA with a warning on
/// not_found. HINT: replaces shard(kShardHint, kShardHint) placeholders.
/// With one shard nothing changes.
AutoShardResult auto_shard_dataset(const Dataset& dataset, int64_t num_shards, int64_t index,
                                   int64_t num_replicas);

}  // namespace troupe::data
