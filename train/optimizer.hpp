#pragma once
// Optimizers over distributed variables (tf.keras.optimizers on a strategy): SGD, momentum
// (optionally Nesterov), Adam, Adagrad. Slots are distributed variables named `<var>/<slot>`
// ("dense/kernel/m"). apply_gradients() in replica context either
//  - merge path (spec variables.md §2.6): one merge_call, batch_reduce_to(SUM) of all
//    gradients (fused), then extended().update() per variable; or
//  - all_reduce path: one fused ReplicaContext::all_reduce(SUM) of every dense gradient, then
//    each replica updates its own component — equivalent to a mirrored update because every
//    replica applies the identical reduced gradient.
// The default (automatic) takes the all_reduce path where the replicas meet in shared memory
// (CollectiveAllReduce in one process: each replica sums and updates its share in parallel,
// 2-replica MLP 215-221 k examples/s against 188-192 k through merge_call) and the merge path
// otherwise (there the two measured within noise of each other, docs/models.md).
// Row (sparse) gradients are concatenated across replicas (IndexedSlices all-gather) and always
// take the merge path.
// Dense kernel gradients may come as products (Gradient::lhs, rhs): the all_reduce path hands
// them to the all-reduce as such (train/gradient_products.hpp); every other path forms them.

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/strategy.hpp"
#include "kernels/update_rule.hpp"
#include "train/model.hpp"
#include "train/non_finite.hpp"

namespace troupe {

/// An optimizer's rule and hyper-parameters (its `step` is ignored: the optimizer counts steps).
using OptimizerConfig = UpdateRule;

/// "sgd", "momentum", "adam", "adagrad" (invalid_argument naming the text otherwise).
OptimizerKind parse_optimizer_kind(const std::string& text);

/// How apply_gradients synchronises (see the file comment).
enum class ApplyPath { all_reduce, merge_call, automatic };

/// What `automatic` means on `strategy`: all_reduce when its replicas all-reduce in shared
/// memory (CollectiveAllReduce with AllReduceOptions::shared_memory), merge_call otherwise.
ApplyPath resolve_apply_path(ApplyPath path, Strategy& strategy);

/// An optimizer bound to a list of variables (create it inside the strategy's scope). A step
/// is an UpdateRule applied through each variable's storage, where its values live.
class Optimizer {
 public:
  Optimizer(Strategy& strategy, OptimizerConfig config, std::vector<DistributedVariable> vars);

  const OptimizerConfig& config() const { return config_; }
  /// Slot names of this kind: {}, {"momentum"}, {"m", "v"}, {"accumulator"}.
  std::vector<std::string> slot_names() const;
  /// Slot `slot` of variable `var_index`.
  DistributedVariable& slot(size_t var_index, const std::string& slot);
  /// Steps applied so far (as seen by replica 0).
  int64_t iterations() const { return iterations_.at(0); }
  /// Sets every replica's step count (restoring a checkpoint: Adam's bias correction uses it).
  void set_iterations(int64_t n) { iterations_.assign(iterations_.size(), n); }

  /// What apply_gradients does with non-finite gradients (or a non-finite loss); stop unless set.
  void set_on_non_finite(OnNonFinite policy) { on_non_finite_ = policy; }
  OnNonFinite on_non_finite() const { return on_non_finite_; }
  /// Steps not applied under OnNonFinite::skip_step (as seen by replica 0).
  int64_t skipped_steps() const { return skipped_.at(0); }

  /// Replica context: reduces this replica's gradients (one per variable, in order) with the
  /// other replicas' by SUM and applies them. `loss_finite`: this replica's loss was finite.
  /// Unless the policy is ignore, every replica decides alike from what they all see (the reduced
  /// gradients, which a non-finite loss poisons; the merge function's view of every replica):
  /// stop throws naming the step and the replica(s), skip_step returns false without applying
  /// anything. Returns whether the update was applied.
  bool apply_gradients(ReplicaContext& ctx, const std::vector<Gradient>& grads,
                       ApplyPath path = ApplyPath::automatic, bool loss_finite = true);
  /// Applies already-reduced gradients to component `replica` of every variable (what both
  /// paths end in; also usable directly in cross-replica context for one device).
  void apply_to_replica(int replica, const std::vector<Gradient>& reduced);

 private:
  void apply_one(int replica, size_t var_index, const Gradient& g);
  /// This optimizer's rule at replica `replica`'s next step.
  UpdateRule update_rule(int replica) const;
  bool apply_by_merge_call(ReplicaContext& ctx, const std::vector<Gradient>& grads, bool guard,
                           bool finite);
  /// Given the replicas whose step was not finite: true to apply; throws (stop) or counts the
  /// skipped step of `replicas_skipping` (skip_step).
  /// `bad_elsewhere`: replicas of other workers whose step was not finite (multi-worker).
  bool decide(const std::vector<int>& bad_replicas, const std::vector<int>& replicas_skipping,
              int64_t bad_elsewhere = 0);
  /// All-reduce path, the reduced gradients not finite: counts the skipped step (skip_step) or
  /// throws, naming this replica when its own loss or gradients were not finite (`mine`).
  bool decide_reduced(int replica, bool mine);

  Strategy& strategy_;
  OptimizerConfig config_;
  std::vector<DistributedVariable> vars_;
  std::vector<std::vector<DistributedVariable>> slots_;  // [var][slot]
  std::vector<int64_t> iterations_;                      // per replica
  std::vector<int64_t> skipped_;                         // per replica
  OnNonFinite on_non_finite_ = OnNonFinite::stop;
};

}  // namespace troupe
