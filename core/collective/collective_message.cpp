#include "core/collective/collective_message.hpp"

namespace troupe {

std::string_view phase_name(CollectivePhase phase) {
  switch (phase) {
    case CollectivePhase::reduce_scatter: return "reduce_scatter";
    case CollectivePhase::all_gather: return "all_gather";
    case CollectivePhase::gather: return "gather";
    case CollectivePhase::cross_reduce: return "cross_reduce";
    case CollectivePhase::cross_broadcast: return "cross_broadcast";
    case CollectivePhase::broadcast: return "broadcast";
  }
  return "unknown_phase";
}

std::string CollectiveMessage::describe() const {
  return std::string(phase_name(phase)) + " step " + std::to_string(step) + " chunk " +
         std::to_string(chunk) + " [offset " + std::to_string(offset) + ", count " +
         std::to_string(count) + "] from rank " + std::to_string(from) + " to rank " +
         std::to_string(to);
}

}  // namespace troupe
