#pragma once
// Options of Strategy::create_variable (tf.Variable's synchronization / aggregation).

#include "core/aggregation.hpp"

namespace troupe {

/// How a distributed variable is kept in sync.
struct VariableOptions {
  Sync sync = Sync::automatic;  ///< AUTO becomes ON_WRITE
  Aggregation aggregation = Aggregation::none;
  bool trainable = true;
};

}  // namespace troupe
