#pragma once
// The writes a parameter-server shard performs on a variable it owns (tf.Variable's assign and
// scatter families). The numbering is part of the wire format: never renumber.

#include <cstdint>
#include <string_view>

namespace troupe {

/// One write to a variable held by a ps shard.
enum class ShardWrite : uint8_t {
  assign = 0,
  assign_add = 1,
  assign_sub = 2,
  scatter_update = 3,
  scatter_add = 4,
  scatter_sub = 5,
};

/// "assign", "assign_add", ..., "scatter_sub".
std::string_view shard_write_name(ShardWrite kind);
/// The ShardWrite numbered `raw`; throws invalid_argument naming the number otherwise.
ShardWrite shard_write_from(int raw);
/// True for the scatter_* writes, which take (indices, rows).
inline bool is_scatter(ShardWrite kind) { return kind >= ShardWrite::scatter_update; }

}  // namespace troupe
