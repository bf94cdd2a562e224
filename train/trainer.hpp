#pragma once
// A model trained on a strategy: its parameters as ON_WRITE distributed variables, an optimizer,
// and metrics as ON_READ SUM variables; plus the standard train step (features, labels).

#include <memory>
#include <string>
#include <vector>

#include "coordinator/device_inventory.hpp"
#include "coordinator/strategy.hpp"
#include "train/model.hpp"
#include "train/optimizer.hpp"

namespace troupe {

/// loss_sum, correct and count as SyncOnRead SUM variables (float64 scalars): each replica adds
/// its batch's figures to its own component; a cross-replica read sums them. A replica's figures
/// are host numbers, so record() adds them up on the host and the components take them at the
/// next cross-replica read: a GPU replica's step then writes nothing to device memory for them
/// (three blocking copies a step before).
class TrainMetrics {
 public:
  /// Creates "<prefix>/loss_sum", "<prefix>/correct", "<prefix>/count" (inside scope).
  TrainMetrics(Strategy& strategy, const std::string& prefix = "metrics");
  /// Replica context (or the default strategy): adds one batch's statistics.
  void record(const LossStats& stats);
  /// Cross-replica reads.
  double loss_sum() const;
  double correct() const;
  double count() const;
  /// loss_sum / count (0 when nothing was recorded).
  double mean_loss() const;
  /// correct / count (0 when nothing was recorded).
  double accuracy() const;
  /// Zeroes every component.
  void reset();

 private:
  /// Figures recorded by one replica since the last flush.
  struct Pending {
    double loss_sum = 0, correct = 0, count = 0;
    bool any = false;
  };
  /// Adds every replica's pending figures to its components (cross-replica, between runs).
  void flush() const;

  DistributedVariable loss_sum_, correct_, count_;
  /// One per local replica; each replica writes only its own (no lock needed).
  mutable std::vector<Pending> pending_;
};

/// Model + variables + optimizer + metrics on one strategy. Construct inside strategy.scope().
class Trainer {
 public:
  Trainer(Strategy& strategy, std::shared_ptr<const Model> model, OptimizerConfig optimizer,
          ApplyPath path = ApplyPath::automatic);
  /// Waits until no replica runs a step of this trainer (one that timed out included).
  ~Trainer();
  Trainer(Trainer&&) = default;

  Strategy& strategy() { return strategy_; }
  const Model& model() const { return *model_; }
  std::vector<DistributedVariable>& variables() { return variables_; }
  Optimizer& optimizer() { return optimizer_; }
  TrainMetrics& metrics() { return metrics_; }
  ApplyPath path() const { return path_; }
  void set_path(ApplyPath path) { path_ = path; }

  /// This replica's parameter tensors (its variable components, no copies).
  std::vector<Tensor> replica_parameters(int replica) const;
  /// Replica 0's parameters (equal on every replica after each step).
  std::vector<Tensor> parameters() const { return replica_parameters(0); }

  /// One replica's step: loss and gradients of its batch over `global_batch` examples, recorded
  /// in the metrics, then apply_gradients. Returns {loss_sum, correct, rows} as float64 scalars.
  std::vector<Tensor> replica_step(ReplicaContext& ctx, const Tensor& features,
                                   const Tensor& labels, int64_t global_batch, bool train = true);
  /// strategy.run of replica_step; the global batch is the sum of the replicas' rows.
  /// Returns the global mean loss of this batch.
  double train_step(const ValueArg& features, const ValueArg& labels);
  /// Several steps in one strategy.run (Keras' steps_per_execution): each replica runs
  /// replica_step on batch 0, 1, ... in turn, so the caller's per-step dispatch is paid once.
  /// Same result as train_step on each batch in order; returns each batch's global mean loss.
  std::vector<double> train_steps(const std::vector<ValueArg>& features,
                                  const std::vector<ValueArg>& labels);
  /// Rows of a batch split evenly across this process's replicas, as views (no copy); the first
  /// replicas get one row more when it does not divide (across workers: this worker's share).
  PerReplica split_batch(const Tensor& global) const;

 private:
  Strategy& strategy_;
  std::shared_ptr<const Model> model_;
  std::vector<DistributedVariable> variables_;
  Optimizer optimizer_;
  TrainMetrics metrics_;
  ApplyPath path_;
  std::shared_ptr<ReplicaDeviceContexts> contexts_;  // cuBLAS handles of GPU replicas
};

}  // namespace troupe
