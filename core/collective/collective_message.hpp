#pragma once
// The one message type every collective algorithm emits and consumes. An actor (or the local
// driver) only routes it from `from` to `to`; the header fields let the receiver check that the
// message belongs to this collective and arrives where the schedule expects it.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/tensor.hpp"

namespace troupe {

/// Which stage of an algorithm a message belongs to.
enum class CollectivePhase : uint8_t {
  reduce_scatter = 0,   ///< ring: partial sums travel to the right neighbour
  all_gather = 1,       ///< ring: final segments travel to the right neighbour
  gather = 2,           ///< reduce-to-one / hierarchical: a member's input to its group root
  cross_reduce = 3,     ///< hierarchical: second group's partial sum to the first group's main
  cross_broadcast = 4,  ///< hierarchical: the total back to the second group's main
  broadcast = 5,        ///< reduce-to-one / hierarchical: the total from a root to a member
};

/// "reduce_scatter", "all_gather", ...
std::string_view phase_name(CollectivePhase phase);

/// One chunk of one step of a collective, addressed rank to rank.
struct CollectiveMessage {
  int64_t instance = 0;  ///< which collective (the launcher's instance key); must match
  int from = 0;          ///< sending rank
  int to = 0;            ///< receiving rank
  CollectivePhase phase = CollectivePhase::reduce_scatter;
  int32_t step = 0;    ///< ring step within the phase (0 for one-step phases)
  int32_t chunk = 0;   ///< chunk index within the segment (ring) or buffer (others)
  int64_t offset = 0;  ///< first element of the chunk in the flattened buffer
  int64_t count = 0;   ///< elements in the chunk; payload holds exactly these
  /// 1-D tensor of `count` elements; inside a process a view of the sender's buffer (no copy).
  Tensor payload;

  /// "reduce_scatter step 1 chunk 3 [offset 12, count 4] from rank 2 to rank 3".
  std::string describe() const;
};

}  // namespace troupe
