#include "core/ps/shard_write.hpp"

#include <string>

#include "core/status.hpp"

namespace troupe {

std::string_view shard_write_name(ShardWrite kind) {
  switch (kind) {
    case ShardWrite::assign: return "assign";
    case ShardWrite::assign_add: return "assign_add";
    case ShardWrite::assign_sub: return "assign_sub";
    case ShardWrite::scatter_update: return "scatter_update";
    case ShardWrite::scatter_add: return "scatter_add";
    case ShardWrite::scatter_sub: return "scatter_sub";
  }
  return "unknown";
}

ShardWrite shard_write_from(int raw) {
  if (raw < 0 || raw > int(ShardWrite::scatter_sub))
    throw invalid_argument("unknown variable write " + std::to_string(raw) +
                           " (0..5: assign, assign_add, assign_sub, scatter_update, scatter_add, "
                           "scatter_sub)");
  return static_cast<ShardWrite>(raw);
}

}  // namespace troupe
