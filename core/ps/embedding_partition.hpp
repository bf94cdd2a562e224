#pragma once
// Routing embedding ids to shards (spec variables.md R-EMB): which shard owns an id and which of
// its rows it is, under the "div" (contiguous; the default, as TF2's embedding_lookup) and "mod"
// (strided) partition strategies, plus the grouping of a batch of ids per shard that lets each
// shard gather only its own rows and the results be stitched back in id order.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ps/sharded_index.hpp"

namespace troupe {

/// How ids map to shards.
enum class PartitionStrategy { div, mod };

/// "div" or "mod".
std::string_view partition_strategy_name(PartitionStrategy strategy);
/// Inverse of partition_strategy_name; throws invalid_argument ("Unrecognized partition
/// strategy: ...") for anything else.
PartitionStrategy parse_partition_strategy(std::string_view name);

/// The ids of one lookup grouped by shard.
struct EmbeddingRoute {
  std::vector<std::vector<int64_t>> rows;       ///< rows[p]: local rows to gather from shard p
  std::vector<std::vector<int64_t>> positions;  ///< positions[p][k]: where rows[p][k] goes
};

/// Routes ids over shards of `rows_per_shard` rows. "div" requires the PS row split (the first
/// total % P shards one row larger, R-PS-SPLIT) — the formula assumes it — and throws
/// invalid_argument naming the expected and actual sizes otherwise. An id outside
/// [0, total) or a row past its shard's end throws out_of_range naming the id.
class EmbeddingRouter {
 public:
  EmbeddingRouter(std::vector<int64_t> rows_per_shard, PartitionStrategy strategy);

  /// The shard and local row of one id.
  ShardRow route(int64_t id) const;
  /// All ids, grouped by shard, each remembering its position in `ids`.
  EmbeddingRoute route_all(const std::vector<int64_t>& ids) const;

  int64_t total_rows() const { return total_; }
  size_t num_shards() const { return rows_.size(); }

 private:
  std::vector<int64_t> rows_;
  PartitionStrategy strategy_;
  int64_t total_ = 0;
};

}  // namespace troupe
