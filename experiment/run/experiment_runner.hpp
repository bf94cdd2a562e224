#pragma once
// `troupe run`: trains an experiment end to end on one process — strategy, model, optimizer,
// distributed input — with progress, metrics.csv, TensorBoard events, an optional Chrome trace,
// checkpoints every `checkpoint_every` steps and at the end (also when stopped), and exact resume.

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "coordinator/collectives/worker_collective.hpp"
#include "messages/proto/experiment.pb.h"

namespace troupe {

class ModelRegistry;
struct ProgressPoint;
struct PsRemoteCluster;

/// What run_experiment is doing, published for a signal handler that must decide whether the
/// run will reach a consistent stop soon (a step or checkpoint in progress) or may be blocked for
/// good (waiting on an input that never comes) and is to be abandoned.
enum class RunPhase : int { setup, waiting_for_input, step, checkpoint, done };

/// How to run.
struct RunOptions {
  bool resume = false;        ///< continue from the newest checkpoint in the run directory
  bool overwrite = false;     ///< delete an earlier run's checkpoints, metrics, events first
  std::string run_dir;        ///< overrides train.checkpoint_dir (default runs/<name>)
  std::string timeline_path;  ///< write a Chrome trace here when set
  int64_t steps = 0;          ///< overrides train.steps when > 0
  std::FILE* out = stdout;    ///< progress and summary
  bool tty = false;           ///< progress bar instead of log lines
  const std::atomic<bool>* stop = nullptr;  ///< set asynchronously (Ctrl-C): checkpoint and stop
  std::atomic<RunPhase>* phase = nullptr;   ///< when set, kept up to date by the run
  /// Models and step functions by name (model.kind, train.step); nullptr: the built-ins. A
  /// program registers its own with add_model/add_step and points this at its registry.
  const ModelRegistry* registry = nullptr;
  /// The cluster this process is a worker of (`troupe server`); null: every replica runs here.
  /// The chief (worker 0) owns the run directory; the others write their checkpoints, metrics
  /// and events to `<run directory>.workertemp_<index>` and remove it at the end.
  std::shared_ptr<WorkerCollective> workers;
  /// Called after every logged step with what was logged; true stops the run there (checkpoint
  /// written, summary.interrupted set), as `troupe compare`'s wall-time and target-loss rules do.
  std::function<bool(const ProgressPoint&)> stop_after_log;
  /// A parameter_server run across processes (experiment/run/ps_experiment_runner.hpp): the
  /// ps tasks' shards and the workers' step hosts this process coordinates; null: in-process.
  std::shared_ptr<const PsRemoteCluster> ps_cluster;
};

/// What a run did.
struct RunSummary {
  int64_t first_step = 0;  ///< 0, or the step resumed from
  int64_t last_step = 0;   ///< steps completed in total
  bool interrupted = false;
  int64_t skipped_steps = 0;  ///< steps not applied for a non-finite loss (train.on_nan: skip_step)
  double final_loss = 0;      ///< mean loss over the last logged window
  double final_accuracy = -1;
  double examples_per_s = 0;  ///< whole run: setup after the strategy, every step, last checkpoint
  /// Steady state: examples/s of the steps after the first logged window, up to the last step
  /// (no first-epoch input caching, warm-up or final checkpoint in it); 0 when the run logged
  /// only one window.
  double steady_examples_per_s = 0;
  int64_t steady_from_step = 0;  ///< the step the steady-state figure counts from
  std::string run_dir, checkpoint, events_file, metrics_csv, timeline;
};

/// Runs `experiment` on `system`; throws troupe::Error naming the problem (bad config, missing
/// checkpoint, corrupt checkpoint — nothing is half-loaded; a fresh run in a directory holding
/// an earlier run's files without `overwrite`, before anything is written). Each step calls the
/// registry's `train.step` function with (features, labels, global_batch): this replica's rows and
/// the global batch size as an int64 scalar, so losses average over the whole batch even when the
/// replicas' shares differ. Steps run `train.steps_per_execution` at a time (default 8) in one
/// strategy.run, each replica calling the step once per batch in order; a chunk stops short at
/// log and checkpoint steps, so those happen at the same steps whatever the setting.
RunSummary run_experiment(caf::actor_system& system, const proto::Experiment& experiment,
                          const RunOptions& options);

}  // namespace troupe
