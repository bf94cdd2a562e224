#pragma once
// Synchronous parameter-server training as TF's SyncReplicasOptimizer does it (spec
// cluster-and-ps.md §2.11, §3 vector 16): gradients of a step are accumulated until
// replicas_to_aggregate arrived, stale ones (computed from an older global step) are dropped,
// and a token queue lets workers start the next step. This is the bookkeeping as a pure state
// machine; whoever owns the accumulator (a ps shard) sums the tensors it accepts.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>

namespace troupe {

/// replicas_to_aggregate R, total_num_replicas (0 = R) and the tokens of the first step.
struct SyncReplicasOptions {
  int64_t replicas_to_aggregate = 1;
  int64_t total_num_replicas = 0;
};

/// The counts every participant agrees on.
class SyncReplicasPlan {
 public:
  /// Throws invalid_argument naming a field below 1.
  explicit SyncReplicasPlan(SyncReplicasOptions options);
  int64_t replicas_to_aggregate() const { return r_; }
  int64_t total_num_replicas() const { return total_; }
  /// Tokens enqueued after each global step: max(total, R).
  int64_t tokens_per_step() const { return std::max(total_, r_); }
  /// Tokens put in the queue before the first step: R by default (num_tokens = -1); fewer than
  /// R - total throws invalid_argument ("too few tokens to finish the first step").
  int64_t initial_tokens(int64_t num_tokens = -1) const;

 private:
  int64_t r_;
  int64_t total_;
};

/// One variable's gradient accumulator (TF's ConditionalAccumulator with a global step).
class SyncAccumulator {
 public:
  explicit SyncAccumulator(const SyncReplicasPlan& plan, int64_t global_step = 0);

  /// A gradient computed at `local_step`: accepted (true) unless it is stale, i.e. older than
  /// the global step; a dropped gradient changes nothing.
  bool offer(int64_t local_step);
  /// True once R gradients of the current step have been accepted.
  bool ready() const { return accepted_ >= plan_.replicas_to_aggregate(); }
  /// Gradients accepted for the current step.
  int64_t accepted() const { return accepted_; }
  /// Ends the step once ready(): the caller applies the mean of the accepted gradients; the
  /// global step advances and the returned count of tokens, each carrying the new global
  /// step, goes to the token queue. Throws failed_precondition when not ready.
  int64_t take();
  int64_t global_step() const { return global_step_; }
  /// Gradients dropped as stale so far.
  int64_t dropped() const { return dropped_; }

 private:
  SyncReplicasPlan plan_;
  int64_t global_step_;
  int64_t accepted_ = 0;
  int64_t dropped_ = 0;
};

/// The token queue: a worker takes a token (the global step it may compute at) before a step.
class TokenQueue {
 public:
  void put(int64_t count, int64_t global_step);
  /// The oldest token, if any (a worker without one waits).
  std::optional<int64_t> take();
  size_t size() const { return tokens_.size(); }

 private:
  std::deque<int64_t> tokens_;
};

}  // namespace troupe
