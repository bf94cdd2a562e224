#pragma once
// How distributed variables synchronise (spec variables.md §1.1).

#include <string_view>

#include "core/reduce_op.hpp"

namespace troupe {

/// When the copies of a variable are synchronised. AUTO becomes ON_WRITE at creation.
enum class Sync { automatic, on_write, on_read, none };

/// How replica-context writes (ON_WRITE) or cross-replica reads (ON_READ) combine the replicas.
enum class Aggregation { none, sum, mean, only_first_replica };

std::string_view sync_name(Sync s);                ///< "AUTO", "ON_WRITE", "ON_READ", "NONE"
std::string_view aggregation_name(Aggregation a);  ///< "NONE", "SUM", "MEAN", "ONLY_FIRST_REPLICA"
/// Case-insensitive; throws invalid_argument naming the text.
Sync parse_sync(std::string_view text);
Aggregation parse_aggregation(std::string_view text);
/// SUM -> sum, MEAN -> mean; NONE and ONLY_FIRST_REPLICA throw invalid_argument
/// ("could not convert aggregation X to a ReduceOp"), as ReduceOp.from_variable_aggregation.
ReduceOp reduce_op_for(Aggregation a);

}  // namespace troupe
