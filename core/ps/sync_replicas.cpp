#include "core/ps/sync_replicas.hpp"

#include <algorithm>
#include <string>

#include "core/status.hpp"

namespace troupe {

SyncReplicasPlan::SyncReplicasPlan(SyncReplicasOptions o)
    : r_(o.replicas_to_aggregate),
      total_(o.total_num_replicas == 0 ? o.replicas_to_aggregate : o.total_num_replicas) {
  if (r_ < 1)
    throw invalid_argument("replicas_to_aggregate must be at least 1, got " + std::to_string(r_));
  if (total_ < 1)
    throw invalid_argument(
        "total_num_replicas must be at least 1 (0 = replicas_to_aggregate), "
        "got " +
        std::to_string(o.total_num_replicas));
}

int64_t SyncReplicasPlan::initial_tokens(int64_t num_tokens) const {
  const int64_t needed = r_ - total_;
  if (num_tokens == -1) return r_;
  if (num_tokens < needed || num_tokens < 0)
    throw invalid_argument(
        "too few tokens to finish the first step: " + std::to_string(num_tokens) + " (given) vs " +
        std::to_string(std::max<int64_t>(needed, 0)) + " (needed) for " + std::to_string(r_) +
        " replicas to aggregate out of " + std::to_string(total_));
  return num_tokens;
}

SyncAccumulator::SyncAccumulator(const SyncReplicasPlan& plan, int64_t global_step)
    : plan_(plan), global_step_(global_step) {}

bool SyncAccumulator::offer(int64_t local_step) {
  if (local_step < global_step_) {
    ++dropped_;
    return false;
  }
  ++accepted_;
  return true;
}

int64_t SyncAccumulator::take() {
  if (!ready())
    throw failed_precondition("sync step " + std::to_string(global_step_) + " has " +
                              std::to_string(accepted_) + " of " +
                              std::to_string(plan_.replicas_to_aggregate()) + " gradients");
  accepted_ = 0;
  ++global_step_;
  return plan_.tokens_per_step();
}

void TokenQueue::put(int64_t count, int64_t global_step) {
  for (int64_t i = 0; i < count; ++i) tokens_.push_back(global_step);
}

std::optional<int64_t> TokenQueue::take() {
  if (tokens_.empty()) return std::nullopt;
  const int64_t t = tokens_.front();
  tokens_.pop_front();
  return t;
}

}  // namespace troupe
