#include "cli/run_training.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "cli/resume_command.hpp"
#include "cli/run_interrupts.hpp"
#include "coordinator/runtime.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/run/experiment_runner.hpp"
#include "experiment/run/run_directory.hpp"

namespace po = boost::program_options;

namespace troupe::cli {
namespace {

const char* signal_name(int sig) { return sig == SIGTERM ? "SIGTERM" : "SIGINT"; }

}  // namespace

void add_run_options(po::options_description& options, RunCommandOptions& o) {
  options.add_options()("file", po::value(&o.file),
                        "experiment YAML (default: the embedded MLP demo)")(
      "resume", po::bool_switch(&o.resume), "continue from the newest checkpoint of the run")(
      "overwrite", po::bool_switch(&o.overwrite),
      "delete an earlier run's checkpoints, metrics and events in the run directory first")(
      "timeline", po::value(&o.timeline), "write a Chrome trace (chrome://tracing) to this file")(
      "dir", po::value(&o.dir), "run directory (default: train.checkpoint_dir or runs/<name>)")(
      "steps", po::value(&o.steps)->default_value(0), "override train.steps");
}

void check_run_options(const RunCommandOptions& o) {
  if (o.steps < 0) throw po::error("--steps must be >= 0");
  if (o.resume && o.overwrite)
    throw po::error(
        "--resume and --overwrite contradict each other (continue the run, or delete it)");
}

int train_from_command_line(const std::string& command, const RunCommandOptions& o,
                            Runtime& runtime, std::shared_ptr<WorkerCollective> workers,
                            std::shared_ptr<const PsRemoteCluster> ps_cluster) {
  proto::Experiment experiment =
      o.file.empty() ? experiment::default_experiment() : experiment::load_experiment(o.file);
  const std::string run_dir = run_directory(experiment, o.dir);
  const bool chief = !workers || workers->worker_index() == 0;
  if (chief) {
    try {
      check_run_directory(run_dir, o.resume, o.overwrite);  // refused before anything is written
    } catch (const Error& e) {
      throw po::error(e.what());  // a usage error: exit 2
    }
  }
  const std::string resume_with = resume_command(o.file, run_dir, o.steps);
  RunInterrupts interrupts(command, o.stop_grace, [&](int sig, RunPhase phase) {
    std::fprintf(stderr,
                 "%s: interrupted by %s while %s; gave up after %g s without a new "
                 "checkpoint\n",
                 command.c_str(), signal_name(sig),
                 phase == RunPhase::waiting_for_input ? "waiting for input (the input pipeline "
                                                        "produced no batch)"
                                                      : "setting up the run",
                 double(o.stop_grace.count()) / 1000);
    if (auto latest = checkpoint::latest_checkpoint(run_dir))
      std::printf("  checkpoint:  %s\nresume with: %s\n", latest->c_str(), resume_with.c_str());
  });
  RunOptions run;
  run.resume = o.resume;
  run.overwrite = o.overwrite;
  run.run_dir = run_dir;
  run.timeline_path = o.timeline;
  run.steps = o.steps;
  run.tty = ::isatty(STDOUT_FILENO) != 0;
  run.stop = interrupts.stop();
  run.phase = interrupts.phase();
  run.workers = std::move(workers);
  run.ps_cluster = std::move(ps_cluster);
  std::printf("%s: %s (%s, %d device(s): ", command.c_str(), experiment.name().c_str(),
              experiment.strategy().kind().c_str(), experiment.strategy().devices_size());
  for (int i = 0; i < experiment.strategy().devices_size(); ++i)
    std::printf("%s%s", i ? ", " : "", experiment.strategy().devices(i).c_str());
  std::printf(")\n");
  std::fflush(stdout);  // a pipe is block-buffered: whoever watches should see the run start
  auto summary = run_experiment(runtime.system(), experiment, run);
  std::printf("%s at step %lld: loss %.6f", summary.interrupted ? "stopped" : "finished",
              static_cast<long long>(summary.last_step), summary.final_loss);
  if (summary.final_accuracy >= 0) std::printf(", accuracy %.2f%%", 100 * summary.final_accuracy);
  std::printf(", %.0f examples/s", summary.examples_per_s);
  // The steady state leaves out the first window (input caching, warm-up) and the checkpoint.
  if (summary.steady_examples_per_s > 0)
    std::printf(" (%.0f examples/s after step %lld)", summary.steady_examples_per_s,
                static_cast<long long>(summary.steady_from_step));
  std::printf("\n");
  if (chief) {
    std::printf("  checkpoint:  %s\n  metrics:     %s\n  tensorboard: tensorboard --logdir %s\n",
                summary.checkpoint.c_str(), summary.metrics_csv.c_str(), summary.run_dir.c_str());
    if (!summary.timeline.empty()) std::printf("  timeline:    %s\n", summary.timeline.c_str());
  } else {
    std::printf("  the chief writes checkpoints and metrics to %s\n", summary.run_dir.c_str());
  }
  if (!summary.interrupted) {
    std::fflush(stdout);
    return 0;
  }
  std::printf("interrupted by %s\nresume with: %s\n", signal_name(interrupts.signal()),
              resume_with.c_str());
  std::fflush(stdout);
  return exit_code_for_signal(interrupts.signal());
}

}  // namespace troupe::cli
