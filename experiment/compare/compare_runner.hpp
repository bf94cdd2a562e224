#pragma once
// `troupe compare`: runs a comparison's variants one after another into one output directory and
// writes its report. A variant with one worker trains in this process (run_experiment); one with
// several is a local cluster started through `troupe launch -n N`. Every variant has its own run
// directory <out>/runs/<variant> (checkpoints, metrics.csv, TensorBoard events, timeline.json);
// a finished one gets a `compare_done` file naming why it stopped, and a resumed comparison skips
// those and restarts the others from step 0 (a restarted variant's curve is one run, not two
// pieces).

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "experiment/compare/compare_spec.hpp"
#include "experiment/run/experiment_runner.hpp"

namespace troupe::experiment {

/// How to run a comparison.
struct CompareOptions {
  std::string out_dir;                      ///< where runs/ and the report go
  bool resume = false;                      ///< continue a comparison already in out_dir
  std::FILE* out = stdout;                  ///< progress
  bool tty = false;                         ///< progress bars instead of log lines
  std::string troupe_binary;                ///< the `troupe` executable, for multi-worker variants
  const std::atomic<bool>* stop = nullptr;  ///< Ctrl-C: stop the running variant, no report
  std::atomic<RunPhase>* phase = nullptr;   ///< RunOptions::phase of the in-process variants
};

/// What a comparison did.
struct CompareOutcome {
  std::vector<std::string> ran, skipped;  ///< variant names
  bool interrupted = false;
  std::string report;  ///< the report page (empty when interrupted)
};

/// The run directory of `variant` under `out_dir`.
std::string variant_run_dir(const std::string& out_dir, const std::string& variant);
/// The file that marks a variant finished (it holds the reason it stopped).
std::string variant_done_file(const std::string& out_dir, const std::string& variant);

/// Refuses (failed_precondition) a fresh comparison (no resume) in an out_dir that already holds
/// runs, naming the directory and the flags that would go on.
void check_compare_directory(const std::string& out_dir, bool resume);

/// Runs every variant not yet finished, then writes the report. Calls check_compare_directory
/// first.
CompareOutcome run_comparison(caf::actor_system& system, const CompareSpec& spec,
                              const CompareOptions& options);

}  // namespace troupe::experiment
