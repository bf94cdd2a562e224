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
/// averaged over the replicas of the process that wrote it.
struct StepBreakdown {
  double input_ms = 0;          ///< the coordinator waiting for the next batches ("get_next")
  double compute_ms = 0;        ///< a replica's step outside collectives and merge calls
  double communication_ms = 0;  ///< in all_reduce, broadcast and all_gather (category collective)
  double barrier_ms = 0;        ///< in merge_call: waiting for the other replicas, then the merge
  /// The time a chunk of steps takes beyond the mean replica's busy time: replicas waiting for
  /// the slowest one at the end of the chunk, and the hand-off to the replicas.
  double wait_ms = 0;
  double step_ms = 0;  ///< the chunk's wall time per step
  /// Bytes one replica hands to collectives and merge calls per step (measured at the
  /// ReplicaContext: what the strategy reduces; the algorithm decides the bytes on the wire).
  double collective_bytes = 0;
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
