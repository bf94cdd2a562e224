#pragma once
// Exactly-once application of updates under retries: a parameter-server shard remembers which
// step ids it has applied to a variable, so a step that is re-sent (a worker died after pushing,
// the coordinator rescheduled it) is acknowledged again but not applied twice. TF promises only
// at-least-once here (spec cluster-and-ps.md §7.8); issue 12 asks for exactly-once.
//
// Memory stays bounded in the usual case: ids are handed out increasing from 1, so the set keeps
// only ids above the longest applied prefix 1..floor.

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

namespace troupe {

/// Step ids already applied to one variable. Id 0 means "no step": never deduplicated.
class AppliedSteps {
 public:
  /// True (and records it) the first time `step_id` is seen; false for a repeat. Always true
  /// for id 0.
  bool first_time(uint64_t step_id);
  /// True when `step_id` (> 0) was recorded.
  bool contains(uint64_t step_id) const;
  /// Every id in 1..floor() has been applied.
  uint64_t floor() const { return floor_; }
  /// Ids above floor() that were applied (out of order); kept small by compaction.
  size_t sparse_size() const { return above_.size(); }
  /// The applied ids above floor(), ascending (for checkpoints).
  std::vector<uint64_t> sparse_ids() const { return {above_.begin(), above_.end()}; }
  /// The set saved as (floor, sparse_ids): a restored shard deduplicates as the saved one did.
  static AppliedSteps restored(uint64_t floor, const std::vector<uint64_t>& sparse_ids);

 private:
  uint64_t floor_ = 0;
  std::set<uint64_t> above_;
};

}  // namespace troupe
