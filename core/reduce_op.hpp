#pragma once
// How per-replica values combine (mirrored.md §2.12): SUM adds the components, MEAN divides that
// sum by the number of participants (which depends on the cross-device path, see the spec).

#include <string_view>

namespace troupe {

/// Reduction applied across replicas.
enum class ReduceOp { sum, mean };

/// "SUM" or "MEAN" (TF's spelling of tf.distribute.ReduceOp values).
std::string_view reduce_op_name(ReduceOp op);
/// Case-insensitive inverse of reduce_op_name ("sum", "Mean" are accepted); throws
/// invalid_argument "reduce_op must be SUM or MEAN, got '<text>'" otherwise.
ReduceOp parse_reduce_op(std::string_view text);

}  // namespace troupe
