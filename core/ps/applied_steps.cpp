#include "core/ps/applied_steps.hpp"

namespace troupe {

bool AppliedSteps::first_time(uint64_t step_id) {
  if (step_id == 0) return true;
  if (contains(step_id)) return false;
  above_.insert(step_id);
  // Fold the ids that now continue the prefix into the floor.
  while (!above_.empty() && *above_.begin() == floor_ + 1) {
    ++floor_;
    above_.erase(above_.begin());
  }
  return true;
}

bool AppliedSteps::contains(uint64_t step_id) const {
  return step_id != 0 && (step_id <= floor_ || above_.count(step_id) != 0);
}

AppliedSteps AppliedSteps::restored(uint64_t floor, const std::vector<uint64_t>& sparse_ids) {
  AppliedSteps s;
  s.floor_ = floor;
  for (uint64_t id : sparse_ids)
    if (id > floor) s.above_.insert(id);
  return s;
}

}  // namespace troupe
