#include "experiment/compare/compare_runner.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiment/compare/compare_report.hpp"
#include "experiment/compare/variant_metrics.hpp"
#include "experiment/run/experiment_runner.hpp"
#include "experiment/run/progress.hpp"
#include "net/child_process.hpp"

namespace fs = std::filesystem;

namespace troupe::experiment {
namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw unavailable("cannot write " + path);
}

// Why the variant stopped when no rule triggered early.
std::string ran_all_steps(const CompareVariant& v) {
  return "ran all " + std::to_string(v.experiment.train().steps()) + " steps";
}

// One worker: run_experiment in this process; the rule is checked after every logged step.
// Returns the reason it stopped, or "" when interrupted by options.stop.
std::string run_in_process(caf::actor_system& system, const CompareSpec& spec,
                           const CompareVariant& v, const std::string& dir,
                           const CompareOptions& options) {
  StopRuleTracker tracker(spec.stop);
  RunOptions run;
  run.run_dir = dir;
  run.overwrite = true;  // an unfinished variant restarts from step 0
  run.timeline_path = dir + "/timeline.json";
  run.out = options.out;
  run.tty = options.tty;
  run.stop = options.stop;
  run.phase = options.phase;
  run.stop_after_log = [&tracker](const ProgressPoint& p) {
    return tracker.add(p.step, p.loss, p.steps_per_s);
  };
  RunSummary summary = run_experiment(system, v.experiment, run);
  if (!tracker.reason().empty()) return tracker.reason();
  if (summary.interrupted) return "";
  return ran_all_steps(v);
}

// Several workers: `troupe launch -n N` on the variant's own experiment file. The rule is
// checked on the chief's metrics.csv as it grows; when it triggers the launcher gets SIGINT,
// which stops every worker at the same step with a checkpoint (a step or a few after the log
// that triggered it: the report cuts the curve there).
std::string run_launched(const CompareSpec& spec, size_t index, const std::string& dir,
                         const CompareOptions& options) {
  const CompareVariant& v = spec.variants[index];
  if (options.troupe_binary.empty())
    throw failed_precondition("it needs " + std::to_string(v.workers) +
                              " worker processes, but no troupe executable was given to "
                              "launch them");
  fs::create_directories(dir);
  const std::string file = dir + "/experiment.yaml";
  write_text(file, variant_experiment_yaml(spec, index));
  ChildProcess launcher(options.troupe_binary,
                        {"launch", "-n", std::to_string(v.workers), file, "--dir", dir,
                         "--overwrite", "--timeline", dir + "/timeline.json"},
                        {}, {/*own_process_group=*/true, /*parent_death_signal=*/SIGKILL});
  // A terminal's Ctrl-C reaches only this process, which forwards it once (a second SIGINT
  // would make the launcher kill its workers without a checkpoint). Nothing in this process
  // waits for input meanwhile, so the interrupt handler must not give the run up.
  if (options.phase) options.phase->store(RunPhase::step);
  const std::string csv = dir + "/metrics.csv";
  StopRuleTracker tracker(spec.stop);
  size_t rows_seen = 0;
  bool signalled = false;
  auto forward = [&] {
    while (auto line = launcher.take_out_line()) std::fprintf(options.out, "%s\n", line->c_str());
    while (auto line = launcher.take_err_line()) std::fprintf(options.out, "%s\n", line->c_str());
    std::fflush(options.out);
  };
  while (!launcher.output_closed()) {
    launcher.pump_for(std::chrono::milliseconds(200));
    forward();
    if (signalled) continue;
    if (options.stop && options.stop->load()) {
      launcher.signal(SIGINT);
      signalled = true;
      continue;
    }
    if (!fs::exists(csv)) continue;
    auto rows = read_metrics_csv(csv);
    for (; rows_seen < rows.size(); ++rows_seen)
      if (tracker.add(rows[rows_seen].step, rows[rows_seen].loss, rows[rows_seen].steps_per_s)) {
        launcher.signal(SIGINT);
        signalled = true;
        break;
      }
  }
  auto code = launcher.wait(std::chrono::minutes(2));
  forward();
  if (!code || (*code != 0 && !(signalled && *code == 130)))
    throw unavailable("troupe launch -n " + std::to_string(v.workers) + " " + file + " failed (" +
                      (code ? "exit " + std::to_string(*code) : std::string("no exit")) + ")");
  if (!tracker.reason().empty()) return tracker.reason();
  if (signalled) return "";
  return ran_all_steps(v);
}

}  // namespace

std::string variant_run_dir(const std::string& out_dir, const std::string& variant) {
  return (fs::path(out_dir) / "runs" / variant).string();
}

std::string variant_done_file(const std::string& out_dir, const std::string& variant) {
  return variant_run_dir(out_dir, variant) + "/compare_done";
}

void check_compare_directory(const std::string& out_dir, bool resume) {
  const fs::path runs = fs::path(out_dir) / "runs";
  if (!resume && fs::exists(runs) && !fs::is_empty(runs))
    throw failed_precondition("'" + out_dir + "' already holds a comparison (" + runs.string() +
                              "): pass --resume to finish it, or --out to write elsewhere");
}

CompareOutcome run_comparison(caf::actor_system& system, const CompareSpec& spec,
                              const CompareOptions& options) {
  check_compare_directory(options.out_dir, options.resume);
  fs::create_directories(fs::path(options.out_dir) / "runs");
  CompareOutcome outcome;
  for (size_t i = 0; i < spec.variants.size(); ++i) {
    const CompareVariant& v = spec.variants[i];
    const std::string dir = variant_run_dir(options.out_dir, v.name);
    const std::string done = variant_done_file(options.out_dir, v.name);
    if (fs::exists(done)) {
      std::fprintf(options.out, "troupe compare: variant %zu/%zu \"%s\" already finished\n", i + 1,
                   spec.variants.size(), v.name.c_str());
      outcome.skipped.push_back(v.name);
      continue;
    }
    // A parameter-server variant's workers are threads of this process, beside its ps shards.
    const auto& ps = v.experiment.strategy().parameter_server();
    const bool is_ps = v.experiment.strategy().kind() == "parameter_server";
    std::fprintf(
        options.out, "troupe compare: variant %zu/%zu \"%s\" (%s, %d worker(s)%s)\n", i + 1,
        spec.variants.size(), v.name.c_str(), v.experiment.strategy().kind().c_str(),
        is_ps ? int(ps.workers()) : v.workers,
        is_ps ? (", " + std::to_string(ps.num_ps()) + " ps, in this process").c_str() : "");
    std::fflush(options.out);
    std::string reason;
    try {
      reason = v.workers > 1 ? run_launched(spec, i, dir, options)
                             : run_in_process(system, spec, v, dir, options);
    } catch (const Error& e) {
      throw Error(e.code(), "variant \"" + v.name + "\": " + e.what());
    }
    if (reason.empty()) {
      outcome.interrupted = true;
      return outcome;
    }
    write_text(done, reason + "\n");
    std::fprintf(options.out, "troupe compare: variant \"%s\": %s\n", v.name.c_str(),
                 reason.c_str());
    outcome.ran.push_back(v.name);
  }
  outcome.report = write_compare_report(spec, options.out_dir);
  return outcome;
}

}  // namespace troupe::experiment
