#pragma once
// Synchronous parameter-server training (TF's SyncReplicasOptimizer, spec cluster-and-ps.md
// §2.11): an actor on the coordinator side holds the gradient accumulator and the token queue
// (the pure bookkeeping is core/ps/sync_replicas). A worker's step takes a token (the global
// step it computes at), pulls the variables, computes its gradients and offers them:
//  - a gradient computed at an older global step is dropped (stale);
//  - the offer that brings the step's accepted gradients to replicas_to_aggregate gets their
//    mean back and applies it to the ps shards; then it reports the step applied, and only then
//    are tokens_per_step tokens of the new global step released — so no worker computes on
//    variables the step has not finished updating.
// Its messages are in the wire's type list: workers in other processes offer to it.
// One accumulator serves all of a model's variables: a step's gradients arrive together, so one
// global step per model is what TF's per-variable accumulators amount to.

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "core/ps/sync_replicas.hpp"
#include "core/tensor.hpp"
#include "kernels/registry.hpp"

namespace troupe {

/// One variable's gradient: dense (indices undefined) or rows (values[i] for row indices[i]).
struct SyncGradient {
  Tensor values;
  Tensor indices;
};

/// The answer to an offer.
struct SyncOffer {
  bool accepted = false;    ///< false: stale, dropped
  bool apply = false;       ///< this offer completed the step: apply `mean`, then call applied()
  int64_t global_step = 0;  ///< the step the gradients were accumulated for
  std::vector<SyncGradient> mean;
};

/// Counters of the accumulator.
struct SyncReplicasStats {
  int64_t global_step = 0;
  int64_t dropped = 0;
  int64_t accepted = 0;  ///< gradients accepted for the current step
};

/// The accumulator and token queue actor, and blocking calls to it from a worker's thread.
class SyncReplicas {
 public:
  /// Spawns the actor with plan.initial_tokens() tokens of global step 0. Throws
  /// invalid_argument like SyncReplicasPlan.
  SyncReplicas(caf::actor_system& system, SyncReplicasOptions options,
               std::shared_ptr<const KernelRegistry> kernels,
               std::chrono::milliseconds timeout = std::chrono::minutes(10));
  /// The accumulator `remote` of a coordinator in another process (its ClusterCoordinator's
  /// service, StepContext::service()), for a worker process's steps; not stopped by this.
  SyncReplicas(caf::actor_system& system, caf::actor remote, SyncReplicasOptions options,
               std::chrono::milliseconds timeout = std::chrono::minutes(10));
  ~SyncReplicas();
  SyncReplicas(const SyncReplicas&) = delete;
  SyncReplicas& operator=(const SyncReplicas&) = delete;

  const SyncReplicasPlan& plan() const { return plan_; }
  /// Blocks until a token is available; returns its global step.
  int64_t take_token() const;
  /// A worker was lost holding `n` closures, each of which may have taken a token: puts `n`
  /// tokens of the current step back, and releases the tokens of a step whose update is being
  /// applied (the lost worker may have been applying it), so training goes on with the live
  /// workers. Fire and forget; safe after `accumulator` is gone.
  static void replace_lost_tokens(const caf::actor& accumulator, int64_t n);
  /// Offers gradients computed at `local_step` (one per variable, in variable order; every
  /// offer of a step must have the same layout, else invalid_argument naming the variable).
  SyncOffer offer(int64_t local_step, std::vector<SyncGradient> grads) const;
  /// The mean of step `global_step` is on the shards: releases the next step's tokens.
  void applied(int64_t global_step) const;
  /// A resumed run: the accumulator continues at `global_step`, with the tokens a run has at
  /// that step's boundary (no gradient pending, every token of the step in the queue; with
  /// total_num_replicas <= replicas_to_aggregate that is replicas_to_aggregate tokens of it).
  /// Only before any token is taken or gradient offered: failed_precondition naming what is
  /// pending otherwise, and nothing changes.
  void restore(int64_t global_step) const;
  SyncReplicasStats stats() const;
  /// The accumulator actor (what remote workers talk to).
  const caf::actor& actor() const { return actor_; }

 private:
  caf::actor_system* system_;
  SyncReplicasPlan plan_;
  std::chrono::milliseconds timeout_;
  caf::actor actor_;
  bool owns_ = true;
};

}  // namespace troupe
