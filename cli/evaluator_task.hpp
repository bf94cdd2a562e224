#pragma once
// The evaluator role of `troupe server` (TF_CONFIG task type "evaluator") and `troupe evaluate`:
// the side-car evaluator of experiment/run/evaluator.hpp on the run directory the chief writes,
// and what `troupe launch --evaluator` needs to start one.

#include <string>
#include <vector>

#include "cli/run_training.hpp"

namespace troupe {
struct ClusterCredentials;
}

namespace troupe::cli {

/// Evaluates the checkpoints of the experiment of `o` (run directory: --dir, else
/// train.checkpoint_dir, else runs/<name>), printing as `command`. Unless `once`, keeps polling
/// until the last training step (--steps, else train.steps) is evaluated; with `once`, evaluates
/// what is there and returns. SIGINT / SIGTERM stop it between checkpoints (exit 130 / 143).
/// --resume, --overwrite and --timeline belong to training tasks and are refused.
int run_evaluator_task(const std::string& command, const RunCommandOptions& o, bool once);

/// `troupe launch --evaluator`: the `troupe server` arguments of the evaluator task (the run's
/// file, --dir and --steps, and the cluster's credentials as every task gets them).
std::vector<std::string> evaluator_server_args(const RunCommandOptions& run,
                                               const ClusterCredentials& credentials,
                                               const std::string& node);

/// `troupe launch --evaluator`, before any task starts: a fresh run (no --resume) refuses an
/// earlier evaluation's `<run dir>/eval/metrics.csv` unless --overwrite, which removes it with
/// the earlier run's checkpoints (so the evaluator never sees the old checkpoints).
void prepare_evaluator_run_directory(const std::string& run_dir, const RunCommandOptions& run);

}  // namespace troupe::cli
