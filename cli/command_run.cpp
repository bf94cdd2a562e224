// `troupe run [FILE]`: train an experiment (the embedded default without FILE) in this process.
// SIGINT / SIGTERM stop after the current chunk of steps, write a checkpoint and exit 130 / 143
// with the command that resumes (cli/run_interrupts.hpp); `--resume` continues from it.
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/run_training.hpp"
#include "coordinator/runtime.hpp"

namespace po = boost::program_options;

namespace troupe::cli {

int run_run_command(const std::vector<std::string>& args) {
  po::options_description options("troupe run options");
  RunCommandOptions run;
  add_run_options(options, run);
  int64_t stop_grace_ms = kDefaultStopGrace.count();
  options.add_options()("stop-grace-ms", po::value(&stop_grace_ms)->default_value(stop_grace_ms),
                        "after SIGINT / SIGTERM, how long a run waiting for input or setting up "
                        "may take to stop with a checkpoint before it is abandoned");
  po::variables_map vm;
  if (!parse_command_line(
          "troupe run [FILE] [--resume | --overwrite] [--timeline trace.json] [--dir DIR]", args,
          options, vm, {"file"}))
    return 0;
  check_run_options(run);
  if (stop_grace_ms < 0)
    throw po::error("--stop-grace-ms must be >= 0, got " + std::to_string(stop_grace_ms));
  run.stop_grace = std::chrono::milliseconds(stop_grace_ms);
  Runtime runtime(ActorSystemOptions::for_replica_training());
  return train_from_command_line("troupe run", run, runtime, nullptr);
}

}  // namespace troupe::cli
