#pragma once
// A variant's metrics over time, read back from the files its run wrote (metrics.csv, the
// timeline), and the stopping rule evaluated on them. The report is computed from these files
// only, so what it says can be checked against them.

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/compare/compare_spec.hpp"

namespace troupe::experiment {

/// One row of metrics.csv plus the training time up to it.
struct MetricRow {
  int64_t step = 0;
  double loss = 0;
  double accuracy = -1;
  double steps_per_s = 0;
  double examples_per_s = 0;
  /// Training time up to this row: the sum over rows of (steps in the window / steps_per_s), so
  /// setup, checkpoints and a process start do not count.
  double train_seconds = 0;
};

/// metrics.csv's rows in order; throws data_loss naming the file and line on a malformed row.
std::vector<MetricRow> read_metrics_csv(const std::string& path);

/// Where one step's time goes, in milliseconds per step, from a run's timeline (Chrome trace),
/// averaged over the replicas of the process that wrote it. A parameter-server worker counts as
/// a replica: its closures are the replica's steps (category "replica"), their parts category
/// "ps" (train/ps_trainer.hpp's PsStepPart).
struct StepBreakdown {
  /// Mirrored: the coordinator waiting for the next batches ("get_next", before the replicas'
  /// step). Parameter server: a worker drawing its batch (inside its step).
  double input_ms = 0;
  double compute_ms = 0;  ///< a replica's step outside input, communication and waiting
  /// Mirrored: in all_reduce, broadcast and all_gather (category collective). Parameter server:
  /// pushing updates to the shards and (sync) offering gradients to the accumulator.
  double communication_ms = 0;
  double barrier_ms = 0;  ///< in merge_call: waiting for the other replicas, then the merge
  /// Parameter server: waiting for parameters, i.e. pulling them from the shards and (sync)
  /// waiting for a token until the previous update is on the shards.
  double parameter_wait_ms = 0;
  /// The time a chunk of steps takes beyond the mean replica's busy time: replicas waiting for
  /// the slowest one at the end of the chunk, and the hand-off to the replicas.
  double wait_ms = 0;
  double step_ms = 0;  ///< the chunk's wall time per step
  /// Bytes one replica moves per step. Mirrored: what it hands to collectives and merge calls
  /// (measured at the ReplicaContext: what the strategy reduces; the algorithm decides the bytes
  /// on the wire). Parameter server: the variables pulled plus the gradients pushed to the
  /// shards or offered to the sync accumulator (measured at the worker, train/ps_trainer).
  double bytes_per_step = 0;
  int64_t steps = 0;  ///< steps the timeline covers
};

/// Reads a timeline written by `--timeline` / RunOptions::timeline_path.
StepBreakdown read_step_breakdown(const std::string& timeline_path);

/// Decides when a stopping rule triggers, one logged row at a time.
class StopRuleTracker {
 public:
  explicit StopRuleTracker(const StopRule& rule) : rule_(rule) {}
  /// Takes the next logged row (step, loss, steps/s); true once the rule has triggered. Values
  /// are rounded as metrics.csv writes them, so a live run and its file decide alike.
  bool add(int64_t step, double loss, double steps_per_s);
  /// "target loss 0.3 reached at step 120", "wall time 30 s reached at step 400", or "".
  const std::string& reason() const { return reason_; }

 private:
  StopRule rule_;
  int64_t last_step_ = 0;
  double seconds_ = 0;
  std::string reason_;
};

}  // namespace troupe::experiment
