#include "cli/evaluator_task.hpp"

#include <csignal>
#include <cstdio>
#include <filesystem>

#include "experiment/experiment_file.hpp"
#include "experiment/run/evaluator.hpp"
#include "experiment/run/run_directory.hpp"
#include "net/cluster_credentials.hpp"

namespace po = boost::program_options;

namespace troupe::cli {
namespace {

// Set by SIGINT / SIGTERM (lock-free atomics are async-signal-safe); the evaluator checks it
// between checkpoints and between polls.
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void on_evaluator_signal(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  g_stop.store(true);
}

}  // namespace

int run_evaluator_task(const std::string& command, const RunCommandOptions& o, bool once) {
  if (o.resume || o.overwrite || !o.timeline.empty())
    throw po::error(std::string(o.resume      ? "--resume"
                                : o.overwrite ? "--overwrite"
                                              : "--timeline") +
                    " applies to training tasks, not to the evaluator (it evaluates the "
                    "checkpoints the chief writes)");
  proto::Experiment experiment =
      o.file.empty() ? experiment::default_experiment() : experiment::load_experiment(o.file);
  if (!experiment.has_eval())
    throw po::error((o.file.empty() ? std::string("the embedded demo") : o.file) +
                    " has no eval section: the evaluator needs eval.data (docs/experiments.md)");
  const std::string run_dir = run_directory(experiment, o.dir);
  const int64_t final_step = o.steps > 0 ? o.steps : experiment.train().steps();
  EvaluatorOptions options;
  options.run_dir = run_dir;
  Evaluator evaluator(experiment, options);
  // Before the first line: whoever waits for it may signal right after.
  if (!once) {
    std::signal(SIGINT, on_evaluator_signal);
    std::signal(SIGTERM, on_evaluator_signal);
  }
  std::printf("%s: evaluating the checkpoints of %s on %s eval examples (%s)%s\n", command.c_str(),
              run_dir.c_str(), experiment.eval().data().kind().c_str(),
              evaluator.metrics_csv().c_str(),
              once ? "" : (" until step " + std::to_string(final_step)).c_str());
  std::fflush(stdout);
  if (once) {
    const auto done = evaluator.evaluate_new();
    std::printf("%s: evaluated %zu checkpoint(s)\n", command.c_str(), done.size());
    return 0;
  }
  const int64_t count = run_evaluator(evaluator, final_step, &g_stop);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (const int sig = g_signal.load()) {
    std::printf("%s: stopped by signal %d after %lld evaluation(s)\n", command.c_str(), sig,
                static_cast<long long>(count));
    std::fflush(stdout);
    return 128 + sig;
  }
  std::printf("%s: evaluated %lld checkpoint(s), the last at step %lld\n  eval metrics: %s\n",
              command.c_str(), static_cast<long long>(count), static_cast<long long>(final_step),
              evaluator.metrics_csv().c_str());
  std::fflush(stdout);
  return 0;
}

std::vector<std::string> evaluator_server_args(const RunCommandOptions& run,
                                               const ClusterCredentials& credentials,
                                               const std::string& node) {
  std::vector<std::string> args{"server"};
  if (!run.file.empty()) args.push_back(run.file);
  if (!run.dir.empty()) args.insert(args.end(), {"--dir", run.dir});
  if (run.steps > 0) args.insert(args.end(), {"--steps", std::to_string(run.steps)});
  auto proof = credential_args(credentials, node);
  args.insert(args.end(), proof.begin(), proof.end());
  return args;
}

void prepare_evaluator_run_directory(const std::string& run_dir, const RunCommandOptions& run) {
  const std::filesystem::path eval_dir = std::filesystem::path(run_dir) / "eval";
  if (run.resume) return;  // the evaluator continues where its metrics.csv ends
  if (run.overwrite) {
    remove_earlier_run(run_dir);  // before the evaluator could see the old checkpoints
    std::filesystem::remove_all(eval_dir);
    return;
  }
  if (std::filesystem::exists(eval_dir / "metrics.csv"))
    throw po::error("run directory " + run_dir + " holds an earlier evaluation (" +
                    (eval_dir / "metrics.csv").string() +
                    "); continue the run with --resume, or delete it with --overwrite");
}

}  // namespace troupe::cli
