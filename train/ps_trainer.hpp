#pragma once
// Training a Model with ParameterServerStrategy and a ClusterCoordinator (spec
// cluster-and-ps.md §2.11, §7): the model's variables and the optimizer's slots live on the ps
// shards; each scheduled step runs on a worker, which draws a batch from its own per-worker
// dataset, pulls the variables, computes loss and gradients, and
//  - async: pushes its gradients as optimizer steps on the shards at once — no worker waits for
//    another (TF2's default);
//  - sync: takes a token, offers its gradients to the SyncReplicas accumulator; the offer that
//    completes replicas_to_aggregate applies their mean (stale gradients are dropped).
// Every update carries the scheduled step's id, so a step rescheduled after a worker loss is
// applied once.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/ps/cluster_coordinator.hpp"
#include "coordinator/ps/parameter_server_strategy.hpp"
#include "coordinator/ps/step_host.hpp"
#include "coordinator/ps/sync_replicas.hpp"
#include "train/model.hpp"
#include "train/optimizer.hpp"

namespace troupe {

/// How workers' gradients reach the variables.
enum class PsTrainingMode { async, sync };

/// "async" or "sync" (invalid_argument naming the text otherwise).
PsTrainingMode parse_ps_training_mode(const std::string& text);

struct PsTrainingOptions {
  PsTrainingMode mode = PsTrainingMode::async;
  /// sync: gradients averaged per step (0 = the coordinator's number of workers).
  int64_t replicas_to_aggregate = 0;
  /// sync: workers computing gradients (0 = replicas_to_aggregate); more than R = backup workers.
  int64_t total_num_replicas = 0;
  /// Name the train step is registered under on the coordinator.
  std::string step_name = "train_step";
  /// sync, in a worker process (the StepHost constructor): the number of workers of the
  /// cluster, for the default of replicas_to_aggregate.
  int64_t num_workers = 0;
};

/// The parts of a worker's step, as PsTrainer reports them to its observer.
enum class PsStepPart {
  step,   ///< the whole closure on the worker
  input,  ///< drawing the batch from the worker's iterator
  token,  ///< sync: waiting for a token (the previous update on the shards)
  pull,   ///< reading every variable from the shards
  push,   ///< optimizer steps on the shards (async: every step; sync: the completing offer)
  offer,  ///< sync: handing the gradients to the SyncReplicas accumulator
};

/// "step", "input", "token", "pull", "push", "offer".
const char* ps_step_part_name(PsStepPart part);

/// Called on the worker's thread after each part of a step with its span and the bytes it moved
/// (values and indices of the tensors pulled, pushed or offered; 0 for the others).
using PsStepObserver =
    std::function<void(int worker, PsStepPart part, std::chrono::steady_clock::time_point begin,
                       std::chrono::steady_clock::time_point end, int64_t bytes)>;

/// Totals over every step run so far (all workers).
struct PsTraffic {
  int64_t steps = 0;         ///< closures run to the end
  int64_t bytes_pulled = 0;  ///< variables read from the shards
  int64_t bytes_pushed = 0;  ///< gradients pushed to the shards and offered to the accumulator
  /// Time workers waited for parameters: pulling them, and (sync) for a token.
  double parameter_wait_seconds = 0;
};

class PsTrainer {
 public:
  /// Creates the model's variables and the optimizer's slots on `strategy`'s shards (enters its
  /// scope) and registers the step on `coordinator`. Both must outlive the trainer; the
  /// coordinator must be joined (or destroyed) before the trainer goes.
  PsTrainer(ParameterServerStrategy& strategy, ClusterCoordinator& coordinator,
            std::shared_ptr<const Model> model, OptimizerConfig optimizer,
            PsTrainingOptions options = {});

  /// A worker process's side (TF2's worker task): attaches to the variables and slots the
  /// coordinator created (`strategy` built with `attach`) and registers the same step on
  /// `host`. In sync mode a step offers its gradients to the coordinator's accumulator, which
  /// it reaches through StepContext::service().
  PsTrainer(ParameterServerStrategy& strategy, StepHost& host, std::shared_ptr<const Model> model,
            OptimizerConfig optimizer, PsTrainingOptions options = {});

  /// Schedules one step on `data` (elements {features, labels}); its value is
  /// {loss_sum, rows} as float64 scalars.
  RemoteValue schedule_step(const PerWorkerDataset& data);

  std::vector<DistributedVariable>& variables() { return variables_; }
  Optimizer& optimizer() { return optimizer_; }
  /// The current parameters, pulled from the shards.
  std::vector<Tensor> parameters() const;
  /// Optimizer steps this process applied to the variables (async: one per step; sync: one per
  /// R accepted). With remote workers the coordinator applies none: count at the shards.
  int64_t updates_applied() const { return updates_.load(); }
  /// Sets the update count (a resumed run continues the checkpoint's; Adam's bias correction
  /// counts from it). Scheduled steps carry it to worker processes, whose async updates are
  /// numbered n + the closure's step id (the step ids of a resumed run start at 1 again).
  void restore_updates_applied(int64_t n) {
    updates_.store(n);
    update_base_.store(n);
  }
  /// The sync accumulator (nullptr in async mode and in a worker process).
  const SyncReplicas* sync() const { return sync_.get(); }
  PsTrainingMode mode() const { return options_.mode; }
  /// Reports every step's parts to `observer` (call before scheduling steps).
  void set_observer(PsStepObserver observer) { observer_ = std::move(observer); }
  /// Bytes moved and time waited for parameters, over every step so far.
  PsTraffic traffic() const;

 private:
  std::vector<Tensor> run_step(StepContext& ctx, const std::vector<Tensor>& args);
  std::vector<Tensor> pull() const;
  void apply(const std::vector<Gradient>& grads, int64_t update);
  /// The accumulator a step offers to: this process's, or the coordinator's (sync only).
  const SyncReplicas* sync_for(const StepContext& ctx);
  // Tells the observer and the totals about one part of a step that began at `begin`.
  void record(int worker, PsStepPart part, std::chrono::steady_clock::time_point begin,
              int64_t bytes);

  ParameterServerStrategy& strategy_;
  ClusterCoordinator* coordinator_;  // nullptr in a worker process
  std::shared_ptr<const Model> model_;
  PsTrainingOptions options_;
  std::vector<DistributedVariable> variables_;
  Optimizer optimizer_;
  std::unique_ptr<SyncReplicas> sync_;
  std::unique_ptr<SyncReplicas> remote_sync_;  // a worker process's handle on the coordinator's
  std::atomic<int64_t> updates_{0};
  std::atomic<int64_t> update_base_{0};  // restore_updates_applied's count
  PsStepObserver observer_;
  std::atomic<int64_t> steps_{0}, bytes_pulled_{0}, bytes_pushed_{0}, parameter_wait_ns_{0};
};

}  // namespace troupe
